/**
 * What the console reads from `config.json` next to its page: where the API is and how users sign
 * in. Locally the platform answers it; in the cloud the deployment writes it into the bucket.
 */
export interface ConsoleConfig {
  /** The API's base URL; absent when the console is served by the API's own origin (locally). */
  readonly apiUrl?: string;
  readonly signIn: TokenSignIn | CognitoSignIn;
}

/** Paste a token (`svc_ut_...`); `hint` says where to find one. */
export interface TokenSignIn {
  readonly kind: 'token';
  readonly hint?: string;
}

/** E-mail and password against the stack's Cognito user pool (USER_PASSWORD_AUTH); its ID token is the bearer. */
export interface CognitoSignIn {
  readonly kind: 'cognito';
  readonly region: string;
  readonly userPoolClientId: string;
  /** Cognito's endpoint; its regional one by default (tests point it at a stand-in). */
  readonly endpoint?: string;
}

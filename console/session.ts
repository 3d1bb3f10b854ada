import type { CognitoSignIn } from '../lib/console/console-config.ts';

const KEY = 'agent-platform-console.token';

/**
 * The signed-in user's bearer token. Kept in this tab only (sessionStorage) unless the user asks to
 * stay signed in on this device (localStorage); never in the URL, never in a cookie, so no other
 * site can make the browser send it.
 */
export function storedToken(): string | null {
  return sessionStorage.getItem(KEY) ?? localStorage.getItem(KEY);
}

export function storeToken(token: string, remember: boolean): void {
  forgetToken();
  (remember ? localStorage : sessionStorage).setItem(KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
  localStorage.removeItem(KEY);
}

/** A step of Cognito sign-in: done with an ID token, or a challenge the user must answer. */
export type CognitoStep =
  | { readonly kind: 'done'; readonly idToken: string }
  | { readonly kind: 'new-password'; readonly session: string }
  | { readonly kind: 'mfa'; readonly session: string };

interface CognitoAnswer {
  readonly AuthenticationResult?: { readonly IdToken?: string };
  readonly ChallengeName?: string;
  readonly Session?: string;
  readonly message?: string;
  readonly __type?: string;
}

async function cognito(config: CognitoSignIn, target: 'InitiateAuth' | 'RespondToAuthChallenge', body: object): Promise<CognitoStep> {
  const response = await fetch(config.endpoint ?? `https://cognito-idp.${config.region}.amazonaws.com/`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': `AWSCognitoIdentityProviderService.${target}` },
    body: JSON.stringify(body),
  });
  const answer = (await response.json().catch(() => ({}))) as CognitoAnswer;
  if (!response.ok) throw new Error(answer.message ?? `Sign-in failed (${answer.__type ?? response.status})`);
  const idToken = answer.AuthenticationResult?.IdToken;
  if (idToken !== undefined) return { kind: 'done', idToken };
  if (answer.ChallengeName === 'NEW_PASSWORD_REQUIRED' && answer.Session) return { kind: 'new-password', session: answer.Session };
  if (answer.ChallengeName === 'SOFTWARE_TOKEN_MFA' && answer.Session) return { kind: 'mfa', session: answer.Session };
  throw new Error(`Sign-in needs a step the console does not support (${answer.ChallengeName ?? 'no token returned'}); use the CLI's login`);
}

/** E-mail and password against the stack's user pool (USER_PASSWORD_AUTH, as the CLI's `login`). */
export function signInWithPassword(config: CognitoSignIn, email: string, password: string): Promise<CognitoStep> {
  return cognito(config, 'InitiateAuth', {
    AuthFlow: 'USER_PASSWORD_AUTH',
    ClientId: config.userPoolClientId,
    AuthParameters: { USERNAME: email, PASSWORD: password },
  });
}

/** Answers a challenge: the new password Cognito asks for after an invitation, or a TOTP code. */
export function answerChallenge(config: CognitoSignIn, step: Exclude<CognitoStep, { kind: 'done' }>, email: string, answer: string): Promise<CognitoStep> {
  const [name, responses] =
    step.kind === 'new-password'
      ? ['NEW_PASSWORD_REQUIRED', { USERNAME: email, NEW_PASSWORD: answer }]
      : ['SOFTWARE_TOKEN_MFA', { USERNAME: email, SOFTWARE_TOKEN_MFA_CODE: answer }];
  return cognito(config, 'RespondToAuthChallenge', {
    ChallengeName: name,
    ClientId: config.userPoolClientId,
    Session: step.session,
    ChallengeResponses: responses,
  });
}

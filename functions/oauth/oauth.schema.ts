import * as z from 'zod';

/** The SPEC names three neutral providers; which real service each one is comes from configuration. */
export const OAUTH_PROVIDERS = ['provider_a', 'provider_b', 'provider_c'] as const;
export type OAuthProvider = (typeof OAUTH_PROVIDERS)[number];

export const providerParams = z.object({
  provider: z.enum(OAUTH_PROVIDERS, { error: `must be one of ${OAUTH_PROVIDERS.join(', ')}` }),
});

/**
 * What the provider appends to the redirect URI (RFC 6749 4.1.2 and 4.1.2.1). Everything is
 * optional here because a refusal carries `error` instead of `code`; the service decides what is
 * missing. Other parameters providers add (`iss`, `scope`, ...) are ignored.
 */
export const callbackQuery = z.object({
  code: z.string().min(1, 'must not be empty').max(4096, 'is too long').optional(),
  state: z.string().min(1, 'must not be empty').max(256, 'is too long').optional(),
  error: z.string().optional(),
  error_description: z.string().optional(),
});
export type CallbackQuery = z.infer<typeof callbackQuery>;

/**
 * An authorization that was started and not yet completed. The callback finds it by `state` and
 * deletes it in the same call, so it is used at most once.
 */
export interface PendingAuthorization {
  readonly state: string;
  readonly userId: string;
  readonly provider: OAuthProvider;
  /** PKCE verifier (RFC 7636); only its S256 challenge left the platform. */
  readonly codeVerifier: string;
  /** Sent again with the code exchange, which must repeat the authorize request's value exactly. */
  readonly redirectUri: string;
  /** Epoch milliseconds. */
  readonly createdAt: number;
  /** Epoch seconds: the table's TTL attribute. */
  readonly expiresAt: number;
}

/** Name of the key the refresh token is stored under, next to the access token's `provider`. */
export function refreshKeyName(provider: OAuthProvider): string {
  return `${provider}_refresh`;
}

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types. Never a token.

export const authorizationStartedResponse = z.object({
  provider: z.string(),
  authorizationUrl: z.string().describe("The provider's page to send the user to; it comes back to `redirectUri`"),
  state: z.string().describe('Single use; the callback must carry it back'),
  expiresAt: z.number().describe('Milliseconds since the epoch; the callback must come before it'),
  redirectUri: z.string().describe('The callback URL, which operators register at the provider'),
});

export const authorizationCompletedResponse = z.object({
  provider: z.string(),
  stored: z.array(z.string()).describe('Names of the keys the tokens were stored under (`provider`, and `provider_refresh` when a refresh token came)'),
  expiresIn: z.number().optional().describe('Seconds the access token is valid, as the provider said'),
  scope: z.string().optional().describe('The scopes the provider granted'),
});

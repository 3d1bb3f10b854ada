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

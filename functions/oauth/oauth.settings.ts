import * as z from 'zod';

/** OAuth endpoints are fetched or opened in a browser, so only web URLs make sense. */
const optionalWebUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional();

/** The oauth area's settings (its module's `settings`), read by oauth.providers.ts. */
export const oauthSettings = {
  /**
   * OAuth providers (SPEC 4.13). One counts as configured when its authorize URL, token URL and
   * client id are set; the secret is optional (public clients rely on PKCE alone) and comes either
   * as the value (`_CLIENT_SECRET`, local use) or as the ARN of a Secrets Manager secret holding it
   * (`_CLIENT_SECRET_ARN`, cloud only; read when first needed), never both; scopes are space or
   * comma separated.
   */
  OAUTH_PROVIDER_A_AUTHORIZE_URL: optionalWebUrl,
  OAUTH_PROVIDER_A_TOKEN_URL: optionalWebUrl,
  OAUTH_PROVIDER_A_CLIENT_ID: z.string().min(1).optional(),
  OAUTH_PROVIDER_A_CLIENT_SECRET: z.string().min(1).optional(),
  OAUTH_PROVIDER_A_CLIENT_SECRET_ARN: z.string().min(1).optional(),
  OAUTH_PROVIDER_A_SCOPES: z.string().optional(),
  OAUTH_PROVIDER_B_AUTHORIZE_URL: optionalWebUrl,
  OAUTH_PROVIDER_B_TOKEN_URL: optionalWebUrl,
  OAUTH_PROVIDER_B_CLIENT_ID: z.string().min(1).optional(),
  OAUTH_PROVIDER_B_CLIENT_SECRET: z.string().min(1).optional(),
  OAUTH_PROVIDER_B_CLIENT_SECRET_ARN: z.string().min(1).optional(),
  OAUTH_PROVIDER_B_SCOPES: z.string().optional(),
  OAUTH_PROVIDER_C_AUTHORIZE_URL: optionalWebUrl,
  OAUTH_PROVIDER_C_TOKEN_URL: optionalWebUrl,
  OAUTH_PROVIDER_C_CLIENT_ID: z.string().min(1).optional(),
  OAUTH_PROVIDER_C_CLIENT_SECRET: z.string().min(1).optional(),
  OAUTH_PROVIDER_C_CLIENT_SECRET_ARN: z.string().min(1).optional(),
  OAUTH_PROVIDER_C_SCOPES: z.string().optional(),
};

import * as z from 'zod';

/** OAuth endpoints are fetched or opened in a browser, so only web URLs make sense. */
const optionalWebUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' }).optional();

/**
 * What each provider setting means, the same for providers A, B and C, so the configuration
 * reference shows each as one row (core/setting-meta.ts).
 */
const about = {
  AUTHORIZE_URL: {
    description:
      "An OAuth provider's (SPEC 4.13; `A`, `B` or `C`) authorization endpoint, http(s). A provider counts as configured when its authorize URL, token URL and client id are set",
    deployOption: 'oauthProviders',
  },
  TOKEN_URL: { description: "An OAuth provider's token endpoint, http(s)", deployOption: 'oauthProviders' },
  CLIENT_ID: { description: "The platform's client id at an OAuth provider", deployOption: 'oauthProviders' },
  CLIENT_SECRET: {
    description:
      "The platform's client secret at an OAuth provider, as the value (local use; never with `_CLIENT_SECRET_ARN`). Optional: public clients rely on PKCE alone",
  },
  CLIENT_SECRET_ARN: {
    description: "The ARN of a Secrets Manager secret holding an OAuth provider's client secret, read when first needed (cloud; never with `_CLIENT_SECRET`)",
    setBy: 'stack',
    deployOption: 'oauthProviders',
  },
  SCOPES: { description: 'The scopes asked of an OAuth provider, space or comma separated', deployOption: 'oauthProviders' },
} satisfies Record<string, z.GlobalMeta>;

/** The oauth area's settings (its module's `settings`), read by oauth.providers.ts. */
export const oauthSettings = {
  OAUTH_PROVIDER_A_AUTHORIZE_URL: optionalWebUrl.meta(about.AUTHORIZE_URL),
  OAUTH_PROVIDER_A_TOKEN_URL: optionalWebUrl.meta(about.TOKEN_URL),
  OAUTH_PROVIDER_A_CLIENT_ID: z.string().min(1).optional().meta(about.CLIENT_ID),
  OAUTH_PROVIDER_A_CLIENT_SECRET: z.string().min(1).optional().meta(about.CLIENT_SECRET),
  OAUTH_PROVIDER_A_CLIENT_SECRET_ARN: z.string().min(1).optional().meta(about.CLIENT_SECRET_ARN),
  OAUTH_PROVIDER_A_SCOPES: z.string().optional().meta(about.SCOPES),
  OAUTH_PROVIDER_B_AUTHORIZE_URL: optionalWebUrl.meta(about.AUTHORIZE_URL),
  OAUTH_PROVIDER_B_TOKEN_URL: optionalWebUrl.meta(about.TOKEN_URL),
  OAUTH_PROVIDER_B_CLIENT_ID: z.string().min(1).optional().meta(about.CLIENT_ID),
  OAUTH_PROVIDER_B_CLIENT_SECRET: z.string().min(1).optional().meta(about.CLIENT_SECRET),
  OAUTH_PROVIDER_B_CLIENT_SECRET_ARN: z.string().min(1).optional().meta(about.CLIENT_SECRET_ARN),
  OAUTH_PROVIDER_B_SCOPES: z.string().optional().meta(about.SCOPES),
  OAUTH_PROVIDER_C_AUTHORIZE_URL: optionalWebUrl.meta(about.AUTHORIZE_URL),
  OAUTH_PROVIDER_C_TOKEN_URL: optionalWebUrl.meta(about.TOKEN_URL),
  OAUTH_PROVIDER_C_CLIENT_ID: z.string().min(1).optional().meta(about.CLIENT_ID),
  OAUTH_PROVIDER_C_CLIENT_SECRET: z.string().min(1).optional().meta(about.CLIENT_SECRET),
  OAUTH_PROVIDER_C_CLIENT_SECRET_ARN: z.string().min(1).optional().meta(about.CLIENT_SECRET_ARN),
  OAUTH_PROVIDER_C_SCOPES: z.string().optional().meta(about.SCOPES),
};

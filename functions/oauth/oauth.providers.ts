import type { Config } from '../core/config.ts';
import { ValidationError } from '../core/errors.ts';
import type { OAuthProvider } from './oauth.schema.ts';

/** One provider's settings, complete enough to run the authorization code flow. */
export interface ProviderSettings {
  readonly provider: OAuthProvider;
  readonly authorizeUrl: string;
  readonly tokenUrl: string;
  readonly clientId: string;
  /** Null for a public client, which then relies on PKCE alone. */
  readonly clientSecret: string | null;
  readonly scopes: readonly string[];
}

const LETTER = { provider_a: 'A', provider_b: 'B', provider_c: 'C' } as const satisfies Record<OAuthProvider, string>;
type Setting = 'AUTHORIZE_URL' | 'TOKEN_URL' | 'CLIENT_ID' | 'CLIENT_SECRET' | 'SCOPES';
const REQUIRED: readonly Setting[] = ['AUTHORIZE_URL', 'TOKEN_URL', 'CLIENT_ID'];

function settingName(provider: OAuthProvider, setting: Setting) {
  return `OAUTH_PROVIDER_${LETTER[provider]}_${setting}` as const;
}

/**
 * The provider's settings, or a 400 naming the environment variables still missing (names only:
 * the values may be secrets, and the caller cannot set them anyway, the operator can).
 */
export function providerSettings(config: Config, provider: OAuthProvider): ProviderSettings {
  const authorizeUrl = config[settingName(provider, 'AUTHORIZE_URL')];
  const tokenUrl = config[settingName(provider, 'TOKEN_URL')];
  const clientId = config[settingName(provider, 'CLIENT_ID')];
  if (authorizeUrl === undefined || tokenUrl === undefined || clientId === undefined) {
    const missing = REQUIRED.map((s) => settingName(provider, s)).filter((name) => config[name] === undefined);
    throw new ValidationError(
      `OAuth provider ${provider} is not configured on this platform; the operator must set ${missing.join(', ')}.`,
      [],
      'OAUTH_PROVIDER_NOT_CONFIGURED',
    );
  }
  return {
    provider,
    authorizeUrl,
    tokenUrl,
    clientId,
    clientSecret: config[settingName(provider, 'CLIENT_SECRET')] ?? null,
    scopes: parseScopes(config[settingName(provider, 'SCOPES')]),
  };
}

/** Operators write scopes space or comma separated; the authorize URL wants them space separated (RFC 6749 3.3). */
export function parseScopes(raw: string | undefined): string[] {
  return [...new Set((raw ?? '').split(/[\s,]+/).filter((s) => s.length > 0))];
}

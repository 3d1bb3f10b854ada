import type { Config } from '../core/config.ts';
import { UpstreamError, ValidationError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { SecretReader } from '../core/secret-reader.ts';
import { registerSecret } from '../core/secret-scope.ts';
import type { OAuthProvider } from './oauth.schema.ts';

/** One provider's settings, complete enough to run the authorization code flow. */
export interface ProviderSettings {
  readonly provider: OAuthProvider;
  readonly authorizeUrl: string;
  readonly tokenUrl: string;
  readonly clientId: string;
  /**
   * Where the client secret comes from, read only when the code is exchanged (`readClientSecret`).
   * Null for a public client, which then relies on PKCE alone.
   */
  readonly clientSecret: ClientSecretSource | null;
  readonly scopes: readonly string[];
}

/** The secret itself (`_CLIENT_SECRET`), or the ARN of the Secrets Manager secret holding it (`_CLIENT_SECRET_ARN`). */
export type ClientSecretSource = { readonly from: 'value'; readonly value: string } | { readonly from: 'secret-store'; readonly secretId: string };

const LETTER = { provider_a: 'A', provider_b: 'B', provider_c: 'C' } as const satisfies Record<OAuthProvider, string>;
/** The settings of one provider, as `OAUTH_PROVIDER_<letter>_<setting>`. */
export const OAUTH_SETTINGS = ['AUTHORIZE_URL', 'TOKEN_URL', 'CLIENT_ID', 'CLIENT_SECRET', 'CLIENT_SECRET_ARN', 'SCOPES'] as const;
export type OAuthSetting = (typeof OAUTH_SETTINGS)[number];
const REQUIRED: readonly OAuthSetting[] = ['AUTHORIZE_URL', 'TOKEN_URL', 'CLIENT_ID'];

/** The configuration variable of one setting of `provider`; the type keeps it a key of `Config`. */
export function oauthSettingName<S extends OAuthSetting>(provider: OAuthProvider, setting: S) {
  return `OAUTH_PROVIDER_${LETTER[provider]}_${setting}` as const satisfies keyof Config;
}

/**
 * The provider's settings, or a 400 naming the environment variables still missing or in conflict
 * (names only: the values may be secrets, and the caller cannot set them anyway, the operator can).
 * `secrets` reads `_CLIENT_SECRET_ARN` secrets; without one (the local platform) a provider
 * configured that way is refused, since only the cloud wiring has a secret store.
 */
export function providerSettings(config: Config, provider: OAuthProvider, secrets: SecretReader | null): ProviderSettings {
  const name = (setting: OAuthSetting) => oauthSettingName(provider, setting);
  const authorizeUrl = config[name('AUTHORIZE_URL')];
  const tokenUrl = config[name('TOKEN_URL')];
  const clientId = config[name('CLIENT_ID')];
  const secretValue = config[name('CLIENT_SECRET')];
  const secretArn = config[name('CLIENT_SECRET_ARN')];

  let secretProblem: string | null = null;
  if (secretValue !== undefined && secretArn !== undefined) {
    secretProblem = `The operator must set only one of ${name('CLIENT_SECRET')} and ${name('CLIENT_SECRET_ARN')}.`;
  } else if (secretArn !== undefined && secrets === null) {
    secretProblem = `${name('CLIENT_SECRET_ARN')} (a Secrets Manager secret) is only supported in the cloud; on the local platform set ${name('CLIENT_SECRET')} instead.`;
  }

  if (authorizeUrl === undefined || tokenUrl === undefined || clientId === undefined) {
    const missing = REQUIRED.map(name).filter((variable) => config[variable] === undefined);
    const secretHint =
      secretValue === undefined && secretArn === undefined
        ? `A confidential client also needs ${name('CLIENT_SECRET')} or ${name('CLIENT_SECRET_ARN')}.`
        : secretProblem;
    throw notConfigured(
      `OAuth provider ${provider} is not configured on this platform; the operator must set ${missing.join(', ')}.${secretHint === null ? '' : ` ${secretHint}`}`,
    );
  }
  if (secretProblem !== null) throw notConfigured(`OAuth provider ${provider} cannot be used on this platform as configured. ${secretProblem}`);

  return {
    provider,
    authorizeUrl,
    tokenUrl,
    clientId,
    clientSecret:
      secretValue !== undefined ? { from: 'value', value: secretValue } : secretArn !== undefined ? { from: 'secret-store', secretId: secretArn } : null,
    scopes: parseScopes(config[name('SCOPES')]),
  };
}

function notConfigured(message: string): ValidationError {
  return new ValidationError(message, [], 'OAUTH_PROVIDER_NOT_CONFIGURED');
}

export interface ClientSecretDeps {
  readonly secrets: SecretReader | null;
  readonly log: Logger;
}

/**
 * The client secret of `settings`, or null for a public client. A secret from the secret store is
 * read here, when the code exchange needs it (cached by the reader). Whatever its source, the value
 * is registered with the request's secret scope, so no log line of this request can show it. A
 * failed read is logged by setting name (never a value) and answered 502: the provider has already
 * sent the user back, so they must start again once the operator has fixed it.
 */
export async function readClientSecret(settings: ProviderSettings, deps: ClientSecretDeps): Promise<string | null> {
  const source = settings.clientSecret;
  if (source === null) return null;
  let value: string;
  if (source.from === 'value') {
    value = source.value;
  } else {
    const setting = oauthSettingName(settings.provider, 'CLIENT_SECRET_ARN');
    try {
      // providerSettings refuses a secret-store source when there is no reader.
      if (deps.secrets === null) throw new Error('no secret reader');
      value = await deps.secrets.read(source.secretId);
    } catch (error) {
      deps.log.error('oauth client secret could not be read', {
        provider: settings.provider,
        setting,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
      throw new UpstreamError(
        `The client secret of ${settings.provider} could not be read (the operator must check ${setting}); start the authorization again later.`,
        'OAUTH_CLIENT_SECRET_UNAVAILABLE',
      );
    }
  }
  registerSecret(value);
  return value;
}

/** Operators write scopes space or comma separated; the authorize URL wants them space separated (RFC 6749 3.3). */
export function parseScopes(raw: string | undefined): string[] {
  return [...new Set((raw ?? '').split(/[\s,]+/).filter((s) => s.length > 0))];
}

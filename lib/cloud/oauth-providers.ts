import { oauthSettingName, type OAuthSetting } from '../../functions/oauth/oauth.providers.ts';
import { OAUTH_PROVIDERS, type OAuthProvider } from '../../functions/oauth/oauth.schema.ts';

/**
 * One OAuth provider of the cloud stack (the `oauthProviders` prop and context option). Only
 * non-secret settings: the client secret stays in a Secrets Manager secret the operator creates,
 * and the functions read it by ARN when they exchange a code.
 */
export interface OAuthProviderSettings {
  /** The provider's authorization endpoint (https; extra query parameters are kept). */
  readonly authorizeUrl: string;
  /** The provider's token endpoint (https). */
  readonly tokenUrl: string;
  readonly clientId: string;
  /** Space or comma separated. @default none */
  readonly scopes?: string;
  /**
   * Complete ARN of the secret whose SecretString is the client secret. @default none: a public
   * client, which relies on PKCE alone
   */
  readonly clientSecretArn?: string;
}

/** The providers to configure, by the SPEC's neutral names; the others stay unconfigured. */
export type OAuthProviders = Readonly<Partial<Record<OAuthProvider, OAuthProviderSettings>>>;

/** Variables the stack may set: every provider setting but the plain client secret, which never enters the template. */
export type OAuthEnvironmentName = ReturnType<typeof oauthSettingName<Exclude<OAuthSetting, 'CLIENT_SECRET'>>>;

/** What the functions serving the oauth area receive. */
export interface OAuthFunctionSettings {
  readonly environment: Readonly<Partial<Record<OAuthEnvironmentName, string>>>;
  /** The role may call secretsmanager:GetSecretValue on exactly these. */
  readonly clientSecretArns: readonly string[];
}

const FIELDS = ['authorizeUrl', 'tokenUrl', 'clientId', 'scopes', 'clientSecretArn'] as const;

/** The complete ARN: Secrets Manager appends `-` and six characters to the name. IAM matches the ARN exactly. */
const COMPLETE_SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z]+(-[a-z]+)+-\d+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+-[A-Za-z0-9]{6}$/;

/**
 * Checks `value` (the prop, or the parsed context option) and returns it typed, or throws one
 * error naming every problem: unknown providers or fields, missing fields, URLs that are not
 * https, secret ARNs that are not complete Secrets Manager ARNs, a plain client secret.
 */
export function validateOAuthProviders(value: unknown, what = 'oauthProviders'): OAuthProviders {
  const problems: string[] = [];
  if (!isPlainObject(value)) throw new Error(`Invalid ${what}: expected an object keyed by provider (${OAUTH_PROVIDERS.join(', ')}), got ${typeName(value)}.`);
  const providers: Partial<Record<OAuthProvider, OAuthProviderSettings>> = {};
  for (const [name, entry] of Object.entries(value)) {
    if (!isProvider(name)) {
      problems.push(`"${name}" is not a provider (use ${OAUTH_PROVIDERS.join(', ')})`);
      continue;
    }
    if (!isPlainObject(entry)) {
      problems.push(`${name} must be an object with ${FIELDS.join(', ')}, got ${typeName(entry)}`);
      continue;
    }
    const before = problems.length;
    for (const field of Object.keys(entry)) {
      if (field === 'clientSecret')
        problems.push(
          `${name}.clientSecret is not accepted (a client secret must not sit in the template: store it in Secrets Manager and pass its ARN as clientSecretArn)`,
        );
      else if (!(FIELDS as readonly string[]).includes(field)) problems.push(`${name}.${field} is not a known field (${FIELDS.join(', ')})`);
    }
    for (const field of ['authorizeUrl', 'tokenUrl'] as const) {
      const problem = httpsUrlProblem(entry[field]);
      if (problem !== null) problems.push(`${name}.${field} ${problem}`);
    }
    if (typeof entry['clientId'] !== 'string' || entry['clientId'].trim() === '') problems.push(`${name}.clientId is missing (a non-empty string)`);
    if (entry['scopes'] !== undefined && typeof entry['scopes'] !== 'string')
      problems.push(`${name}.scopes must be a string of space or comma separated scopes`);
    const arn = entry['clientSecretArn'];
    if (arn !== undefined && (typeof arn !== 'string' || !COMPLETE_SECRET_ARN.test(arn))) {
      problems.push(
        `${name}.clientSecretArn must be the complete ARN of a Secrets Manager secret (arn:aws:secretsmanager:<region>:<account>:secret:<name>-<6 characters>, as create-secret prints it)`,
      );
    }
    if (problems.length === before) providers[name] = entry as unknown as OAuthProviderSettings;
  }
  if (problems.length > 0) throw new Error(`Invalid ${what}: ${problems.join('; ')}.`);
  return providers;
}

/**
 * The `oauthProviders` context option: JSON text (`-c oauthProviders='{...}'`) or an object (cdk.json).
 * Absent or empty: undefined.
 */
export function oauthProvidersFromContext(value: unknown): OAuthProviders | undefined {
  const what = 'context "oauthProviders"';
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') return validateOAuthProviders(value, what);
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch (error) {
    throw new Error(
      `Invalid ${what}: not JSON (${error instanceof Error ? error.message : String(error)}); pass e.g. -c oauthProviders='{"provider_a":{"authorizeUrl":"https://...","tokenUrl":"https://...","clientId":"...","clientSecretArn":"arn:aws:secretsmanager:..."}}'.`,
    );
  }
  return validateOAuthProviders(parsed, what);
}

/** The functions' settings for `providers` (already validated): the OAUTH_PROVIDER_* variables and the secrets to read. */
export function oauthFunctionSettings(providers: OAuthProviders): OAuthFunctionSettings {
  const environment: Partial<Record<OAuthEnvironmentName, string>> = {};
  const clientSecretArns: string[] = [];
  for (const provider of OAUTH_PROVIDERS) {
    const settings = providers[provider];
    if (settings === undefined) continue;
    environment[oauthSettingName(provider, 'AUTHORIZE_URL')] = settings.authorizeUrl;
    environment[oauthSettingName(provider, 'TOKEN_URL')] = settings.tokenUrl;
    environment[oauthSettingName(provider, 'CLIENT_ID')] = settings.clientId;
    if (settings.scopes !== undefined) environment[oauthSettingName(provider, 'SCOPES')] = settings.scopes;
    if (settings.clientSecretArn !== undefined) {
      environment[oauthSettingName(provider, 'CLIENT_SECRET_ARN')] = settings.clientSecretArn;
      clientSecretArns.push(settings.clientSecretArn);
    }
  }
  return { environment, clientSecretArns: [...new Set(clientSecretArns)] };
}

function httpsUrlProblem(value: unknown): string | null {
  if (value === undefined) return 'is missing (an https URL)';
  if (typeof value !== 'string') return `must be an https URL, got ${typeName(value)}`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `must be an https URL, got "${value}"`;
  }
  if (url.protocol !== 'https:') return `must be an https URL, got "${value}"`;
  // RFC 6749 3.1 and 3.2: the endpoints have no fragment. Credentials in the URL would be a secret in the template.
  if (url.hash !== '') return 'must not have a fragment (#...)';
  if (url.username !== '' || url.password !== '') return 'must not carry credentials';
  return null;
}

function isProvider(name: string): name is OAuthProvider {
  return (OAUTH_PROVIDERS as readonly string[]).includes(name);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const type = typeof value;
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

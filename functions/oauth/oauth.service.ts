import type { RequestScope } from '../core/request-scope.ts';
import { createHash } from 'node:crypto';
import { requireFullAccess } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { AccessDeniedError, ValidationError } from '../core/errors.ts';
import { randomBase62 } from '../core/ids.ts';
import type { RateLimit, RateLimiter } from '../core/rate-limit.ts';
import type { SecretReader } from '../core/secret-reader.ts';
import { registerSecret } from '../core/secret-scope.ts';
import { putKey, type KeyPorts } from '../keys/key.service.ts';
import type { UserStore } from '../users/user.store.ts';
import { providerSettings, readClientSecret } from './oauth.providers.ts';
import { refreshKeyName, type CallbackQuery, type OAuthProvider, type PendingAuthorization } from './oauth.schema.ts';
import type { OAuthStateStore } from './oauth.store.ts';
import { describeProviderError, exchangeCode } from './token-exchange.ts';

export interface OAuthPorts extends KeyPorts {
  readonly config: Config;
  readonly clock: Clock;
  readonly oauthStates: OAuthStateStore;
  readonly users: Pick<UserStore, 'get'>;
  readonly rateLimiter: RateLimiter;
  readonly fetch: typeof fetch;
  /** Reads `_CLIENT_SECRET_ARN` client secrets (cloud); null where settings hold the secrets themselves (local). */
  readonly secrets: SecretReader | null;
}

/** How long a user has to finish at the provider; long enough for a login with 2FA, short enough to limit a leaked URL. */
export const STATE_TTL_SEC = 600;
/** 43 base62 characters: about 256 bits, and at least the 32 characters the state must have. */
const STATE_LENGTH = 43;
/** RFC 7636 4.1 allows 43-128 unreserved characters; base62 is a subset, 64 of them about 380 bits. */
const VERIFIER_LENGTH = 64;
/** Each start writes a pending item, so one account cannot fill the table. */
const AUTHORIZE_LIMIT: RateLimit = { limit: 30, windowSec: 60 };

/** RFC 7636 4.2: BASE64URL(SHA256(ASCII(verifier))), unpadded. */
export function s256Challenge(codeVerifier: string): string {
  return createHash('sha256').update(codeVerifier, 'ascii').digest('base64url');
}

/**
 * Starts linking the caller's account at `provider`: a single-use state bound to the caller and a
 * PKCE verifier are stored, and the URL to send the user to carries the state and the verifier's
 * challenge. The verifier itself never leaves the platform.
 */
export async function startAuthorization(scope: RequestScope, provider: OAuthProvider, ports: OAuthPorts) {
  const actor = requireFullAccess(scope.actor);
  const settings = providerSettings(ports.config, provider, ports.secrets);
  await ports.rateLimiter.consume(`oauth-authorize:${actor.userId}`, AUTHORIZE_LIMIT);
  const now = ports.clock.now();
  const pending: PendingAuthorization = {
    state: randomBase62(STATE_LENGTH),
    userId: actor.userId,
    provider,
    codeVerifier: randomBase62(VERIFIER_LENGTH),
    redirectUri: redirectUriFor(provider, scope.urls.baseUrl),
    createdAt: now,
    expiresAt: Math.floor(now / 1000) + STATE_TTL_SEC,
  };
  await ports.oauthStates.put(pending);

  // Parameters already in the configured URL (e.g. `access_type=offline`, `prompt=consent`) stay.
  const url = new URL(settings.authorizeUrl);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('client_id', settings.clientId);
  url.searchParams.set('redirect_uri', pending.redirectUri);
  if (settings.scopes.length > 0) url.searchParams.set('scope', settings.scopes.join(' '));
  url.searchParams.set('state', pending.state);
  url.searchParams.set('code_challenge', s256Challenge(pending.codeVerifier));
  url.searchParams.set('code_challenge_method', 'S256');

  return {
    provider,
    authorizationUrl: url.toString(),
    state: pending.state,
    expiresAt: pending.expiresAt * 1000,
    redirectUri: pending.redirectUri,
  };
}

/** Where the provider sends the browser back; operators register this exact URL at the provider. */
export function redirectUriFor(provider: OAuthProvider, baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/oauth/callback/${provider}`;
}

/**
 * Finishes an authorization. The account is the one that started it, found by the state, since the
 * browser arriving here carries no platform credential. The state (whoever presents it) is consumed
 * before anything else, so it works at most once whatever happens next. Then the code is exchanged
 * and the tokens are stored as the owner's keys `provider` and `provider_refresh`, where runs pick
 * them up like any other key. The answer names the keys, never their values.
 */
export async function completeAuthorization(scope: RequestScope, provider: OAuthProvider, query: CallbackQuery, ports: OAuthPorts) {
  // A refusal spends the state too.
  const outcome = query.state === undefined ? null : await ports.oauthStates.consume(query.state, ports.clock.now());
  const refusal = describeProviderError(query.error, query.error_description);
  if (refusal !== null) throw new ValidationError(`${provider} did not grant access: ${refusal}.`, [], 'OAUTH_ACCESS_DENIED');
  if (outcome === null) {
    throw new ValidationError(`The callback has no state parameter; start again with GET /oauth/authorize/${provider}.`, [], 'OAUTH_STATE_INVALID');
  }
  if (outcome.status === 'missing') {
    throw new ValidationError(`Unknown or already used OAuth state; start again with GET /oauth/authorize/${provider}.`, [], 'OAUTH_STATE_INVALID');
  }
  if (outcome.status === 'expired') {
    throw new ValidationError(
      `This authorization expired (it is valid for ${STATE_TTL_SEC / 60} minutes); start again with GET /oauth/authorize/${provider}.`,
      [],
      'OAUTH_STATE_EXPIRED',
    );
  }
  const pending = outcome.pending;
  if (pending.provider !== provider) {
    throw new ValidationError(`This state was issued for ${pending.provider}, not ${provider}; start again.`, [], 'OAUTH_STATE_INVALID');
  }
  if (query.code === undefined) throw new ValidationError('The callback has no code parameter; start the authorization again.');
  const owner = await ports.users.get(pending.userId);
  if (owner === null || owner.status !== 'active') throw new AccessDeniedError('The account that started this authorization is no longer active.');

  const settings = providerSettings(ports.config, provider, ports.secrets);
  const clientSecret = await readClientSecret(settings, { secrets: ports.secrets, log: scope.log });
  const tokens = await exchangeCode(
    { ...settings, clientSecret },
    { code: query.code, redirectUri: pending.redirectUri, codeVerifier: pending.codeVerifier },
    { fetch: ports.fetch, log: scope.log },
  );
  // From here on, any log line of this request has the values masked, whatever field holds them.
  registerSecret(tokens.accessToken);
  if (tokens.refreshToken !== null) registerSecret(tokens.refreshToken);

  // Access token first: it is the one runs need. A provider that sends no refresh token on a
  // re-link (Google does this) leaves the earlier refresh token in place, which stays valid there.
  const stored: string[] = [provider];
  await putKey(pending.userId, provider, tokens.accessToken, ports);
  if (tokens.refreshToken !== null) {
    await putKey(pending.userId, refreshKeyName(provider), tokens.refreshToken, ports);
    stored.push(refreshKeyName(provider));
  }
  scope.log.info('oauth account linked', { provider, userId: pending.userId, stored });
  return {
    provider,
    stored,
    ...(tokens.expiresIn !== null ? { expiresIn: tokens.expiresIn } : {}),
    ...(tokens.scope !== null ? { scope: tokens.scope } : {}),
  };
}

import { UpstreamError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { ProviderSettings } from './oauth.providers.ts';

/** How long the provider's token endpoint gets; well inside the route's 29 s. */
export const TOKEN_EXCHANGE_TIMEOUT_MS = 10_000;

/** What the platform keeps from a token response (RFC 6749 5.1). */
export interface ProviderTokens {
  readonly accessToken: string;
  readonly refreshToken: string | null;
  /** Seconds the access token lives, when the provider says. */
  readonly expiresIn: number | null;
  /** Granted scopes, when the provider says (they may differ from the requested ones). */
  readonly scope: string | null;
}

/** What the exchange needs of a provider's settings, with the client secret already read (null: public client). */
export type ExchangeSettings = Pick<ProviderSettings, 'provider' | 'tokenUrl' | 'clientId'> & { readonly clientSecret: string | null };

export interface ExchangeInput {
  readonly code: string;
  readonly redirectUri: string;
  readonly codeVerifier: string;
}

export interface ExchangeDeps {
  readonly fetch: typeof fetch;
  readonly log: Logger;
}

const FAILED = 'OAUTH_TOKEN_EXCHANGE_FAILED';

/**
 * Trades an authorization code for tokens (RFC 6749 4.1.3, with the PKCE verifier of RFC 7636 4.5).
 * A confidential client authenticates with HTTP Basic (RFC 6749 2.3.1), the one method every
 * authorization server must support; `client_id` is in the body as well, as public clients need.
 * Failures are 502s that name the provider's error code, never the response body, which could hold
 * a token.
 */
export async function exchangeCode(settings: ExchangeSettings, input: ExchangeInput, deps: ExchangeDeps): Promise<ProviderTokens> {
  const body = new URLSearchParams({
    grant_type: 'authorization_code',
    code: input.code,
    redirect_uri: input.redirectUri,
    client_id: settings.clientId,
    code_verifier: input.codeVerifier,
  });
  const headers: Record<string, string> = {
    'content-type': 'application/x-www-form-urlencoded',
    // Some providers (GitHub) answer form-encoded unless asked for JSON.
    accept: 'application/json',
  };
  if (settings.clientSecret !== null) headers['authorization'] = basicAuth(settings.clientId, settings.clientSecret);

  const name = settings.provider;
  let status: number;
  let fields: Record<string, unknown>;
  try {
    const response = await deps.fetch(settings.tokenUrl, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(TOKEN_EXCHANGE_TIMEOUT_MS),
      // A redirect would re-send the code (and maybe the secret) elsewhere; a token endpoint has no reason to redirect.
      redirect: 'manual',
    });
    status = response.status;
    fields = parseTokenBody(await response.text(), response.headers.get('content-type') ?? '');
  } catch (error) {
    const timedOut = error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError');
    deps.log.warn('oauth token exchange failed', {
      provider: name,
      reason: timedOut ? 'timeout' : 'unreachable',
      error: error instanceof Error ? error.message : String(error),
    });
    throw new UpstreamError(
      timedOut
        ? `The token endpoint of ${name} did not answer within ${TOKEN_EXCHANGE_TIMEOUT_MS / 1000} seconds; start the authorization again.`
        : `The token endpoint of ${name} could not be reached; start the authorization again.`,
      FAILED,
    );
  }

  const providerError = describeProviderError(fields['error'], fields['error_description']);
  const accessToken = fields['access_token'];
  const ok = status >= 200 && status < 300;
  if (!ok || typeof accessToken !== 'string' || accessToken.length === 0) {
    deps.log.warn('oauth token exchange failed', { provider: name, status, providerError });
    const why = !ok ? `answered HTTP ${status}` : providerError !== null ? 'refused the code' : 'answered without an access_token';
    throw new UpstreamError(
      `The token endpoint of ${name} ${why}${providerError !== null ? ` (${providerError})` : ''}; start the authorization again.`,
      FAILED,
    );
  }
  const refreshToken = fields['refresh_token'];
  const expiresIn = Number(fields['expires_in']);
  const scope = fields['scope'];
  return {
    accessToken,
    refreshToken: typeof refreshToken === 'string' && refreshToken.length > 0 ? refreshToken : null,
    // Informational only, so a malformed value is dropped rather than failing a working link.
    expiresIn: fields['expires_in'] !== undefined && Number.isFinite(expiresIn) && expiresIn > 0 ? Math.floor(expiresIn) : null,
    scope: typeof scope === 'string' ? scope : null,
  };
}

/** RFC 6749 2.3.1: id and secret are form-encoded before they are joined and base64-encoded. */
function basicAuth(clientId: string, clientSecret: string): string {
  const encode = (value: string) => new URLSearchParams({ v: value }).toString().slice(2);
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(clientSecret)}`).toString('base64')}`;
}

/** JSON as RFC 6749 5.1 says; form-encoded as some providers still answer. Anything else reads as no fields. */
function parseTokenBody(text: string, contentType: string): Record<string, unknown> {
  if (/application\/x-www-form-urlencoded|text\/plain/i.test(contentType) && !text.trimStart().startsWith('{')) {
    return Object.fromEntries(new URLSearchParams(text));
  }
  try {
    const parsed: unknown = JSON.parse(text);
    return parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/**
 * The provider's error code and description as one short line, or null. They come from the provider
 * (or, on the callback, from whoever built the URL), so they are cut short and stripped of control
 * characters before they reach a response or a log.
 */
export function describeProviderError(error: unknown, description: unknown): string | null {
  if (typeof error !== 'string' || error.trim() === '') return null;
  const clean = (s: string, max: number) => {
    const flat = s.replace(/[\p{Cc}\p{Cf}]+/gu, ' ').trim();
    return flat.length > max ? `${flat.slice(0, max)}...` : flat;
  };
  return typeof description === 'string' && description.trim() !== '' ? `${clean(error, 64)}: ${clean(description, 200)}` : clean(error, 64);
}

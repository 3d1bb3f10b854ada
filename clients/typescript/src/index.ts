import createFetchClient, { type Client } from 'openapi-fetch';
import type { paths } from './api.ts';

export type { components, operations, paths } from './api.ts';

/**
 * A typed client of the platform's API: `openapi-fetch` over the types `openapi-typescript` derives
 * from the platform's OpenAPI document (src/api.ts, `npm run client:generate`), so every path,
 * parameter, request body and response `data` is checked by the compiler. Hosts other than the
 * base one (streaming chat, MCP, sites) are clients of their own, made with their base URLs from
 * `/.well-known/platform.json`.
 */
export type PlatformClient = Client<paths>;

export interface PlatformClientOptions {
  /** The API's base URL, e.g. `http://localhost:8787` or the cloud stage URL. */
  readonly baseUrl: string;
  /** A user or role token (`svc_ut_...`, `svc_rt_...`), sent as a bearer token. */
  readonly token?: string;
  /** Another `fetch` (tests, proxies). */
  readonly fetch?: (input: Request) => Promise<Response>;
  readonly headers?: Readonly<Record<string, string>>;
}

export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  return createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    headers: { ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }), ...options.headers },
    // The one object query the document has (an action's own parameters) is `form`, exploded:
    // `{city: 'Paris'}` goes as `city=Paris`, not openapi-fetch's default `parameters[city]=Paris`.
    querySerializer: { object: { style: 'form', explode: true } },
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
}

/** A refusal or failure, with the envelope's machine-readable code. */
export class PlatformApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly requestId: string | undefined,
  ) {
    super(message);
    this.name = 'PlatformApiError';
  }
}

/** The `data` of a success in either envelope; a failure throws `PlatformApiError`. */
export async function dataOf<D>(call: Promise<{ data?: { data: D }; error?: unknown; response: Response }>): Promise<D> {
  const { data, error, response } = await call;
  if (data !== undefined && response.ok) return data.data;
  throw errorOf(response.status, error);
}

function errorOf(status: number, error: unknown): PlatformApiError {
  const body = (typeof error === 'object' && error !== null ? error : {}) as Record<string, unknown>;
  // Envelope B: {error: message, code}; envelope A: {error: {code, message}}; sites: {error}.
  const nested = typeof body['error'] === 'object' && body['error'] !== null ? (body['error'] as Record<string, unknown>) : undefined;
  const code = String(nested?.['code'] ?? body['code'] ?? `HTTP_${status}`);
  const message = String(nested?.['message'] ?? body['error'] ?? `HTTP ${status}`);
  return new PlatformApiError(status, code, message, typeof body['requestId'] === 'string' ? body['requestId'] : undefined);
}

import { createPlatformClient, dataOf, PlatformApiError, type PlatformClient } from '../../clients/typescript/src/index.ts';
import { CliError } from './errors.ts';

const REQUEST_TIMEOUT_MS = 30_000;
/** The page size of the listings the CLI reads to their end. */
const LIST_PAGE_SIZE = 100;

/** Where the CLI talks to and as whom, and the typed client of the API there. */
export interface Connection {
  readonly url: string;
  readonly token: string;
  /** Every path, parameter, body and answer checked by the compiler against the OpenAPI document. */
  readonly api: PlatformClient;
}

export function connectTo(url: string, token: string): Connection {
  const connection = { url, token };
  return { ...connection, api: platformClient(connection) };
}

export interface ClientOptions {
  /** Another host of the platform (the stream host from the discovery document); the API's by default. */
  readonly baseUrl?: string;
  readonly timeoutMs?: number;
  /** Successes are streams, read by the caller as they come; only refusals are read whole. */
  readonly streamed?: boolean;
}

/**
 * The typed client, as the connection's token, whose fetch turns what is not the platform's answer
 * into one line naming the platform's address: a refused connection, a timeout, a body that is not JSON.
 */
export function platformClient(connection: Pick<Connection, 'url' | 'token'>, options: ClientOptions = {}): PlatformClient {
  const { baseUrl = connection.url, timeoutMs = REQUEST_TIMEOUT_MS, streamed = false } = options;
  return createPlatformClient({
    baseUrl,
    token: connection.token,
    fetch: async (request) => {
      const limit = deadline(request.signal, timeoutMs);
      const response = await send(connection.url, timeoutMs, request, limit.signal);
      // A stream is read under the limit to its end; an answer read whole is done with it.
      if (streamed && response.ok) return response;
      const text = await response.text().finally(limit.clear);
      try {
        JSON.parse(text);
      } catch {
        throw new CliError(`Unexpected answer from ${request.url}: HTTP ${response.status}, not JSON. Is --url the platform's address?`);
      }
      return new Response(text, response);
    },
  });
}

/**
 * Aborts at the caller's abort (Ctrl-C while following logs) or after `ms`, whichever comes first.
 * Not `AbortSignal.any` with `AbortSignal.timeout`: Node 20 holds any()'s sources weakly, and a
 * collected timeout never fires (a silent platform then held the CLI for undici's 300 s).
 */
function deadline(caller: AbortSignal, ms: number): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException(`The operation timed out after ${ms} ms.`, 'TimeoutError')), ms);
  // As AbortSignal.timeout's: a command that is done never waits for it.
  timer.unref();
  const abort = () => {
    clearTimeout(timer);
    controller.abort(caller.reason);
  };
  if (caller.aborted) abort();
  else caller.addEventListener('abort', abort, { once: true });
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      caller.removeEventListener('abort', abort);
    },
  };
}

async function send(platformUrl: string, timeoutMs: number, request: Request, signal: AbortSignal): Promise<Response> {
  try {
    return await fetch(request, { signal });
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    if ((error as Error).name === 'TimeoutError') throw new CliError(`The platform at ${platformUrl} did not answer within ${timeoutMs / 1000} s.`);
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    throw new CliError(
      `The platform is not reachable at ${platformUrl}${cause ? ` (${cause})` : ''}. Start it with \`npm start\`, or point --url (or PLATFORM_URL) at a running one.`,
    );
  }
}

/** The `data` of a call's success; a refusal throws a CliError with the platform's message. */
export async function dataOrFail<D>(call: Promise<{ data?: { data: D }; error?: unknown; response: Response }>): Promise<D> {
  try {
    return await dataOf(call);
  } catch (error) {
    if (error instanceof PlatformApiError) throw new CliError(describeFailure(error));
    throw error;
  }
}

/** The answer of a streamed call (its body not read yet); a refusal before the stream starts as for `dataOrFail`. */
export async function streamOrFail(call: Promise<{ error?: unknown; response: Response }>): Promise<Response> {
  const { error, response } = await call;
  // dataOf reads a refusal's envelope (either style) for every call, so this one too: it throws here.
  if (!response.ok) await dataOrFail(Promise.resolve({ error, response }));
  return response;
}

/** `Error: <platform message> (CODE, HTTP 403, request <id>)`. */
function describeFailure(error: PlatformApiError): string {
  // dataOf names a refusal without a code (a proxy's, say) HTTP_<status>: the line shows the status once.
  const code = error.code === `HTTP_${error.status}` ? undefined : error.code;
  const details = [code, `HTTP ${error.status}`, error.requestId === undefined ? undefined : `request ${error.requestId}`].filter((part) => part !== undefined);
  return `Error: ${error.message} (${details.join(', ')})`;
}

/** One page of a cursor-paginated listing: its items and the cursor of the next page (null on the last). */
export interface Page<T> {
  readonly items: readonly T[];
  readonly nextCursor: string | null;
}

/** Every item of a cursor-paginated listing, page after page; `load` puts `page` in its query. */
export async function listAll<T>(load: (page: { limit: number; cursor?: string }) => Promise<Page<T>>): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const page: Page<T> = await load({ limit: LIST_PAGE_SIZE, ...(cursor === null ? {} : { cursor }) });
    items.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor !== null);
  return items;
}

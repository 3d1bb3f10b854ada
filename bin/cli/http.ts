import { CliError } from './errors.ts';

const REQUEST_TIMEOUT_MS = 30_000;

/** Where the CLI talks to and as whom. */
export interface Connection {
  readonly url: string;
  readonly token: string;
}

/** The success envelope of the platform (both styles carry `data`); errors carry `error` instead. */
interface Envelope<T> {
  readonly data: T;
}

export interface CallOptions {
  readonly body?: unknown;
  /** Aborts the call (Ctrl-C while following logs). */
  readonly signal?: AbortSignal;
}

/** One call to the platform; returns `data` of the envelope or throws a CliError with the platform's message. */
export async function callPlatform<T>(connection: Connection, method: string, path: string, options: CallOptions = {}): Promise<T> {
  const { body } = options;
  const response = await send(connection, connection.url + path, {
    method,
    headers: { authorization: `Bearer ${connection.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: options.signal === undefined ? AbortSignal.timeout(REQUEST_TIMEOUT_MS) : AbortSignal.any([options.signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)]),
  });
  const parsed = await readJson(response, connection.url + path);
  if (!response.ok) throw new CliError(describeFailure(response.status, parsed));
  return (parsed as Envelope<T>).data;
}

/** A fetch that turns a refused connection or a timeout into one line naming the platform's address. */
export async function send(connection: Pick<Connection, 'url'>, address: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(address, init);
  } catch (error) {
    if ((error as Error).name === 'AbortError') throw error;
    if ((error as Error).name === 'TimeoutError') throw new CliError(`The platform at ${connection.url} did not answer within ${REQUEST_TIMEOUT_MS / 1000} s.`);
    const cause = (error as { cause?: { code?: string } }).cause?.code;
    throw new CliError(
      `The platform is not reachable at ${connection.url}${cause ? ` (${cause})` : ''}. Start it with \`npm start\`, or point --url (or PLATFORM_URL) at a running one.`,
    );
  }
}

export async function readJson(response: Response, address: string): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    throw new CliError(`Unexpected answer from ${address}: HTTP ${response.status}, not JSON. Is --url the platform's address?`);
  }
}

/** `Error: <platform message> (CODE, HTTP 403, request <id>)`, reading both envelope styles. */
export function describeFailure(status: number, body: unknown): string {
  const envelope = (body ?? {}) as { error?: unknown; code?: unknown; requestId?: unknown };
  const nested = typeof envelope.error === 'object' && envelope.error !== null ? (envelope.error as { message?: unknown; code?: unknown }) : undefined;
  const message = typeof envelope.error === 'string' ? envelope.error : typeof nested?.message === 'string' ? nested.message : `HTTP ${status}`;
  const code = typeof envelope.code === 'string' ? envelope.code : typeof nested?.code === 'string' ? nested.code : undefined;
  const details = [code, `HTTP ${status}`, typeof envelope.requestId === 'string' ? `request ${envelope.requestId}` : undefined].filter(
    (part) => part !== undefined,
  );
  return `Error: ${message} (${details.join(', ')})`;
}

/**
 * Every item of a cursor-paginated listing (`limit`/`cursor` in, `nextCursor` out), page after page;
 * `key` names the array in `data`.
 */
export async function listAll<T>(connection: Connection, path: string, key: string, query: Record<string, string> = {}): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ ...query, limit: '100', ...(cursor === null ? {} : { cursor }) });
    const page: Record<string, unknown> = await callPlatform(connection, 'GET', `${path}?${params}`);
    items.push(...((page[key] as T[] | undefined) ?? []));
    cursor = typeof page['nextCursor'] === 'string' ? page['nextCursor'] : null;
  } while (cursor !== null);
  return items;
}

import { throwFirstFailure } from '../core/all-settled.ts';
import type { Actor, UserActor } from '../core/auth/actor.ts';
import { roundCredits, type Credits } from '../core/credits.ts';
import { AuthenticationRequiredError, AccessDeniedError, MalformedJsonError, MethodNotAllowedError, PlatformError } from '../core/errors.ts';
import type { RequestScope } from '../core/request-scope.ts';
import { openBilledRun } from '../core/runs/billed-run.ts';
import type { HttpRequest } from '../core/http/request.ts';
import { Reply } from '../core/http/route.ts';
import { keyEnvironmentName, type KeysReader } from '../core/keys-reader.ts';
import { paidMcpAccess } from '../billing/paid-access.ts';
import { scrubSecrets } from '../core/secret-scope.ts';
import type { UsageLogWriter } from '../core/usage-log.ts';
import type { McpHttpRequest, McpHttpResponse } from '../runtimes/mcp-runtime.ts';
import { TOOL_CALL_CREDITS, type McpServerRecord } from './mcp.schema.ts';
import { isOwner, loadServer, loadServerBySlug, loadVersion, type McpPorts } from './mcp.service.ts';

export interface McpEndpointPorts extends McpPorts {
  readonly keysReader: KeysReader;
  readonly credits: Credits;
  readonly usageLogs: UsageLogWriter;
}

/** Which server a request names: by id, or by `{owner}/{slug}`. */
export type McpTarget = { readonly serverId: string } | { readonly owner: string; readonly slug: string };

/**
 * Request headers the user's server sees: what the MCP Streamable HTTP transport reads. Never the
 * caller's credentials (`authorization`, the legacy secret-key headers) or cookies.
 */
const FORWARDED_HEADERS = ['accept', 'content-type', 'mcp-protocol-version', 'mcp-session-id', 'last-event-id'] as const;

/** Response headers passed back to the client besides the content type. */
const RETURNED_HEADERS = ['mcp-session-id', 'mcp-protocol-version', 'allow'] as const;

/** Header telling the client which version answered (the live one, or the pinned one). */
export const VERSION_HEADER = 'x-mcp-server-version';

export interface JsonRpcMessage {
  readonly method?: unknown;
  readonly params?: unknown;
  readonly id?: unknown;
}

/**
 * 402 for an anonymous call whose owner-paid credit is missing. Unlike InsufficientCreditsError it
 * does not state the balance, which is the owner's, not the caller's.
 */
export class OwnerCreditsExhaustedError extends PlatformError {
  readonly kind = 'insufficient-credits';
  constructor() {
    super(
      'Anonymous calls to this MCP server are paid by its owner, whose credits have run out; call it with your own credentials to pay for the call yourself.',
    );
  }
}

/** The JSON-RPC messages of a POST body; null when the body is not JSON. */
export function messagesOf(body: string): JsonRpcMessage[] | null {
  if (body.trim() === '') return [];
  try {
    const parsed: unknown = JSON.parse(body);
    const list = Array.isArray(parsed) ? parsed : [parsed];
    return list.filter((m): m is JsonRpcMessage => typeof m === 'object' && m !== null);
  } catch {
    return null;
  }
}

/** `MCP_TOOLS_CALL`, `MCP_INITIALIZE`, `MCP_BATCH`, ...: the usage record's request type. */
export function requestTypeOf(messages: JsonRpcMessage[] | null): string {
  if (messages === null || messages.length === 0) return 'MCP_REQUEST';
  if (messages.length > 1) return 'MCP_BATCH';
  const method = messages[0]!.method;
  return typeof method === 'string' ? `MCP_${method.toUpperCase().replace(/[^A-Z0-9]+/g, '_')}` : 'MCP_RESPONSE';
}

/** The response as the usage record keeps it: parsed JSON, the data lines of an event stream, or text. */
export function responseBodyOf(response: McpHttpResponse): unknown {
  const type = (response.headers['content-type'] ?? '').toLowerCase();
  if (response.body === '') return null;
  try {
    if (type.includes('json')) return JSON.parse(response.body);
    if (type.includes('text/event-stream')) {
      const data = response.body
        .split(/\r?\n/)
        .filter((line) => line.startsWith('data:'))
        .map((line) => JSON.parse(line.slice(5).trim()) as unknown);
      return data.length === 1 ? data[0] : data;
    }
  } catch {
    // Kept as text below.
  }
  return response.body;
}

/** The first failure the response reports: HTTP status, a JSON-RPC error, or a tool result marked `isError`. */
export function failureOf(response: McpHttpResponse, body: unknown): { code: string; message: string } | null {
  const replies = Array.isArray(body) ? body : [body];
  for (const reply of replies) {
    if (typeof reply !== 'object' || reply === null) continue;
    const error = (reply as { error?: { code?: unknown; message?: unknown } }).error;
    if (error !== undefined && error !== null) return { code: `JSONRPC_${String(error.code ?? 'ERROR')}`, message: String(error.message ?? 'JSON-RPC error') };
    const result = (reply as { result?: { isError?: unknown; content?: { text?: unknown }[] } }).result;
    if (result?.isError === true)
      return { code: 'TOOL_ERROR', message: String(result.content?.find((c) => typeof c.text === 'string')?.text ?? 'The tool reported an error.') };
  }
  if (response.status >= 400)
    return {
      code: `HTTP_${response.status}`,
      message: typeof body === 'string' && body.length > 0 ? body.slice(0, 500) : `The MCP server answered ${response.status}.`,
    };
  return null;
}

/**
 * Who runs the owner's code for an anonymous caller of a public server. The keys reader narrows the
 * keys only for the owner's own role tokens, so this caller gets all of the owner's keys, as every
 * other caller who is not the owner does: the code that receives them is the owner's.
 */
const ANONYMOUS_CALLER: UserActor = Object.freeze({
  kind: 'user',
  userId: 'anonymous',
  alias: null,
  isAdmin: false,
  via: 'user-token',
  tokenId: null,
  scope: 'full',
  roleKeys: null,
});

/** The owner's keys as `SERVICENAME_KEY` variables; for the owner's role tokens only the attached ones. */
async function environmentFor(actor: Actor, server: McpServerRecord, ports: McpEndpointPorts): Promise<Record<string, string>> {
  const values = await ports.keysReader.readAllKeys(actor.kind === 'user' ? actor : ANONYMOUS_CALLER, server.ownerId);
  return Object.fromEntries(Object.entries(values).map(([name, value]) => [keyEnvironmentName(name), value]));
}

/**
 * The server a request names (404 when there is none): the endpoint's first read, which the route
 * starts while the rate limiter answers. A read only: access is checked by `callMcpServer`.
 */
export function findServer(target: McpTarget, ports: Pick<McpEndpointPorts, 'mcpServers' | 'users'>): Promise<McpServerRecord> {
  return 'serverId' in target ? loadServer(target.serverId, ports) : loadServerBySlug(target.owner, target.slug, ports);
}

/**
 * `POST` and `GET {mcp_url}/mcp/{serverId}` and `/mcp/s/{owner}/{slug}`: one MCP Streamable HTTP
 * request, answered statelessly by the server's live version or the pinned `v`/`version`. `GET`
 * (the optional server-to-client stream) is answered 405, as the MCP transport prescribes for
 * servers without one.
 *
 * - Access: public servers answer anyone; private ones only their owner (any of the owner's
 *   credentials, role tokens included): anonymous callers get 401, other users 403. Unknown
 *   server or version: 404.
 * - Billing: TOOL_CALL_CREDITS per `tools/call` in the request, taken before the run from the
 *   caller, or from the owner when the caller is anonymous (an owner who publishes a server pays
 *   for its anonymous use, which the route's per-IP rate limit bounds). Other methods (initialize,
 *   tools/list, ...) are free. Once the request is handed to the runtime the credits are kept,
 *   whatever the answer: a timed-out call used its time (and its work may go on in the host), and
 *   a 5xx status is no proof that nothing ran, since the server's code chooses its answer. They are
 *   given back only when the platform failed before handing the request over, or the adapter
 *   observed that no server code ran (`notStarted`).
 * - Environment: the owner's keys as `SERVICENAME_KEY` (the code is the owner's); for the owner's
 *   role tokens only the keys attached to the token.
 * - One usage record per request, under the payer's account, with the request's lineage (so an
 *   agent's MCP calls join its chat in the trace), its duration by the platform's clock, and
 *   status `timeout` for a call cut by the route's deadline or the runtime's limit (504).
 * - The runtime's response goes back as it is (status, content type and body), except that a
 *   caller who is not the owner never sees the owner's keys in it.
 */
export async function callMcpServer(
  scope: RequestScope,
  target: McpTarget,
  pinnedVersion: number | undefined,
  request: HttpRequest,
  ports: McpEndpointPorts,
  /** The server `findServer` already read for `target` (the route's prefetch); read here otherwise. */
  found?: McpServerRecord,
): Promise<Reply> {
  const { actor, signal } = scope;
  const server = found ?? (await findServer(target, ports));
  if (server.visibility !== 'public' && !isOwner(actor, server)) {
    if (actor.kind === 'anonymous') throw new AuthenticationRequiredError();
    throw new AccessDeniedError(`MCP server ${server.serverId} is private.`);
  }
  if (request.method !== 'POST' && request.method !== 'GET') throw new MethodNotAllowedError(request.method, ['POST', 'GET']);
  if (request.method === 'GET') return noEventStream((await loadVersion(server, pinnedVersion ?? server.latestVersion, ports)).version);

  const body = request.body?.toString('utf8') ?? '';
  const messages = messagesOf(body);
  // Refused by the platform (a JSON-RPC parse error), so nothing is billed, run or logged for it.
  if (messages === null) throw new MalformedJsonError('The request body is not valid JSON.');
  // The keys depend only on the caller and the owner, whose access is checked: read while the
  // version (cached once read: versions never change) and a paid server's access are, not after.
  const keysRead = environmentFor(actor, server, ports);
  keysRead.catch(() => undefined);
  const snapshot = await loadVersion(server, pinnedVersion ?? server.latestVersion, ports);
  const toolCalls = (messages ?? []).filter((m) => m.method === 'tools/call').length;
  const cost = roundCredits(toolCalls * TOOL_CALL_CREDITS);
  const payer = actor.kind === 'user' ? actor.userId : server.ownerId;
  const reason = `mcp ${server.serverName} tools/call x${toolCalls}`;
  // The debit and the keys are independent reads and writes: both at once. No run without both.
  // The debit's ledger line is written while the server runs, not before: awaited before every
  // answer, error answers included, and a failed write still fails the request (500, logged).
  const billed = await openBilledRun(
    {
      kind: 'mcp',
      payer,
      upfront: { credits: cost, reason },
      refunds: { notRun: `refund: ${reason}`, notStarted: `refund: ${reason}` },
      refused: (error) => (actor.kind === 'anonymous' ? new OwnerCreditsExhaustedError() : error),
      readKeys: () => keysRead,
      ...(await paidMcpAccess(server, actor, body, scope, ports)), // paid servers (H, issue 35): 402, or the author's per-call fee
    },
    ports,
    scope,
  );

  const headers: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) if (request.headers[name] !== undefined) headers[name] = request.headers[name];
  const mcpRequest: McpHttpRequest = { method: 'POST', headers, body };
  const startedAt = ports.clock.now();
  let response: McpHttpResponse;
  try {
    response = await ports.mcpRuntime.handle(
      server.ownerId,
      { serverId: server.serverId, version: snapshot.version, sourceCode: snapshot.sourceCode },
      mcpRequest,
      billed.keys,
      signal,
    );
  } catch (error) {
    // The port answers failures as responses; a throw means the platform itself failed before the run.
    await billed.abandon();
    throw error;
  }
  const durationMs = ports.clock.now() - startedAt;
  response = { ...response, headers: Object.fromEntries(Object.entries(response.headers).map(([k, v]) => [k.toLowerCase(), v])) };
  const responseBody = responseBodyOf(response);
  const failure = failureOf(response, responseBody);
  // The adapter saw that no server code ran (no runtime, or the caller left first): nothing to pay.
  // The run happened, so its record is written even when the ledger line failed; both are awaited.
  const { written } = await billed.finish(
    { started: response.notStarted !== true },
    {
      resourceId: server.serverId,
      resourceType: 'mcp',
      requestType: requestTypeOf(messages),
      status: signal.aborted || response.status === 504 ? 'timeout' : failure === null ? 'success' : 'error',
      request: { version: snapshot.version, pinned: pinnedVersion !== undefined, caller: actor.kind === 'user' ? actor.userId : null, body: messages ?? body },
      response: { status: response.status, body: responseBody },
      durationMs,
      ...(failure !== null ? { error: failure } : {}),
    },
  );
  throwFirstFailure(written);

  const returned: Record<string, string> = { [VERSION_HEADER]: String(snapshot.version) };
  for (const name of RETURNED_HEADERS) if (response.headers[name] !== undefined) returned[name] = response.headers[name];
  // Only the exact values are caught (a key the code encodes, e.g. in base64, is not).
  const answer = isOwner(actor, server) ? response.body : scrubSecrets(response.body);
  return Reply.raw(answer, response.headers['content-type'] ?? 'application/json', { status: response.status, headers: returned });
}

/**
 * `GET` opens the server-to-client event stream of Streamable HTTP. Every request here is answered
 * statelessly within one response, so there is no such stream: the MCP transport's answer for that
 * is 405 (clients, the official one included, then carry on with POST only). Nothing runs, so
 * nothing is billed or logged; access and the pinned version were checked first, as for POST.
 */
function noEventStream(version: number): Reply {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    error: { code: -32000, message: 'Method not allowed: this endpoint answers each POST in its own response and offers no server-initiated event stream.' },
    id: null,
  });
  return Reply.raw(body, 'application/json', { status: 405, headers: { allow: 'POST', [VERSION_HEADER]: String(version) } });
}

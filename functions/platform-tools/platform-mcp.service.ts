import { createRequire } from 'node:module';
import type * as SdkServer from '@modelcontextprotocol/sdk/server/index.js';
import type * as SdkTransport from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type * as SdkTypes from '@modelcontextprotocol/sdk/types.js';
import { requireUser } from '../core/auth/actor.ts';
import { MalformedJsonError, MethodNotAllowedError } from '../core/errors.ts';
import type { HttpRequest } from '../core/http/request.ts';
import { Reply } from '../core/http/route.ts';
import type { RequestScope } from '../core/request-scope.ts';
import { failureOf, messagesOf, requestTypeOf, responseBodyOf } from '../mcp/endpoint.service.ts';
import { platformMcpUrl } from './platform-mcp-url.ts';
import { callTool, listTools, UnknownToolError, type PlatformToolsPorts } from './platform-tools.service.ts';

/** The server's name and version in `initialize`; the resource id of its usage records. */
export const PLATFORM_SERVER = { name: 'platform', version: '1.0.0' } as const;

const INSTRUCTIONS =
  'Tools of the agent platform, acting for the credential you connected with: search_knowledge searches your knowledge files; ' +
  'list_actions and run_action run your actions (and public ones); list_skills and get_skill read skills; ' +
  'tools named {server}__{tool} are the tools of your hosted MCP servers. Runs are billed as the same calls made directly.';

/** Request headers the Streamable HTTP transport reads; never the caller's credentials. */
const FORWARDED_HEADERS = ['accept', 'content-type', 'mcp-protocol-version'] as const;

interface Sdk {
  readonly Server: typeof SdkServer.Server;
  readonly Transport: typeof SdkTransport.WebStandardStreamableHTTPServerTransport;
  readonly types: Pick<typeof SdkTypes, 'ListToolsRequestSchema' | 'CallToolRequestSchema' | 'McpError' | 'ErrorCode'>;
}

let sdk: Sdk | undefined;

/**
 * The SDK's server classes, loaded on first use by Node's `require` (its CommonJS build) rather
 * than imported: esbuild does not follow it, so the function bundle stays within its 200 KB budget
 * (the SDK's server and schemas are about 650 KB minified), and Node resolves it as it resolves
 * the MCP runtime's copy: from node_modules locally, from `NODE_PATH` (a layer's
 * `/opt/nodejs/node_modules`) in Lambda.
 */
function loadSdk(): Sdk {
  if (sdk !== undefined) return sdk;
  const load = createRequire(import.meta.url);
  const server = load('@modelcontextprotocol/sdk/server/index.js') as typeof SdkServer;
  const transport = load('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js') as typeof SdkTransport;
  const types = load('@modelcontextprotocol/sdk/types.js') as typeof SdkTypes;
  sdk = { Server: server.Server, Transport: transport.WebStandardStreamableHTTPServerTransport, types };
  return sdk;
}

/**
 * `POST {mcp_url}/mcp/platform`: one MCP Streamable HTTP request, answered statelessly (JSON
 * responses, no session) by an SDK server built for this caller, whose tools act with the caller's
 * credential (platform-tools.service.ts). `GET` (the server-to-client stream) is 405, as on the
 * hosted endpoint.
 *
 * One usage record per request, like the hosted endpoint's, under the caller, with the request's
 * lineage: the calls a tool makes (action runs, hosted servers' requests) write their own records,
 * billed as direct calls, with this request as their parent, so a chat's trace shows the platform
 * call and under it what it ran. The record itself costs nothing.
 */
export async function servePlatformMcp(
  scope: RequestScope,
  request: HttpRequest,
  servers: readonly string[] | null,
  ports: PlatformToolsPorts,
): Promise<Reply> {
  const actor = requireUser(scope.actor);
  if (request.method === 'GET') return noEventStream();
  if (request.method !== 'POST') throw new MethodNotAllowedError(request.method, ['POST', 'GET']);
  const body = request.body?.toString('utf8') ?? '';
  const messages = messagesOf(body);
  if (messages === null) throw new MalformedJsonError('The request body is not valid JSON.');

  const { Server, Transport, types } = loadSdk();
  const server = new Server(PLATFORM_SERVER, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  server.setRequestHandler(types.ListToolsRequestSchema, async () => ({ tools: await listTools(scope, servers, ports) }));
  server.setRequestHandler(types.CallToolRequestSchema, async (call) => {
    try {
      return await callTool(scope, call.params.name, call.params.arguments, ports);
    } catch (error) {
      if (error instanceof UnknownToolError) throw new types.McpError(types.ErrorCode.InvalidParams, error.message);
      throw error;
    }
  });
  const transport = new Transport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  const headers: Record<string, string> = {};
  for (const name of FORWARDED_HEADERS) if (request.headers[name] !== undefined) headers[name] = request.headers[name];

  const startedAt = ports.clock.now();
  let answer: { status: number; headers: Record<string, string>; body: string };
  try {
    await server.connect(transport);
    const response = await transport.handleRequest(new Request(platformMcpUrl(scope.urls), { method: 'POST', headers, body }));
    const returned: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      returned[name.toLowerCase()] = value;
    });
    answer = { status: response.status, headers: returned, body: await response.text() };
  } finally {
    await server.close().catch((error: unknown) => scope.log.warn('platform MCP server did not close', { error }));
  }

  const responseBody = responseBodyOf(answer);
  const failure = failureOf(answer, responseBody);
  await ports.usageLogs.write({
    lineage: scope.lineage,
    userId: actor.userId,
    resourceId: PLATFORM_SERVER.name,
    resourceType: 'mcp',
    requestType: requestTypeOf(messages),
    status: scope.signal.aborted ? 'timeout' : failure === null ? 'success' : 'error',
    request: { caller: actor.userId, ...(servers !== null ? { servers } : {}), body: messages },
    response: { status: answer.status, body: responseBody },
    durationMs: ports.clock.now() - startedAt,
    creditsUsed: 0,
    ...(failure !== null ? { error: failure } : {}),
  });
  const allow = answer.headers['allow'];
  return Reply.raw(answer.body, answer.headers['content-type'] ?? 'application/json', { status: answer.status, headers: allow !== undefined ? { allow } : {} });
}

/** No server-initiated event stream: each POST is answered in its own response (see the hosted endpoint's `noEventStream`). */
function noEventStream(): Reply {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    error: { code: -32000, message: 'Method not allowed: this endpoint answers each POST in its own response and offers no server-initiated event stream.' },
    id: null,
  });
  return Reply.raw(body, 'application/json', { status: 405, headers: { allow: 'POST' } });
}

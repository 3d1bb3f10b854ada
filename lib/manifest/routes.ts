import type { AuthMode, CallerScope, EnvelopeStyle, Host, HttpMethod, RouteSpec } from './types.ts';

const KIB = 1024;

/**
 * The SPEC's 900-second streaming chat, less a margin: Lambda stops a function at 900 s, so the
 * platform's own timeout (which ends the stream with an error marker and records the run) must
 * come first.
 */
const STREAMING_CHAT_TIMEOUT_SEC = 895;

/** Authenticated agent-reference requests (chat): 60 a minute per caller, shared by the three chat routes. */
const CHAT_RATE_LIMIT = { limit: 60, windowSec: 60, bucket: 'agent-chat' } as const;
/**
 * MCP endpoint requests (the SPEC leaves the rate open): 600 a minute per caller, by id and by slug
 * together; 60 per address for anonymous callers, whose tools/calls the server's owner pays for.
 */
const MCP_RATE_LIMIT = { limit: 600, windowSec: 60, bucket: 'mcp-endpoint', anonymousLimit: 60 } as const;

interface RouteInput {
  method: HttpMethod;
  path: string;
  area: string;
  handler: string;
  auth: AuthMode;
  /**
   * Defaults to `full`, so a route someone forgets to classify stays closed to role and run tokens;
   * only routes that run or read say `role`.
   */
  callers?: CallerScope;
  host?: Host;
  mode?: RouteSpec['mode'];
  style?: EnvelopeStyle;
  timeoutSec?: number;
  maxBodyBytes?: number;
  rateLimit?: RouteSpec['rateLimit'];
}

/** Fills the defaults every route shares, so the table below lists only what differs. */
function route(input: RouteInput): RouteSpec {
  return {
    id: `${input.area}.${input.handler}`,
    host: input.host ?? 'base',
    mode: input.mode ?? 'buffered',
    style: input.style ?? 'B',
    timeoutSec: input.timeoutSec ?? 29,
    maxBodyBytes: input.maxBodyBytes ?? 256 * KIB,
    method: input.method,
    path: input.path,
    area: input.area,
    handler: input.handler,
    auth: input.auth,
    callers: input.callers ?? 'full',
    ...(input.rateLimit ? { rateLimit: input.rateLimit } : {}),
  };
}

/**
 * Every HTTP route of the platform. The CDK stack and the local server are both built from this list.
 *
 * `callers: 'role'` marks what role and run tokens may do: run (chat, actions, MCP endpoints) and
 * read (resources, conversations, logs, the caller's own account and credits). Everything that
 * creates, changes or deletes, and every token, key and account route, keeps the `full` default.
 * Public routes say `role` because they admit anyone; they never read the credential.
 */
export const routes: readonly RouteSpec[] = [
  // Platform
  route({ method: 'GET', path: '/health', area: 'platform', handler: 'get-health', auth: 'public', callers: 'role' }),
  route({ method: 'GET', path: '/.well-known/platform.json', area: 'platform', handler: 'get-discovery', auth: 'public', callers: 'role' }),

  // Users (SPEC 4.14)
  route({ method: 'GET', path: '/user/info', area: 'users', handler: 'get-user-info', auth: 'required', callers: 'role' }),
  route({ method: 'GET', path: '/user/credits', area: 'users', handler: 'get-user-credits', auth: 'required', callers: 'role' }),
  route({ method: 'POST', path: '/user/alias', area: 'users', handler: 'set-user-alias', auth: 'required' }),
  route({ method: 'PUT', path: '/user/alias', area: 'users', handler: 'set-user-alias', auth: 'required' }),
  route({ method: 'PUT', path: '/user/profile', area: 'users', handler: 'update-user-profile', auth: 'required' }),
  route({ method: 'DELETE', path: '/user/account', area: 'users', handler: 'delete-user-account', auth: 'required' }),

  // Access tokens (SPEC 4.14)
  route({ method: 'POST', path: '/user/token/create', area: 'tokens', handler: 'create-token', auth: 'required' }),
  route({ method: 'GET', path: '/user/token/list', area: 'tokens', handler: 'list-tokens', auth: 'required' }),
  route({ method: 'GET', path: '/user/token/{tokenId}', area: 'tokens', handler: 'get-token', auth: 'required' }),
  route({ method: 'PUT', path: '/user/token/update', area: 'tokens', handler: 'update-token', auth: 'required' }),
  route({ method: 'POST', path: '/user/token/revoke', area: 'tokens', handler: 'revoke-token', auth: 'required' }),
  route({ method: 'POST', path: '/user/token/{tokenId}/regenerate', area: 'tokens', handler: 'regenerate-token', auth: 'required' }),

  // Agents (SPEC 4.1): envelope A. Chat is limited to 60 requests a minute per caller (SPEC part 8).
  route({ method: 'POST', path: '/agent/create', area: 'agents', handler: 'create-agent', auth: 'required', style: 'A', maxBodyBytes: 512 * KIB }),
  route({ method: 'GET', path: '/agent/list', area: 'agents', handler: 'list-agents', auth: 'optional', callers: 'role', style: 'A' }),
  route({ method: 'GET', path: '/agent/conversations/recent', area: 'agents', handler: 'list-recent-conversations', auth: 'required', callers: 'role', style: 'A' }),
  route({ method: 'GET', path: '/agent/{agentId}', area: 'agents', handler: 'get-agent', auth: 'optional', callers: 'role', style: 'A' }),
  route({ method: 'GET', path: '/agent/s/{owner}/{slug}', area: 'agents', handler: 'get-agent-by-slug', auth: 'optional', callers: 'role', style: 'A' }),
  route({ method: 'PUT', path: '/agent/update', area: 'agents', handler: 'update-agent', auth: 'required', style: 'A', maxBodyBytes: 512 * KIB }),
  route({ method: 'POST', path: '/agent/update', area: 'agents', handler: 'update-agent', auth: 'required', style: 'A', maxBodyBytes: 512 * KIB }),
  route({ method: 'DELETE', path: '/agent/delete', area: 'agents', handler: 'delete-agent', auth: 'required', style: 'A' }),
  route({ method: 'POST', path: '/agent/delete', area: 'agents', handler: 'delete-agent', auth: 'required', style: 'A' }),
  route({ method: 'GET', path: '/agent/{agentId}/conversations', area: 'agents', handler: 'list-agent-conversations', auth: 'required', callers: 'role', style: 'A' }),
  route({ method: 'GET', path: '/agent/{agentId}/conversation/{conversationId}', area: 'agents', handler: 'get-conversation', auth: 'required', callers: 'role', style: 'A' }),
  route({ method: 'GET', path: '/agent/{agentId}/conversations/{conversationId}', area: 'agents', handler: 'get-conversation-plural', auth: 'required', callers: 'role', style: 'A' }),
  route({ method: 'POST', path: '/agent/{agentId}/chat', area: 'agents', handler: 'chat', auth: 'required', callers: 'role', style: 'A', timeoutSec: 300, rateLimit: CHAT_RATE_LIMIT }),
  route({ method: 'POST', path: '/agent/{agentId}/chat', host: 'stream', area: 'agents', handler: 'chat-stream', auth: 'required', callers: 'role', style: 'A', mode: 'streaming', timeoutSec: STREAMING_CHAT_TIMEOUT_SEC, rateLimit: CHAT_RATE_LIMIT }),
  route({ method: 'GET', path: '/agent/{agentId}/chat', host: 'stream', area: 'agents', handler: 'chat-browser', auth: 'required', callers: 'role', style: 'A', mode: 'streaming', timeoutSec: STREAMING_CHAT_TIMEOUT_SEC, rateLimit: CHAT_RATE_LIMIT }),

  // Actions (SPEC 4.3): envelope A. Runs through the router stop at the 120-second gateway limit
  // (SPEC part 8: 504); the direct runtime routes and inline code honour the action's own timeout
  // (at most 300 s), so their routes allow 300 s plus time to bill and log. Keep these timeouts equal
  // to GATEWAY_TIMEOUT_SEC and DIRECT_ROUTE_TIMEOUT_SEC in functions/actions/execution.rules.ts (a unit test checks).
  route({ method: 'POST', path: '/action/create', area: 'actions', handler: 'create-action', auth: 'required', style: 'A', maxBodyBytes: 512 * KIB }),
  route({ method: 'PUT', path: '/action/update', area: 'actions', handler: 'update-action', auth: 'required', style: 'A', maxBodyBytes: 512 * KIB }),
  route({ method: 'DELETE', path: '/action/delete', area: 'actions', handler: 'delete-action', auth: 'required', style: 'A' }),
  route({ method: 'GET', path: '/action/list', area: 'actions', handler: 'list-actions', auth: 'optional', callers: 'role', style: 'A' }),
  route({ method: 'GET', path: '/action/info/{actionId}', area: 'actions', handler: 'get-action-info', auth: 'optional', callers: 'role', style: 'A' }),
  route({ method: 'GET', path: '/action/{actionId}', area: 'actions', handler: 'run-action', auth: 'required', callers: 'role', style: 'A', timeoutSec: 120 }),
  route({ method: 'POST', path: '/action/{actionId}', area: 'actions', handler: 'run-action', auth: 'required', callers: 'role', style: 'A', timeoutSec: 120 }),
  route({ method: 'POST', path: '/action/python-128mb/inline-code', area: 'actions', handler: 'run-inline-code', auth: 'required', callers: 'role', style: 'A', timeoutSec: 310, maxBodyBytes: 512 * KIB }),
  route({ method: 'GET', path: '/action/python-128mb/{actionId}', area: 'actions', handler: 'run-action-direct', auth: 'required', callers: 'role', style: 'A', timeoutSec: 310 }),
  route({ method: 'POST', path: '/action/python-128mb/{actionId}', area: 'actions', handler: 'run-action-direct', auth: 'required', callers: 'role', style: 'A', timeoutSec: 310 }),

  // MCP servers (SPEC 4.4): envelope B. Admin routes on the base host; the MCP endpoint on {mcp_url}
  // with optional auth (public servers answer anyone, private ones their owner), the 120-second
  // gateway limit (SPEC part 8) and a per-caller limit (user, or source IP when anonymous) shared by
  // both addresses. Source bodies may be up to 512 KB of code (MAX_SOURCE_BYTES), JSON-escaped.
  route({ method: 'POST', path: '/mcp-admin/create', area: 'mcp', handler: 'create-server', auth: 'required', maxBodyBytes: 1024 * KIB }),
  route({ method: 'GET', path: '/mcp-admin/list', area: 'mcp', handler: 'list-servers', auth: 'optional', callers: 'role' }),
  route({ method: 'GET', path: '/mcp-admin/{serverId}', area: 'mcp', handler: 'get-server', auth: 'optional', callers: 'role' }),
  route({ method: 'GET', path: '/mcp-admin/s/{owner}/{slug}', area: 'mcp', handler: 'get-server-by-slug', auth: 'optional', callers: 'role' }),
  route({ method: 'PUT', path: '/mcp-admin/update', area: 'mcp', handler: 'update-server', auth: 'required', maxBodyBytes: 1024 * KIB }),
  route({ method: 'DELETE', path: '/mcp-admin/delete', area: 'mcp', handler: 'delete-server', auth: 'required' }),
  route({ method: 'GET', path: '/mcp-admin/{serverId}/versions', area: 'mcp', handler: 'list-versions', auth: 'optional', callers: 'role' }),
  route({ method: 'GET', path: '/mcp-admin/{serverId}/versions/{version}', area: 'mcp', handler: 'get-version', auth: 'optional', callers: 'role' }),
  route({ method: 'POST', path: '/mcp-admin/{serverId}/rollback', area: 'mcp', handler: 'rollback-server', auth: 'required' }),
  route({ method: 'POST', path: '/mcp/{serverId}', host: 'mcp', area: 'mcp', handler: 'call-server', auth: 'optional', callers: 'role', timeoutSec: 120, rateLimit: MCP_RATE_LIMIT }),
  route({ method: 'GET', path: '/mcp/{serverId}', host: 'mcp', area: 'mcp', handler: 'call-server', auth: 'optional', callers: 'role', timeoutSec: 120, rateLimit: MCP_RATE_LIMIT }),
  route({ method: 'POST', path: '/mcp/s/{owner}/{slug}', host: 'mcp', area: 'mcp', handler: 'call-server-by-slug', auth: 'optional', callers: 'role', timeoutSec: 120, rateLimit: MCP_RATE_LIMIT }),
  route({ method: 'GET', path: '/mcp/s/{owner}/{slug}', host: 'mcp', area: 'mcp', handler: 'call-server-by-slug', auth: 'optional', callers: 'role', timeoutSec: 120, rateLimit: MCP_RATE_LIMIT }),

  // Role tokens (SPEC 4.14): scoped tokens with attached keys
  route({ method: 'POST', path: '/role-token/create', area: 'tokens', handler: 'create-role-token', auth: 'required' }),
  route({ method: 'GET', path: '/role-token/list', area: 'tokens', handler: 'list-role-tokens', auth: 'required' }),
  route({ method: 'POST', path: '/role-token/revoke', area: 'tokens', handler: 'revoke-role-token', auth: 'required' }),
  // Public: anyone holding a role token may check it, but not probe tokens at speed.
  route({ method: 'POST', path: '/role-token/validate', area: 'tokens', handler: 'validate-role-token', auth: 'public', callers: 'role', rateLimit: { limit: 60, windowSec: 60 } }),

  // Keys (SPEC 4.13). Checking whether one named key is stored is a read role tokens may make
  // (e.g. a CI job checking its prerequisites); listing names and hints stays with full scope, as
  // before, so a role token learns the owner's key names only by guessing them.
  route({ method: 'POST', path: '/keys/store', area: 'keys', handler: 'store-key', auth: 'required' }),
  route({ method: 'GET', path: '/keys/list', area: 'keys', handler: 'list-keys', auth: 'required' }),
  route({ method: 'GET', path: '/keys/check/{serviceName}', area: 'keys', handler: 'check-key', auth: 'required', callers: 'role' }),
  route({ method: 'DELETE', path: '/keys/{serviceName}', area: 'keys', handler: 'delete-key', auth: 'required' }),

  // OAuth (SPEC 4.13). The callback is a platform extra: the provider sends the user's browser there,
  // which carries no platform credential, so the single-use state identifies the account.
  route({ method: 'GET', path: '/oauth/authorize/{provider}', area: 'oauth', handler: 'authorize', auth: 'required' }),
  route({ method: 'GET', path: '/oauth/callback/{provider}', area: 'oauth', handler: 'callback', auth: 'public', callers: 'role' }),

  // Usage logs (SPEC 4.13); owner only. /logs/user is the SPEC's second name for /logs.
  route({ method: 'GET', path: '/logs', area: 'logs', handler: 'list-logs', auth: 'required', callers: 'role' }),
  route({ method: 'GET', path: '/logs/user', area: 'logs', handler: 'list-user-logs', auth: 'required', callers: 'role' }),
  route({ method: 'GET', path: '/logs/{requestId}', area: 'logs', handler: 'get-log', auth: 'required', callers: 'role' }),
  route({ method: 'GET', path: '/logs/request/{requestId}/trace', area: 'logs', handler: 'get-request-trace', auth: 'required', callers: 'role' }),
  route({ method: 'GET', path: '/logs/trace/{traceId}', area: 'logs', handler: 'get-trace', auth: 'required', callers: 'role' }),

  // Operators
  route({ method: 'POST', path: '/admin/users', area: 'admin', handler: 'create-user', auth: 'admin' }),
  route({ method: 'GET', path: '/admin/users', area: 'admin', handler: 'list-users', auth: 'admin' }),
  route({ method: 'POST', path: '/admin/users/{userId}/credits', area: 'admin', handler: 'grant-credits', auth: 'admin' }),
];

/** Areas in route order, each with its routes: one cloud function per area. */
export function routesByArea(all: readonly RouteSpec[] = routes): Map<string, RouteSpec[]> {
  const byArea = new Map<string, RouteSpec[]>();
  for (const r of all) {
    const list = byArea.get(r.area) ?? [];
    list.push(r);
    byArea.set(r.area, list);
  }
  return byArea;
}

/** Module path of a route's handler, relative to the repository root. */
export function handlerModulePath(r: Pick<RouteSpec, 'area' | 'handler'>): string {
  return `functions/${r.area}/handlers/${r.handler}.handler.ts`;
}

import { defineArea, providePort, KIB, type RouteInput } from '../../lib/manifest/define.ts';
import { createMcpServerStore } from './mcp.store.ts';

/**
 * MCP endpoint requests (the SPEC leaves the rate open): 600 a minute per caller, by id and by slug
 * together (and the platform's own MCP server, functions/platform-tools); 60 per address for anonymous
 * callers, whose tools/calls the server's owner pays for.
 */
export const MCP_RATE_LIMIT = { limit: 600, windowSec: 60, bucket: 'mcp-endpoint', anonymousLimit: 60 } as const;

/**
 * An MCP endpoint on the MCP host: POST carries JSON-RPC (GET is answered 405, as the Streamable HTTP
 * transport expects of a server without a stream), within the 120-second gateway limit, the shared
 * per-caller allowance and JSON-RPC errors. The hosted servers' endpoints and the platform's own
 * server (functions/platform-tools) are all made here.
 */
export function mcpEndpointRoutes(path: string, handler: string, auth: RouteInput['auth']): RouteInput[] {
  return (['POST', 'GET'] as const).map((method) => ({
    method,
    path,
    host: 'mcp',
    handler,
    auth,
    callers: 'role',
    timeoutSec: 120,
    rateLimit: MCP_RATE_LIMIT,
    errors: 'json-rpc',
  }));
}

/** MCP servers, their versions and the MCP endpoint (SPEC 4.4). */
export const mcpArea = defineArea({
  name: 'mcp',
  routes: [
    // MCP servers (SPEC 4.4): envelope B. Admin routes on the base host; the MCP endpoint on {mcp_url}
    // with optional auth (public servers answer anyone, private ones their owner), the 120-second
    // gateway limit (SPEC part 8) and a per-caller limit (user, or source IP when anonymous) shared by
    // both addresses. Source bodies may be up to 512 KB of code (MAX_SOURCE_BYTES), JSON-escaped.
    { method: 'POST', path: '/mcp-admin/create', handler: 'create-server', auth: 'required', maxBodyBytes: 1024 * KIB },
    { method: 'GET', path: '/mcp-admin/list', handler: 'list-servers', auth: 'optional', callers: 'role' },
    { method: 'GET', path: '/mcp-admin/{serverId}', handler: 'get-server', auth: 'optional', callers: 'role' },
    { method: 'GET', path: '/mcp-admin/s/{owner}/{slug}', handler: 'get-server-by-slug', auth: 'optional', callers: 'role' },
    { method: 'PUT', path: '/mcp-admin/update', handler: 'update-server', auth: 'required', maxBodyBytes: 1024 * KIB },
    { method: 'DELETE', path: '/mcp-admin/delete', handler: 'delete-server', auth: 'required' },
    { method: 'GET', path: '/mcp-admin/{serverId}/versions', handler: 'list-versions', auth: 'optional', callers: 'role' },
    { method: 'GET', path: '/mcp-admin/{serverId}/versions/{version}', handler: 'get-version', auth: 'optional', callers: 'role' },
    { method: 'POST', path: '/mcp-admin/{serverId}/rollback', handler: 'rollback-server', auth: 'required' },
    ...mcpEndpointRoutes('/mcp/{serverId}', 'call-server', 'optional'),
    ...mcpEndpointRoutes('/mcp/s/{owner}/{slug}', 'call-server-by-slug', 'optional'),
  ],
  tables: [
    // MCP servers (SPEC 4.4); `byOwner` lists an owner's, the sparse `publicServers` index the public ones.
    {
      name: 'mcp-servers',
      partitionKey: 'serverId',
      numberKeys: ['createdAt'],
      indexes: [
        { name: 'byOwner', partitionKey: 'ownerId', sortKey: 'createdAt' },
        { name: 'publicServers', partitionKey: 'publicListing', sortKey: 'createdAt' },
      ],
    },
    // `{ownerId}#{serverName}` -> serverId: MCP server names are unique per owner.
    { name: 'mcp-server-names', partitionKey: 'nameKey' },
    // One counter per owner: how many servers they hold, for the per-owner limit (core/db/owner-count.ts).
    { name: 'mcp-server-counts', partitionKey: 'ownerId' },
    // Append-only MCP versions; each written with attribute_not_exists, so a number is never written
    // twice. Sources past a threshold live in the blob store (content-addressed keys).
    { name: 'mcp-versions', partitionKey: 'serverId', sortKey: 'version', numberKeys: ['version'] },
  ],
  provides: {
    mcpServers: providePort({ tables: ['mcp-servers', 'mcp-server-names', 'mcp-server-counts', 'mcp-versions'], buckets: ['blobs'] }, ({ db, blobs, clock }) =>
      createMcpServerStore(db, blobs, clock),
    ),
  },
  uses: ['users', 'credits', 'keys', 'keysReader', 'mcpRuntime', 'usageLogs', 'searchIndex', 'paidAccess'],
});

import { jsonRpcBody } from '../../core/http/json-rpc-error.ts';
import { defineRoute } from '../../core/http/route.ts';
import { callMcpServer, findServer } from '../endpoint.service.ts';
import { mcpQuery, serverIdParams } from '../mcp.schema.ts';

/**
 * `POST` and `GET {mcp_url}/mcp/{serverId}`: the MCP protocol. The body is checked as JSON-RPC (`jsonRpcBody`), then goes
 * to the server as it came, and the response comes back raw.
 */
export default defineRoute({
  body: jsonRpcBody,
  params: serverIdParams,
  query: mcpQuery,
  // The server record is read while the rate limiter answers.
  prefetch: (ctx) => findServer({ serverId: ctx.params.serverId }, ctx.ports),
  run: (ctx) => callMcpServer(ctx, { serverId: ctx.params.serverId }, ctx.query.version, ctx.request, ctx.ports, ctx.prefetched),
});

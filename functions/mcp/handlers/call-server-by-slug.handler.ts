import { jsonRpcBody } from '../../core/http/json-rpc-error.ts';
import { defineRoute } from '../../core/http/route.ts';
import { callMcpServer, findServer } from '../endpoint.service.ts';
import { mcpQuery, mcpSlugParams } from '../mcp.schema.ts';

/** `POST` and `GET {mcp_url}/mcp/s/{owner}/{slug}`: as by id, the server found by its owner's alias and name. */
export default defineRoute({
  body: jsonRpcBody,
  params: mcpSlugParams,
  query: mcpQuery,
  // The server record is read while the rate limiter answers.
  prefetch: (ctx) => findServer({ owner: ctx.params.owner, slug: ctx.params.slug }, ctx.ports),
  run: (ctx) => callMcpServer(ctx, { owner: ctx.params.owner, slug: ctx.params.slug }, ctx.query.version, ctx.request, ctx.ports, ctx.prefetched),
});

import { defineRoute } from '../../core/http/route.ts';
import { callMcpServer } from '../endpoint.service.ts';
import { mcpQuery, mcpSlugParams } from '../mcp.schema.ts';

/** `POST` and `GET {mcp_url}/mcp/s/{owner}/{slug}`: as by id, the server found by its owner's alias and name. */
export default defineRoute({
  params: mcpSlugParams,
  query: mcpQuery,
  run: (ctx) => callMcpServer(ctx, { owner: ctx.params.owner, slug: ctx.params.slug }, ctx.query.version, ctx.request, ctx.ports),
});

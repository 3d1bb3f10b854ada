import { defineRoute } from '../../core/http/route.ts';
import { callMcpServer } from '../endpoint.service.ts';
import { mcpQuery, mcpSlugParams } from '../mcp.schema.ts';

/** `POST` and `GET {mcp_url}/mcp/s/{owner}/{slug}`: as by id, the server found by its owner's alias and name. */
export default defineRoute({
  params: mcpSlugParams,
  query: mcpQuery,
  run: ({ actor, params, query, request, ports, lineage, log, signal }) =>
    callMcpServer(actor, { owner: params.owner, slug: params.slug }, query.version, request, { ...ports, log }, lineage, signal),
});

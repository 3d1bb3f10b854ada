import { defineRoute } from '../../core/http/route.ts';
import { serverIdParams, versionsQuery } from '../mcp.schema.ts';
import { listVersions } from '../mcp.service.ts';

export default defineRoute({
  params: serverIdParams,
  query: versionsQuery,
  run: ({ actor, params, query, ports }) => listVersions(actor, params.serverId, query.limit, ports),
});

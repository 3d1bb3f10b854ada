import { defineRoute } from '../../core/http/route.ts';
import { serverIdParams, versionListResponse, versionsQuery } from '../mcp.schema.ts';
import { listVersions } from '../mcp.service.ts';

export default defineRoute({
  response: versionListResponse,
  params: serverIdParams,
  query: versionsQuery,
  run: ({ actor, params, query, ports }) => listVersions(actor, params.serverId, query.limit, ports),
});

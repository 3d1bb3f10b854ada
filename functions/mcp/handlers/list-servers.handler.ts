import { defineRoute } from '../../core/http/route.ts';
import { listServersQuery, serverListResponse } from '../mcp.schema.ts';
import { listServers } from '../mcp.service.ts';

export default defineRoute({
  response: serverListResponse,
  query: listServersQuery,
  run: ({ actor, query, ports, urls }) => listServers(actor, query, ports, urls),
});

import { defineRoute } from '../../core/http/route.ts';
import { listServersQuery } from '../mcp.schema.ts';
import { listServers } from '../mcp.service.ts';

export default defineRoute({
  query: listServersQuery,
  run: ({ actor, query, ports, urls }) => listServers(actor, query, ports, urls),
});

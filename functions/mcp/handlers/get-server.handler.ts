import { defineRoute } from '../../core/http/route.ts';
import { serverIdParams, serverResponse } from '../mcp.schema.ts';
import { getServer } from '../mcp.service.ts';

export default defineRoute({
  response: serverResponse,
  params: serverIdParams,
  run: ({ actor, params, ports, urls }) => getServer(actor, params.serverId, ports, urls),
});

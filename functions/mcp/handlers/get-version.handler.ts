import { defineRoute } from '../../core/http/route.ts';
import { versionParams, versionResponse } from '../mcp.schema.ts';
import { getVersion } from '../mcp.service.ts';

export default defineRoute({
  response: versionResponse,
  params: versionParams,
  run: ({ actor, params, ports }) => getVersion(actor, params.serverId, params.version, ports),
});

import { defineRoute } from '../../core/http/route.ts';
import { versionParams } from '../mcp.schema.ts';
import { getVersion } from '../mcp.service.ts';

export default defineRoute({
  params: versionParams,
  run: ({ actor, params, ports }) => getVersion(actor, params.serverId, params.version, ports),
});

import { defineRoute } from '../../core/http/route.ts';
import { serverResponse, slugParams } from '../mcp.schema.ts';
import { getServerBySlug } from '../mcp.service.ts';

export default defineRoute({
  response: serverResponse,
  params: slugParams,
  run: ({ actor, params, ports, urls }) => getServerBySlug(actor, params.owner, params.slug, ports, urls),
});

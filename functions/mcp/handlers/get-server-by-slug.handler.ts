import { defineRoute } from '../../core/http/route.ts';
import { slugParams } from '../mcp.schema.ts';
import { getServerBySlug } from '../mcp.service.ts';

export default defineRoute({
  params: slugParams,
  run: ({ actor, params, platform, request }) => getServerBySlug(actor, params.owner, params.slug, platform, request.baseUrl),
});

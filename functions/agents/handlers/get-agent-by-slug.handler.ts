import { defineRoute } from '../../core/http/route.ts';
import { slugParams } from '../agent.schema.ts';
import { getAgentBySlug } from '../agent.service.ts';

export default defineRoute({
  params: slugParams,
  run: ({ actor, params, ports, urls }) => getAgentBySlug(actor, params.owner, params.slug, ports, urls),
});

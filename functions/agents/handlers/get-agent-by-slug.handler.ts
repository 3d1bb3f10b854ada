import { defineRoute } from '../../core/http/route.ts';
import { agentResponse, slugParams } from '../agent.schema.ts';
import { getAgentBySlug } from '../agent.service.ts';

export default defineRoute({
  response: agentResponse,
  params: slugParams,
  run: ({ actor, params, ports, urls }) => getAgentBySlug(actor, params.owner, params.slug, ports, urls),
});

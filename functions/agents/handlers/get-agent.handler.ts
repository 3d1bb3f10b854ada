import { defineRoute } from '../../core/http/route.ts';
import { agentIdParams, agentResponse } from '../agent.schema.ts';
import { getAgent } from '../agent.service.ts';

export default defineRoute({
  response: agentResponse,
  params: agentIdParams,
  run: ({ actor, params, ports, urls }) => getAgent(actor, params.agentId, ports, urls),
});

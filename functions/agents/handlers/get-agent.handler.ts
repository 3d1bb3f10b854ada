import { defineRoute } from '../../core/http/route.ts';
import { agentIdParams } from '../agent.schema.ts';
import { getAgent } from '../agent.service.ts';

export default defineRoute({
  params: agentIdParams,
  run: ({ actor, params, ports, urls }) => getAgent(actor, params.agentId, ports, urls),
});

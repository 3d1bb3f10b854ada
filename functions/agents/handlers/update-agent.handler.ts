import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { agentResponse, updateAgentBody } from '../agent.schema.ts';
import { updateAgent } from '../agent.service.ts';

export default defineRoute({
  response: agentResponse,
  body: updateAgentBody,
  run: ({ actor, body, ports, urls }) => updateAgent(requireUser(actor), body, ports, urls),
});

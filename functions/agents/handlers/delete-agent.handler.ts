import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { agentDeletedResponse, agentIdBody } from '../agent.schema.ts';
import { deleteAgent } from '../agent.service.ts';

export default defineRoute({
  response: agentDeletedResponse,
  body: agentIdBody,
  run: ({ actor, body, ports, urls }) => deleteAgent(requireUser(actor), body.agentId, ports, urls),
});

import { defineRoute } from '../../core/http/route.ts';
import { agentResponse, createAgentBody } from '../agent.schema.ts';
import { createAgent } from '../agent.service.ts';

export default defineRoute({
  response: agentResponse,
  body: createAgentBody,
  run: ({ actor, body, ports, urls }) => createAgent(actor, body, ports, urls),
});

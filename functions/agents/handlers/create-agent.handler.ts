import { defineRoute } from '../../core/http/route.ts';
import { createAgentBody } from '../agent.schema.ts';
import { createAgent } from '../agent.service.ts';

export default defineRoute({
  body: createAgentBody,
  run: ({ actor, body, platform, request }) => createAgent(actor, body, platform, request.baseUrl),
});

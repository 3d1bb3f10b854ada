import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { conversationParams, conversationResponse } from '../agent.schema.ts';
import { getConversation } from '../agent.service.ts';

export default defineRoute({
  response: conversationResponse,
  params: conversationParams,
  run: ({ actor, params, ports }) => getConversation(requireUser(actor), params.agentId, params.conversationId, ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { conversationParams } from '../agent.schema.ts';
import { getConversation } from '../agent.service.ts';

export default defineRoute({
  params: conversationParams,
  run: ({ actor, params, ports }) => getConversation(requireUser(actor), params.agentId, params.conversationId, ports),
});

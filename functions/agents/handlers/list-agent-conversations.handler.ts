import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { agentConversationsResponse, agentIdParams, conversationListQuery } from '../agent.schema.ts';
import { listAgentConversations } from '../agent.service.ts';

export default defineRoute({
  response: agentConversationsResponse,
  params: agentIdParams,
  query: conversationListQuery,
  run: ({ actor, params, query, ports }) => listAgentConversations(requireUser(actor), params.agentId, query.limit, ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { conversationListQuery, recentConversationsResponse } from '../agent.schema.ts';
import { listRecentConversations } from '../agent.service.ts';

export default defineRoute({
  response: recentConversationsResponse,
  query: conversationListQuery,
  run: ({ actor, query, ports }) => listRecentConversations(requireUser(actor), query.limit, ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineStreamRoute } from '../../core/http/route.ts';
import { agentIdParams, browserChatQuery } from '../agent.schema.ts';
import { openChat } from '../chat.service.ts';
import { streamChat } from '../chat.stream.ts';

/** Browser test chat: the prompt in the query string, so a link in an address bar is enough. */
export default defineStreamRoute({
  params: agentIdParams,
  query: browserChatQuery,
  async run({ actor, params, query, ports, lineage, log, signal, urls }, stream) {
    const session = await openChat(requireUser(actor), params.agentId, query, { ...ports, log }, lineage, urls);
    await streamChat(session, stream, signal);
  },
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineStreamRoute } from '../../core/http/route.ts';
import { agentIdParams, chatBody } from '../agent.schema.ts';
import { openChat } from '../chat.service.ts';
import { streamChat } from '../chat.stream.ts';

export default defineStreamRoute({
  params: agentIdParams,
  body: chatBody,
  async run({ actor, params, body, ports, lineage, log, signal, urls }, stream) {
    const session = await openChat(requireUser(actor), params.agentId, body, { ...ports, log }, lineage, urls);
    await streamChat(session, stream, signal);
  },
});

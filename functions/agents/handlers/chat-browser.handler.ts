import { defineStreamRoute } from '../../core/http/route.ts';
import { agentIdParams, browserChatQuery } from '../agent.schema.ts';
import { openChat } from '../chat.service.ts';
import { chatStreamFormatOf, streamChat } from '../chat.stream.ts';

/** Browser test chat: the prompt in the query string, so a link in an address bar is enough. */
export default defineStreamRoute({
  params: agentIdParams,
  query: browserChatQuery,
  async run(ctx, stream) {
    const session = await openChat(ctx, ctx.params.agentId, ctx.query, ctx.ports);
    await streamChat(session, stream, ctx.signal, chatStreamFormatOf(ctx.request));
  },
});

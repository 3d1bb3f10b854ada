import { defineStreamRoute } from '../../core/http/route.ts';
import { agentIdParams, browserChatQuery } from '../chat.schema.ts';
import { openChat, readChat } from '../chat.service.ts';
import { chatStreamFormatOf, streamChat } from '../chat.stream.ts';

/** Browser test chat: the prompt in the query string, so a link in an address bar is enough. */
export default defineStreamRoute({
  params: agentIdParams,
  query: browserChatQuery,
  // The agent (and the conversation) are read while the rate limiter answers.
  prefetch: (ctx) => readChat(ctx.params.agentId, ctx.query.conversationId, ctx.ports),
  async run(ctx, stream) {
    const session = await openChat(ctx, ctx.params.agentId, ctx.query, ctx.ports, ctx.prefetched);
    await streamChat(session, stream, ctx.signal, chatStreamFormatOf(ctx.request));
  },
});

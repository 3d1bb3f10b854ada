import { defineStreamRoute } from '../../core/http/route.ts';
import { agentIdParams, chatBody } from '../chat.schema.ts';
import { openChat, readChat } from '../chat.service.ts';
import { chatStreamFormatOf, streamChat } from '../chat.stream.ts';

export default defineStreamRoute({
  params: agentIdParams,
  body: chatBody,
  // The agent (and the conversation) are read while the rate limiter answers.
  prefetch: (ctx) => readChat(ctx.params.agentId, ctx.body.conversationId, ctx.ports),
  async run(ctx, stream) {
    const session = await openChat(ctx, ctx.params.agentId, ctx.body, ctx.ports, ctx.prefetched);
    await streamChat(session, stream, ctx.signal, chatStreamFormatOf(ctx.request));
  },
});

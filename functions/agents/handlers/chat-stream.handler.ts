import { defineStreamRoute } from '../../core/http/route.ts';
import { agentIdParams, chatBody } from '../agent.schema.ts';
import { openChat } from '../chat.service.ts';
import { chatStreamFormatOf, streamChat } from '../chat.stream.ts';

export default defineStreamRoute({
  params: agentIdParams,
  body: chatBody,
  async run(ctx, stream) {
    const session = await openChat(ctx, ctx.params.agentId, ctx.body, ctx.ports);
    await streamChat(session, stream, ctx.signal, chatStreamFormatOf(ctx.request));
  },
});

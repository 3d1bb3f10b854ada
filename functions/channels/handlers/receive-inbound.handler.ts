import { defineRoute, Reply } from '../../core/http/route.ts';
import { inboundParams } from '../channel.schema.ts';
import { receiveInbound } from '../inbound.service.ts';

/** A platform's delivery: no user auth; the raw body is read here, since signatures are over its bytes. */
export default defineRoute({
  params: inboundParams,
  async run(ctx) {
    const answer = await receiveInbound(ctx, ctx.params.channelId, ctx.params.platform, ctx.request, ctx.ports);
    return Reply.raw(answer.body, answer.contentType, { status: answer.status });
  },
});

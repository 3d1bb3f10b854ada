import * as z from 'zod';
import { defineRoute, Reply } from '../../core/http/route.ts';
import { answerInbound } from '../inbound.service.ts';

/** The SPEC's `.../whatsapp` name of a messenger channel's URL: the same verification and deliveries as its webhookUrl. */
export default defineRoute({
  params: z.object({ channelId: z.string().max(64) }),
  // The messenger sends JSON and reads JSON, or the echoed challenge of its verification.
  rawBody: ['application/json'],
  rawContentType: ['application/json', 'text/plain'],
  async run(ctx) {
    const answer = await answerInbound(ctx, ctx.params.channelId, 'whatsapp', ctx.request, ctx.ports);
    return Reply.raw(answer.body, answer.contentType, { status: answer.status });
  },
});

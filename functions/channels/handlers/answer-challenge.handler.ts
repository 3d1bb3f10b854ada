import * as z from 'zod';
import { defineRoute, Reply } from '../../core/http/route.ts';
import { answerMessengerChallenge } from '../inbound.service.ts';

export default defineRoute({
  params: z.object({ channelId: z.string().max(64) }),
  async run(ctx) {
    const answer = await answerMessengerChallenge(ctx.params.channelId, ctx.request, ctx.ports);
    return Reply.raw(answer.body, answer.contentType, { status: answer.status });
  },
});

import { defineRoute, Reply } from '../../core/http/route.ts';
import { INBOUND_ANSWER_TYPES, INBOUND_BODY_TYPES, inboundParams } from '../channel.schema.ts';
import { answerInbound } from '../inbound.service.ts';

/**
 * A platform's request on a channel's webhookUrl: a delivery (POST), or the messenger's
 * verification (GET). No user auth; the raw body is read here, since signatures are over its bytes.
 */
export default defineRoute({
  params: inboundParams,
  // Each service's own format: JSON from most, a form from the SMS and phone service; answered in
  // what the service reads (JSON, TwiML, or the verification's echoed text).
  rawBody: INBOUND_BODY_TYPES,
  rawContentType: INBOUND_ANSWER_TYPES,
  async run(ctx) {
    const answer = await answerInbound(ctx, ctx.params.channelId, ctx.params.platform, ctx.request, ctx.ports);
    return Reply.raw(answer.body, answer.contentType, { status: answer.status });
  },
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { callBody, callPlacedResponse, channelIdParams } from '../channel.schema.ts';
import { callNumber } from '../channel.service.ts';

export default defineRoute({
  response: callPlacedResponse,
  params: channelIdParams,
  body: callBody,
  run: (ctx) => callNumber(ctx, requireUser(ctx.actor), ctx.params.channelId, ctx.body.to, ctx.ports),
});

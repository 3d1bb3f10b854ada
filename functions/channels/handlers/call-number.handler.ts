import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { callBody, channelIdParams } from '../channel.schema.ts';
import { callNumber } from '../channel.service.ts';

export default defineRoute({
  params: channelIdParams,
  body: callBody,
  run: (ctx) => callNumber(ctx, requireUser(ctx.actor), ctx.params.channelId, ctx.body.to, ctx.ports),
});

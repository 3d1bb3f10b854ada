import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { channelIdParams, channelResponse } from '../channel.schema.ts';
import { getChannel } from '../channel.service.ts';

export default defineRoute({
  response: channelResponse,
  params: channelIdParams,
  run: (ctx) => getChannel(ctx, requireUser(ctx.actor), ctx.params.channelId, ctx.ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { channelIdParams, channelResponse, updateChannelBody } from '../channel.schema.ts';
import { updateChannel } from '../channel.service.ts';

export default defineRoute({
  response: channelResponse,
  params: channelIdParams,
  body: updateChannelBody,
  run: (ctx) => updateChannel(ctx, requireUser(ctx.actor), ctx.params.channelId, ctx.body, ctx.ports),
});

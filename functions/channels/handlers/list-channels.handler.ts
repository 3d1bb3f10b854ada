import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { channelListResponse, listChannelsQuery } from '../channel.schema.ts';
import { listChannels } from '../channel.service.ts';

export default defineRoute({
  response: channelListResponse,
  query: listChannelsQuery,
  run: (ctx) => listChannels(ctx, requireUser(ctx.actor), ctx.query, ctx.ports),
});

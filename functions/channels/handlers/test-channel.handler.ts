import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { channelIdParams, channelTestResponse, testBody } from '../channel.schema.ts';
import { testChannel } from '../channel.service.ts';

export default defineRoute({
  response: channelTestResponse,
  params: channelIdParams,
  body: testBody,
  run: (ctx) => testChannel(ctx, requireUser(ctx.actor), ctx.params.channelId, ctx.body.message, ctx.ports),
});

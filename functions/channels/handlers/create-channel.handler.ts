import { defineRoute } from '../../core/http/route.ts';
import { channelCreatedResponse, createChannelBody } from '../channel.schema.ts';
import { createChannel } from '../channel.service.ts';

export default defineRoute({
  response: channelCreatedResponse,
  body: createChannelBody,
  run: (ctx) => createChannel(ctx, ctx.body, ctx.ports),
});

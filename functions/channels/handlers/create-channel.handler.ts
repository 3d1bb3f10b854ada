import { defineRoute } from '../../core/http/route.ts';
import { createChannelBody } from '../channel.schema.ts';
import { createChannel } from '../channel.service.ts';

export default defineRoute({
  body: createChannelBody,
  run: (ctx) => createChannel(ctx, ctx.body, ctx.ports),
});

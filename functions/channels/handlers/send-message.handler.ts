import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { channelIdParams, sendBody } from '../channel.schema.ts';
import { sendMessage } from '../channel.service.ts';

export default defineRoute({
  params: channelIdParams,
  body: sendBody,
  run: ({ actor, params, body, ports }) => sendMessage(requireUser(actor), params.channelId, body, ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { channelIdParams, messageSentResponse, sendBody } from '../channel.schema.ts';
import { sendMessage } from '../channel.service.ts';

export default defineRoute({
  response: messageSentResponse,
  params: channelIdParams,
  body: sendBody,
  run: ({ actor, params, body, ports }) => sendMessage(requireUser(actor), params.channelId, body, ports),
});

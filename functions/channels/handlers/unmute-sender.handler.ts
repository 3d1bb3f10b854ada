import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { channelIdParams, senderMutedResponse, unmuteBody } from '../channel.schema.ts';
import { unmuteSender } from '../channel.service.ts';

export default defineRoute({
  response: senderMutedResponse,
  params: channelIdParams,
  body: unmuteBody,
  run: ({ actor, params, body, ports }) => unmuteSender(requireUser(actor), params.channelId, body.senderId, ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { channelIdParams, muteBody, senderMutedResponse } from '../channel.schema.ts';
import { muteSender } from '../channel.service.ts';

export default defineRoute({
  response: senderMutedResponse,
  params: channelIdParams,
  body: muteBody,
  run: ({ actor, params, body, ports }) => muteSender(requireUser(actor), params.channelId, body, ports),
});

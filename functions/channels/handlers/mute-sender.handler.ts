import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { channelIdParams, muteBody } from '../channel.schema.ts';
import { muteSender } from '../channel.service.ts';

export default defineRoute({
  params: channelIdParams,
  body: muteBody,
  run: ({ actor, params, body, ports }) => muteSender(requireUser(actor), params.channelId, body, ports),
});

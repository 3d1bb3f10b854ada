import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { channelIdParams, mutedSendersResponse } from '../channel.schema.ts';
import { listMutedSenders } from '../channel.service.ts';

export default defineRoute({
  response: mutedSendersResponse,
  params: channelIdParams,
  run: ({ actor, params, ports }) => listMutedSenders(requireUser(actor), params.channelId, ports),
});

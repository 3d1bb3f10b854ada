import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { channelDeletedResponse, channelIdParams } from '../channel.schema.ts';
import { deleteChannel } from '../channel.service.ts';

export default defineRoute({
  response: channelDeletedResponse,
  params: channelIdParams,
  run: ({ actor, params, ports }) => deleteChannel(requireUser(actor), params.channelId, ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { embedTokenIdParams } from '../embed.schema.ts';
import { revokeEmbed } from '../embed.service.ts';

export default defineRoute({
  params: embedTokenIdParams,
  run: ({ actor, params, ports }) => revokeEmbed(requireUser(actor), params.embedTokenId, ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { embedRevokedResponse, embedTokenIdParams } from '../embed.schema.ts';
import { revokeEmbed } from '../embed.service.ts';

export default defineRoute({
  response: embedRevokedResponse,
  params: embedTokenIdParams,
  run: ({ actor, params, ports }) => revokeEmbed(requireUser(actor), params.embedTokenId, ports),
});

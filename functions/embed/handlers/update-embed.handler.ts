import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { embedResponse, embedTokenIdParams, updateEmbedBody } from '../embed.schema.ts';
import { updateEmbed } from '../embed.service.ts';

export default defineRoute({
  response: embedResponse,
  params: embedTokenIdParams,
  body: updateEmbedBody,
  run: ({ actor, params, body, ports }) => updateEmbed(requireUser(actor), params.embedTokenId, body, ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { createEmbedBody, embedCreatedResponse } from '../embed.schema.ts';
import { createEmbed } from '../embed.service.ts';

export default defineRoute({
  response: embedCreatedResponse,
  body: createEmbedBody,
  run: ({ actor, body, ports, urls }) => createEmbed(requireUser(actor), body, ports, urls),
});

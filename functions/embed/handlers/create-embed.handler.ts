import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { createEmbedBody } from '../embed.schema.ts';
import { createEmbed } from '../embed.service.ts';

export default defineRoute({
  body: createEmbedBody,
  run: ({ actor, body, ports, urls }) => createEmbed(requireUser(actor), body, ports, urls),
});

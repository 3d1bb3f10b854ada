import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { listEmbedsQuery } from '../embed.schema.ts';
import { listEmbeds } from '../embed.service.ts';

export default defineRoute({
  query: listEmbedsQuery,
  run: ({ actor, query, ports }) => listEmbeds(requireUser(actor), query, ports),
});

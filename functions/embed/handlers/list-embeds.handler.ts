import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { embedListResponse, listEmbedsQuery } from '../embed.schema.ts';
import { listEmbeds } from '../embed.service.ts';

export default defineRoute({
  response: embedListResponse,
  query: listEmbedsQuery,
  run: ({ actor, query, ports }) => listEmbeds(requireUser(actor), query, ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { resourcesQuery, resourcesResponse } from '../analytics.schema.ts';
import { getResources } from '../analytics.service.ts';

export default defineRoute({
  response: resourcesResponse,
  query: resourcesQuery,
  run: ({ actor, query, ports }) => getResources(requireUser(actor), query, ports),
});

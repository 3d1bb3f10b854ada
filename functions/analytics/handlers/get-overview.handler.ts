import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { overviewQuery, overviewResponse } from '../analytics.schema.ts';
import { getOverview } from '../analytics.service.ts';

export default defineRoute({
  response: overviewResponse,
  query: overviewQuery,
  run: ({ actor, query, ports }) => getOverview(requireUser(actor), query, ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { overviewQuery } from '../analytics.schema.ts';
import { getOverview } from '../analytics.service.ts';

export default defineRoute({
  query: overviewQuery,
  run: ({ actor, query, ports }) => getOverview(requireUser(actor), query, ports),
});

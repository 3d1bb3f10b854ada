import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { timeseriesQuery, timeseriesResponse } from '../analytics.schema.ts';
import { getTimeseries } from '../analytics.service.ts';

export default defineRoute({
  response: timeseriesResponse,
  query: timeseriesQuery,
  run: ({ actor, query, ports }) => getTimeseries(requireUser(actor), query, ports),
});

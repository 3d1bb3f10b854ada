import { defineRoute } from '../../core/http/route.ts';
import { checkQuery, starCheckResponse } from '../star.schema.ts';
import { checkStar } from '../star.service.ts';

export default defineRoute({
  response: starCheckResponse,
  query: checkQuery,
  run: ({ actor, query, ports }) => checkStar(actor, query.resourceId, ports),
});

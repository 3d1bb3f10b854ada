import { defineRoute } from '../../core/http/route.ts';
import { listStarsQuery, starListResponse } from '../star.schema.ts';
import { listStars } from '../star.service.ts';

export default defineRoute({
  response: starListResponse,
  query: listStarsQuery,
  run: ({ actor, query, ports }) => listStars(actor, query, ports),
});

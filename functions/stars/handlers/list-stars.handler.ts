import { defineRoute } from '../../core/http/route.ts';
import { listStarsQuery } from '../star.schema.ts';
import { listStars } from '../star.service.ts';

export default defineRoute({
  query: listStarsQuery,
  run: ({ actor, query, ports }) => listStars(actor, query, ports),
});

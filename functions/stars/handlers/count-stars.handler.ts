import { defineRoute } from '../../core/http/route.ts';
import { countParams } from '../star.schema.ts';
import { countStars } from '../star.service.ts';

export default defineRoute({
  params: countParams,
  run: ({ params, ports }) => countStars(params.resourceId, ports),
});

import { defineRoute } from '../../core/http/route.ts';
import { countParams, starCountResponse } from '../star.schema.ts';
import { countStars } from '../star.service.ts';

export default defineRoute({
  response: starCountResponse,
  params: countParams,
  run: ({ params, ports }) => countStars(params.resourceId, ports),
});

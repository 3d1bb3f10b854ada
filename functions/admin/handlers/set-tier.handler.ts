import { defineRoute } from '../../core/http/route.ts';
import { setTierBody, userIdParams } from '../admin.schema.ts';
import { setTier } from '../admin.service.ts';

export default defineRoute({
  params: userIdParams,
  body: setTierBody,
  run: ({ params, body, ports }) => setTier(params.userId, body.tier, ports),
});

import { defineRoute } from '../../core/http/route.ts';
import { setTierBody, tierSetResponse, userIdParams } from '../admin.schema.ts';
import { setTier } from '../admin.service.ts';

export default defineRoute({
  response: tierSetResponse,
  params: userIdParams,
  body: setTierBody,
  run: ({ params, body, ports }) => setTier(params.userId, body.tier, ports),
});

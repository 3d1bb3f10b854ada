import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { checkoutBody, checkoutResponse } from '../billing.schema.ts';
import { createPlanCheckout } from '../subscription.service.ts';

export default defineRoute({
  response: checkoutResponse,
  body: checkoutBody,
  run: ({ actor, body, urls, ports }) => createPlanCheckout(requireUser(actor), body.tier, urls.baseUrl, ports),
});

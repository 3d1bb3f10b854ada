import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { checkoutResponse, resourceParams } from '../billing.schema.ts';
import { subscribeToResource } from '../resource-subscription.service.ts';

export default defineRoute({
  response: checkoutResponse,
  params: resourceParams,
  run: ({ actor, params, urls, ports }) => subscribeToResource(requireUser(actor), params.resourceId, urls.baseUrl, ports),
});

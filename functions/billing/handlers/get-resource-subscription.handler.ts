import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { resourceParams, resourceSubscriptionResponse } from '../billing.schema.ts';
import { getResourceSubscription } from '../resource-subscription.service.ts';

export default defineRoute({
  response: resourceSubscriptionResponse,
  params: resourceParams,
  run: ({ actor, params, ports }) => getResourceSubscription(requireUser(actor), params.resourceId, ports),
});

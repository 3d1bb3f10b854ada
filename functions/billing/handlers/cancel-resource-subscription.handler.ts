import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { resourceParams, subscriptionCancelledResponse } from '../billing.schema.ts';
import { cancelResourceSubscription } from '../resource-subscription.service.ts';

export default defineRoute({
  response: subscriptionCancelledResponse,
  params: resourceParams,
  run: ({ actor, params, ports }) => cancelResourceSubscription(requireUser(actor), params.resourceId, ports),
});

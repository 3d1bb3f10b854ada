import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { userSubscriptionResponse } from '../billing.schema.ts';
import { getUserSubscription } from '../subscription.service.ts';

export default defineRoute({
  response: userSubscriptionResponse,
  run: ({ actor, ports }) => getUserSubscription(requireUser(actor), ports),
});

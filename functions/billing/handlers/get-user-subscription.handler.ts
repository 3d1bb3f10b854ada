import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { getUserSubscription } from '../subscription.service.ts';

export default defineRoute({
  run: ({ actor, ports }) => getUserSubscription(requireUser(actor), ports),
});

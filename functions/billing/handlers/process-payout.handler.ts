import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { payoutResponse } from '../billing.schema.ts';
import { processPayout } from '../earnings.service.ts';

export default defineRoute({
  response: payoutResponse,
  run: ({ actor, ports }) => processPayout(requireUser(actor), ports),
});

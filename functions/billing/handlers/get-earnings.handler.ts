import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { earningsResponse } from '../billing.schema.ts';
import { getEarnings } from '../earnings.service.ts';

export default defineRoute({
  response: earningsResponse,
  run: ({ actor, ports }) => getEarnings(requireUser(actor), ports),
});

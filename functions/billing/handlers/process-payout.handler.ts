import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { processPayout } from '../earnings.service.ts';

export default defineRoute({
  run: ({ actor, ports }) => processPayout(requireUser(actor), ports),
});

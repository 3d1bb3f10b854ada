import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { getEarnings } from '../earnings.service.ts';

export default defineRoute({
  run: ({ actor, ports }) => getEarnings(requireUser(actor), ports),
});

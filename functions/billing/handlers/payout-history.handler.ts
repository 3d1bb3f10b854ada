import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { payoutHistory } from '../earnings.service.ts';

export default defineRoute({
  run: ({ actor, ports }) => payoutHistory(requireUser(actor), ports),
});

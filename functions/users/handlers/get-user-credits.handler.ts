import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { getUserCredits } from '../user.service.ts';

export default defineRoute({
  run: ({ actor, ports }) => getUserCredits(requireUser(actor), ports),
});

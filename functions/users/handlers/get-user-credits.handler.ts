import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { userCreditsResponse } from '../user.schema.ts';
import { getUserCredits } from '../user.service.ts';

export default defineRoute({
  response: userCreditsResponse,
  run: ({ actor, ports }) => getUserCredits(requireUser(actor), ports),
});

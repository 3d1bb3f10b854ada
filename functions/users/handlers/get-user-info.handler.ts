import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { userResponse } from '../user.schema.ts';
import { getUserInfo } from '../user.service.ts';

export default defineRoute({
  response: userResponse,
  run: ({ actor, ports }) => getUserInfo(requireUser(actor), ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { getUserInfo } from '../user.service.ts';

export default defineRoute({
  run: ({ actor, ports }) => getUserInfo(requireUser(actor), ports),
});

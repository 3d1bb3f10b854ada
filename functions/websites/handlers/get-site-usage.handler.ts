import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { getUsage } from '../websites.service.ts';

export default defineRoute({
  run: ({ actor, ports }) => getUsage(requireUser(actor), ports),
});

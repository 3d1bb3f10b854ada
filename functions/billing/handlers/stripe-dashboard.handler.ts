import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { dashboardLink } from '../earnings.service.ts';

export default defineRoute({
  run: ({ actor, ports }) => dashboardLink(requireUser(actor), ports),
});

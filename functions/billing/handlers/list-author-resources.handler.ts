import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { listAuthorResources } from '../earnings.service.ts';

export default defineRoute({
  run: ({ actor, ports }) => listAuthorResources(requireUser(actor), ports),
});

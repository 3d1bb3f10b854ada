import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { linkResponse } from '../billing.schema.ts';
import { dashboardLink } from '../earnings.service.ts';

export default defineRoute({
  response: linkResponse,
  run: ({ actor, ports }) => dashboardLink(requireUser(actor), ports),
});

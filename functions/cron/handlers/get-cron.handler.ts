import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { cronIdParams } from '../cron.schema.ts';
import { getCron } from '../cron.service.ts';

export default defineRoute({
  params: cronIdParams,
  run: ({ actor, params, ports }) => getCron(requireUser(actor), params.cronId, ports),
});

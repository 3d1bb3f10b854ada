import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { cronIdParams, cronResponse } from '../cron.schema.ts';
import { getCron } from '../cron.service.ts';

export default defineRoute({
  response: cronResponse,
  params: cronIdParams,
  run: ({ actor, params, ports }) => getCron(requireUser(actor), params.cronId, ports),
});

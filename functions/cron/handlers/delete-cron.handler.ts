import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { cronDeletedResponse, cronIdParams } from '../cron.schema.ts';
import { deleteCron } from '../cron.service.ts';

export default defineRoute({
  response: cronDeletedResponse,
  params: cronIdParams,
  run: ({ actor, params, ports }) => deleteCron(requireUser(actor), params.cronId, ports),
});

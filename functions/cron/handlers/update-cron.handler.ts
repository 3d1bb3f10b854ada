import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { cronIdParams, cronResponse, updateCronBody } from '../cron.schema.ts';
import { updateCron } from '../cron.service.ts';

export default defineRoute({
  response: cronResponse,
  params: cronIdParams,
  body: updateCronBody,
  run: ({ actor, params, body, ports }) => updateCron(requireUser(actor), params.cronId, body, ports),
});

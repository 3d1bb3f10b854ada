import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { createCronBody, cronResponse } from '../cron.schema.ts';
import { createCron } from '../cron.service.ts';

export default defineRoute({
  response: cronResponse,
  body: createCronBody,
  run: ({ actor, body, ports }) => createCron(requireUser(actor), body, ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { bulkBody, bulkResponse } from '../task.schema.ts';
import { bulkTasks } from '../task.service.ts';

export default defineRoute({
  response: bulkResponse,
  body: bulkBody,
  run: ({ actor, body, ports }) => bulkTasks(requireUser(actor), body, ports),
});

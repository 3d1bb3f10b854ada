import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { statusBody, taskIdParams, taskResponse } from '../task.schema.ts';
import { setTaskStatus } from '../task.service.ts';

export default defineRoute({
  response: taskResponse,
  params: taskIdParams,
  body: statusBody,
  run: ({ actor, params, body, ports }) => setTaskStatus(requireUser(actor), params.taskId, body, ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { taskIdParams, taskResponse } from '../task.schema.ts';
import { getTask } from '../task.service.ts';

export default defineRoute({
  response: taskResponse,
  params: taskIdParams,
  run: ({ actor, params, ports }) => getTask(requireUser(actor), params.taskId, ports),
});

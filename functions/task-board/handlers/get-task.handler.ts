import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { taskIdParams } from '../task.schema.ts';
import { getTask } from '../task.service.ts';

export default defineRoute({
  params: taskIdParams,
  run: ({ actor, params, ports }) => getTask(requireUser(actor), params.taskId, ports),
});

import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { taskIdParams, taskResponse, updateTaskBody } from '../task.schema.ts';
import { updateTask } from '../task.service.ts';

export default defineRoute({
  response: taskResponse,
  params: taskIdParams,
  body: updateTaskBody,
  run: ({ actor, params, body: { version, ...changes }, ports }) => updateTask(requireUser(actor), params.taskId, version, changes, ports),
});

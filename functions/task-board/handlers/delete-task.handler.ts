import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { deleteTaskQuery, taskDeletedResponse, taskIdParams } from '../task.schema.ts';
import { deleteTask } from '../task.service.ts';

export default defineRoute({
  response: taskDeletedResponse,
  params: taskIdParams,
  query: deleteTaskQuery,
  run: ({ actor, params, query, ports }) => deleteTask(requireUser(actor), params.taskId, query.version, ports),
});

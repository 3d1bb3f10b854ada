import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute } from '../../core/http/route.ts';
import { listTasksQuery, taskListResponse } from '../task.schema.ts';
import { listTasks } from '../task.service.ts';

export default defineRoute({
  response: taskListResponse,
  query: listTasksQuery,
  run: ({ actor, query, ports }) => listTasks(requireUser(actor), query, ports),
});

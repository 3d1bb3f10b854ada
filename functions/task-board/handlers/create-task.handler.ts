import { requireUser } from '../../core/auth/actor.ts';
import { defineRoute, Reply } from '../../core/http/route.ts';
import { createTaskBody, taskResponse } from '../task.schema.ts';
import { createTask } from '../task.service.ts';

export default defineRoute({
  response: taskResponse,
  body: createTaskBody,
  run: async ({ actor, body, ports }) => Reply.ok(await createTask(requireUser(actor), body, ports), { status: 201 }),
});

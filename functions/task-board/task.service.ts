import type { UserActor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import { ConflictError, NotFoundError } from '../core/errors.ts';
import { toErrorResponse } from '../core/http/error-response.ts';
import { validate } from '../core/http/pipeline.ts';
import { sortableId } from '../core/ids.ts';
import {
  bulkDeleteOperation,
  bulkUpdateOperation,
  createTaskBody,
  presentTask,
  type CreateTaskInput,
  type ListTasksQuery,
  type PresentedTask,
  type TaskChanges,
  type TaskRecord,
  type TaskStatus,
} from './task.schema.ts';
import { sortKeysOf, type TaskStore } from './task.store.ts';

export interface TaskPorts {
  readonly taskBoard: TaskStore;
  readonly clock: Clock;
}

/** The caller's task; another user's answers 404 like a missing one, so ids reveal nothing. */
async function ownedTask(actor: UserActor, taskId: string, ports: TaskPorts): Promise<TaskRecord> {
  const task = await ports.taskBoard.get(actor.userId, taskId);
  if (task === null) throw new NotFoundError(`Task ${taskId} not found.`, 'TASK_NOT_FOUND');
  return task;
}

function conflict(taskId: string, current: TaskRecord): ConflictError {
  return new ConflictError(
    `Task ${taskId} was changed by another request (it is at version ${current.version}); read it and apply your change again.`,
    'TASK_VERSION_CONFLICT',
  );
}

export async function createTask(actor: UserActor, input: CreateTaskInput, ports: TaskPorts): Promise<PresentedTask> {
  const now = ports.clock.now();
  const base = { ...input, tags: [...input.tags], userId: actor.userId, taskId: sortableId('task_', now), createdAt: now, updatedAt: now, version: 1 };
  const task: TaskRecord = { ...base, ...sortKeysOf(base) };
  if (!(await ports.taskBoard.create(task))) throw new ConflictError(`Task id ${task.taskId} is taken; try again.`);
  return presentTask(task);
}

export async function getTask(actor: UserActor, taskId: string, ports: TaskPorts): Promise<PresentedTask> {
  return presentTask(await ownedTask(actor, taskId, ports));
}

/**
 * Applies `changes` to the task if it is still at `version`: of two edits made from the same read,
 * one lands and the other is a 409 naming the version to read, never a silent overwrite.
 */
export async function updateTask(actor: UserActor, taskId: string, version: number, changes: TaskChanges, ports: TaskPorts): Promise<PresentedTask> {
  const current = await ownedTask(actor, taskId, ports);
  if (current.version !== version) throw conflict(taskId, current);
  const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as TaskChanges;
  const merged = { ...current, ...defined, updatedAt: Math.max(ports.clock.now(), current.updatedAt), version: current.version + 1 };
  const next: TaskRecord = { ...merged, ...sortKeysOf(merged) };
  if (await ports.taskBoard.replace(next, version)) return presentTask(next);
  // Changed (or deleted) between the read and the write.
  throw conflict(taskId, await ownedTask(actor, taskId, ports));
}

export function setTaskStatus(actor: UserActor, taskId: string, input: { status: TaskStatus; version: number }, ports: TaskPorts): Promise<PresentedTask> {
  return updateTask(actor, taskId, input.version, { status: input.status }, ports);
}

/** Without `version` it removes whatever is there; with one, only that version (409 otherwise). */
export async function deleteTask(actor: UserActor, taskId: string, version: number | undefined, ports: TaskPorts): Promise<{ taskId: string; deleted: true }> {
  if (await ports.taskBoard.delete(actor.userId, taskId, version)) return { taskId, deleted: true };
  throw conflict(taskId, await ownedTask(actor, taskId, ports));
}

export async function listTasks(actor: UserActor, query: ListTasksQuery, ports: TaskPorts) {
  const order = query.order ?? (query.sort === 'dueAt' ? 'asc' : 'desc');
  const filter = { status: query.status, priority: query.priority, tag: query.tag, resourceId: query.resourceId };
  const page = await ports.taskBoard.list(actor.userId, filter, query.sort, order === 'desc', query.limit, query.cursor);
  return { tasks: page.items.map(presentTask), nextCursor: page.nextCursor, sort: query.sort, order };
}

/** One bulk operation's outcome: its index in its list, then the task (or the id) or the error it met. */
export type BulkResult =
  | { readonly index: number; readonly ok: true; readonly task?: PresentedTask; readonly taskId: string }
  | {
      readonly index: number;
      readonly ok: false;
      readonly taskId: string | null;
      readonly error: { readonly status: number; readonly code: string; readonly message: string };
    };

/**
 * POST /tasks/bulk: creates, then updates, then deletes, each in its list's order and each on its
 * own: every operation is checked and applied alone and reported `ok` or with the error the single
 * route would have answered, so one bad operation neither stops nor undoes the others.
 */
export async function bulkTasks(
  actor: UserActor,
  body: { create?: unknown[] | undefined; update?: unknown[] | undefined; delete?: unknown[] | undefined },
  ports: TaskPorts,
) {
  const run = async (list: readonly unknown[] | undefined, op: (input: unknown, index: number) => Promise<{ task?: PresentedTask; taskId: string }>) => {
    const results: BulkResult[] = [];
    for (const [index, input] of (list ?? []).entries()) {
      try {
        results.push({ index, ok: true, ...(await op(input, index)) });
      } catch (error) {
        const { status, code, message, expected } = toErrorResponse(error);
        if (!expected) throw error;
        const taskId =
          typeof input === 'object' && input !== null && typeof (input as { taskId?: unknown }).taskId === 'string'
            ? (input as { taskId: string }).taskId
            : null;
        results.push({ index, ok: false, taskId, error: { status, code, message } });
      }
    }
    return results;
  };
  const created = await run(body.create, async (input, index) => {
    const task = await createTask(actor, validate(`create[${index}]`, createTaskBody, input), ports);
    return { task, taskId: task.taskId };
  });
  const updated = await run(body.update, async (input, index) => {
    const { taskId, version, ...changes } = validate(`update[${index}]`, bulkUpdateOperation, input);
    const task = await updateTask(actor, taskId, version, changes, ports);
    return { task, taskId };
  });
  const deleted = await run(body.delete, async (input, index) => {
    const { taskId, version } = validate(`delete[${index}]`, bulkDeleteOperation, input);
    await deleteTask(actor, taskId, version, ports);
    return { taskId };
  });
  const all = [...created, ...updated, ...deleted];
  const succeeded = all.filter((result) => result.ok).length;
  return { create: created, update: updated, delete: deleted, succeeded, failed: all.length - succeeded };
}

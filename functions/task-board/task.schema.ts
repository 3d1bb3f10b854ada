import * as z from 'zod';

export const TASK_STATUSES = ['todo', 'in_progress', 'done', 'cancelled'] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const TASK_PRIORITIES = ['low', 'medium', 'high'] as const;
export type TaskPriority = (typeof TASK_PRIORITIES)[number];
export const TASK_SORTS = ['createdAt', 'updatedAt', 'dueAt', 'priority'] as const;
export type TaskSort = (typeof TASK_SORTS)[number];

export const MAX_TITLE = 200;
export const MAX_DESCRIPTION = 10_000;
export const MAX_TAGS = 20;
export const MAX_TAG = 50;
/** Operations one POST /tasks/bulk may carry, creates, updates and deletes together. */
export const MAX_BULK_OPERATIONS = 100;

/** One task as stored: under its owner (the partition), with the numbers its listings sort by. */
export interface TaskRecord {
  readonly userId: string;
  readonly taskId: string;
  readonly title: string;
  readonly description: string;
  readonly status: TaskStatus;
  readonly priority: TaskPriority;
  readonly dueAt: number | null;
  readonly tags: readonly string[];
  readonly resourceId: string | null;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** Moves by one with every change: the version an update must name (409 when it moved since). */
  readonly version: number;
  /** Index sort keys (task.store.ts): `dueAt`, tasks without one last; priority, then age. */
  readonly dueSort: number;
  readonly prioritySort: number;
}

/** Store ids (`sortableId`): `task_`, then base62. */
export const taskIdSchema = z.string().regex(/^task_[0-9A-Za-z]{21}$/, 'is not a task id');
export const taskIdParams = z.object({ taskId: taskIdSchema });

const title = z.string().trim().min(1, 'must not be empty').max(MAX_TITLE, `must be at most ${MAX_TITLE} characters`);
const description = z.string().max(MAX_DESCRIPTION, `must be at most ${MAX_DESCRIPTION} characters`);
const status = z.enum(TASK_STATUSES, { error: `must be one of ${TASK_STATUSES.join(', ')}` });
const priority = z.enum(TASK_PRIORITIES, { error: `must be one of ${TASK_PRIORITIES.join(', ')}` });
const tag = z
  .string()
  .trim()
  .min(1, 'must not be empty')
  .max(MAX_TAG, `must be at most ${MAX_TAG} characters`)
  .regex(/^[^,\s][^,]*$/, 'must not contain commas');
const tags = z
  .array(tag, { error: 'must be an array of strings' })
  .max(MAX_TAGS, `must hold at most ${MAX_TAGS} tags`)
  .transform((list) => [...new Set(list)]);
/** An ISO 8601 time with its zone (`2026-12-01T17:00:00Z`), kept as epoch ms; null clears it. */
const dueAt = z.iso
  .datetime({ offset: true, error: 'must be an ISO 8601 time with a zone, e.g. 2026-12-01T17:00:00Z' })
  .transform((text) => Date.parse(text))
  .nullable();
/** An agent, action or MCP server id (UUIDs, or the platform's prefixed ids); not checked to exist: a task may outlive what it names. */
const resourceId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be the id of an agent, action or MCP server')
  .nullable();
const version = z.number({ error: 'must be the version the task was read with (a whole number)' }).int('must be a whole number').min(1, 'must be at least 1');

export const createTaskBody = z.strictObject({
  title,
  description: description.default(''),
  status: status.default('todo'),
  priority: priority.default('medium'),
  dueAt: dueAt.default(null),
  tags: tags.default([]),
  resourceId: resourceId.default(null),
});
export type CreateTaskInput = z.infer<typeof createTaskBody>;

/** The fields an update may change, with `version`: the one it was read with. */
const updateFields = {
  version,
  title: title.optional(),
  description: description.optional(),
  status: status.optional(),
  priority: priority.optional(),
  dueAt: dueAt.optional(),
  tags: tags.optional(),
  resourceId: resourceId.optional(),
};
const someChange = [
  ({ version: _version, ...changes }: { version: number } & Record<string, unknown>) =>
    Object.entries(changes).some(([field, value]) => field !== 'taskId' && value !== undefined),
  { error: 'give at least one of title, description, status, priority, dueAt, tags, resourceId besides version' },
] as const;

export const updateTaskBody = z.strictObject(updateFields).refine(...someChange);
export type UpdateTaskInput = z.infer<typeof updateTaskBody>;
export type TaskChanges = Omit<UpdateTaskInput, 'version'>;

export const statusBody = z.strictObject({ status, version });

/** DELETE takes the version as a query parameter, optional: a delete without one removes whatever is there. */
export const deleteTaskQuery = z.object({
  version: z
    .string()
    .regex(/^\d{1,12}$/, 'must be a whole number')
    .transform(Number)
    .optional(),
});

export const listTasksQuery = z.object({
  status: status.optional(),
  priority: priority.optional(),
  tag: tag.optional(),
  resourceId: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/, 'must be the id of an agent, action or MCP server')
    .optional(),
  sort: z.enum(TASK_SORTS, { error: `must be one of ${TASK_SORTS.join(', ')}` }).default('createdAt'),
  /** Default: newest, latest changed and most important first; the soonest due first. */
  order: z.enum(['asc', 'desc'], { error: 'must be asc or desc' }).optional(),
  limit: z
    .string()
    .regex(/^\d{1,4}$/, 'must be a whole number')
    .transform(Number)
    .pipe(z.number().min(1, 'must be at least 1').max(100, 'must be at most 100'))
    .default(50),
  cursor: z.string().max(2048, 'must be at most 2048 characters').optional(),
});
export type ListTasksQuery = z.infer<typeof listTasksQuery>;

/** Bulk operations are checked one by one (task.service.ts), so one bad operation is reported alone. */
const operations = z.array(z.unknown(), { error: 'must be an array' }).optional();
export const bulkBody = z
  .strictObject({ create: operations, update: operations, delete: operations })
  .refine((body) => (body.create?.length ?? 0) + (body.update?.length ?? 0) + (body.delete?.length ?? 0) > 0, {
    error: 'give at least one operation in create, update or delete',
  })
  .refine((body) => (body.create?.length ?? 0) + (body.update?.length ?? 0) + (body.delete?.length ?? 0) <= MAX_BULK_OPERATIONS, {
    error: `at most ${MAX_BULK_OPERATIONS} operations in create, update and delete together`,
  });

export const bulkUpdateOperation = z.strictObject({ taskId: taskIdSchema, ...updateFields }).refine(...someChange);
export const bulkDeleteOperation = z.strictObject({ taskId: taskIdSchema, version: version.optional() });

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** A task as its owner sees it: times in ISO 8601, without the owner or the sort keys. */
export function presentTask(task: TaskRecord) {
  return {
    taskId: task.taskId,
    title: task.title,
    description: task.description,
    status: task.status,
    priority: task.priority,
    dueAt: iso(task.dueAt),
    tags: task.tags,
    resourceId: task.resourceId,
    createdAt: new Date(task.createdAt).toISOString(),
    updatedAt: new Date(task.updatedAt).toISOString(),
    version: task.version,
  };
}
export type PresentedTask = ReturnType<typeof presentTask>;

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

/** A task as every answer shows it (`presentTask`). */
export const taskResponse = z.object({
  taskId: z.string(),
  title: z.string(),
  description: z.string(),
  status: z.enum(TASK_STATUSES),
  priority: z.enum(TASK_PRIORITIES),
  dueAt: z.string().nullable().describe('ISO 8601; null without a due time'),
  tags: z.array(z.string()).readonly(),
  resourceId: z.string().nullable().describe('The agent, action or MCP server the task is about'),
  createdAt: z.string().describe('ISO 8601'),
  updatedAt: z.string().describe('ISO 8601'),
  version: z.number().int().describe('Give it back with a change: a change to an older version is refused with 409'),
});

export const taskDeletedResponse = z.object({ taskId: z.string(), deleted: z.literal(true) });

export const taskListResponse = z.object({
  tasks: z.array(taskResponse),
  nextCursor: z.string().nullable(),
  sort: z.enum(TASK_SORTS),
  order: z.enum(['asc', 'desc']),
});

/** One operation's outcome: operations succeed or fail one by one. */
const bulkResult = z.union([
  z.object({ index: z.number().int(), ok: z.literal(true), task: taskResponse.optional().describe('Absent for a deletion'), taskId: z.string() }),
  z.object({
    index: z.number().int(),
    ok: z.literal(false),
    taskId: z.string().nullable(),
    error: z.object({ status: z.number().int(), code: z.string(), message: z.string() }).describe('What the operation alone would have answered'),
  }),
]);

export const bulkResponse = z.object({
  create: z.array(bulkResult),
  update: z.array(bulkResult),
  delete: z.array(bulkResult),
  succeeded: z.number().int(),
  failed: z.number().int(),
});

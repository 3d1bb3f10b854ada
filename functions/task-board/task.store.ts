import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Page } from '../core/db/cursor.ts';
import { readItem, writeIf, type Db } from '../core/db/dynamo.ts';
import { listPage } from '../core/db/listing.ts';
import type { TaskPriority, TaskRecord, TaskSort, TaskStatus } from './task.schema.ts';

/** What a listing narrows to; every filter is applied by DynamoDB, on the index the sort reads. */
export interface TaskFilter {
  readonly status?: TaskStatus | undefined;
  readonly priority?: TaskPriority | undefined;
  readonly tag?: string | undefined;
  readonly resourceId?: string | undefined;
}

/** The index (and its number sort key) each sort reads: one per sort, all in the owner's partition. */
const SORT_INDEX: Record<TaskSort, { index: string; sortKey: string }> = {
  createdAt: { index: 'byCreated', sortKey: 'createdAt' },
  updatedAt: { index: 'byUpdated', sortKey: 'updatedAt' },
  dueAt: { index: 'byDue', sortKey: 'dueSort' },
  priority: { index: 'byPriority', sortKey: 'prioritySort' },
};

/** Where a task without a due time sorts: after every date (the largest valid time). */
export const NO_DUE_SORT = 8_640_000_000_000_000;
const PRIORITY_RANK: Record<TaskPriority, number> = { low: 1, medium: 2, high: 3 };

/**
 * The sort keys of a task: `prioritySort` orders by priority, then by age (ranks are 10^13 apart,
 * past any epoch ms); `dueSort` by due time, tasks without one last and among themselves by age
 * (an index returns equal keys in no promised order; NO_DUE_SORT plus an epoch ms stays below 2^53).
 */
export function sortKeysOf(task: Pick<TaskRecord, 'dueAt' | 'priority' | 'createdAt'>): Pick<TaskRecord, 'dueSort' | 'prioritySort'> {
  return { dueSort: task.dueAt ?? NO_DUE_SORT + task.createdAt, prioritySort: PRIORITY_RANK[task.priority] * 1e13 + task.createdAt };
}

/**
 * Each owner's tasks, one partition per owner (table `task-board`), so another user's id finds
 * nothing. Writes of an existing task are conditional on the `version` it was read with.
 */
export interface TaskStore {
  get(userId: string, taskId: string): Promise<TaskRecord | null>;
  /** False when the id is taken (never, for random ids). */
  create(task: TaskRecord): Promise<boolean>;
  /** Writes `task` over the stored one if that still has `expectedVersion`; false otherwise (or when it is gone). */
  replace(task: TaskRecord, expectedVersion: number): Promise<boolean>;
  /** False when it is gone, or (with `expectedVersion`) when it has another version. */
  delete(userId: string, taskId: string, expectedVersion?: number): Promise<boolean>;
  list(userId: string, filter: TaskFilter, sort: TaskSort, newestFirst: boolean, limit: number, cursor: string | undefined): Promise<Page<TaskRecord>>;
}

function filterOf(filter: TaskFilter) {
  const clauses: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  for (const field of ['status', 'priority', 'resourceId'] as const) {
    const value = filter[field];
    if (value === undefined) continue;
    clauses.push(`#${field} = :${field}`);
    names[`#${field}`] = field;
    values[`:${field}`] = value;
  }
  if (filter.tag !== undefined) {
    clauses.push('contains(#tags, :tag)');
    names['#tags'] = 'tags';
    values[':tag'] = filter.tag;
  }
  return clauses.length === 0 ? undefined : { expression: clauses.join(' AND '), names, values };
}

export function createTaskStore(db: Db): TaskStore {
  const table = db.table('task-board');
  return {
    get: (userId, taskId) => readItem(db, { table, key: { userId, taskId }, as: (item) => item as unknown as TaskRecord }),
    create: (task) => writeIf(db.doc.send(new PutCommand({ TableName: table, Item: task, ConditionExpression: 'attribute_not_exists(taskId)' }))),
    replace: (task, expectedVersion) =>
      writeIf(
        db.doc.send(
          new PutCommand({
            TableName: table,
            Item: task,
            ConditionExpression: 'version = :expected',
            ExpressionAttributeValues: { ':expected': expectedVersion },
          }),
        ),
      ),
    delete: (userId, taskId, expectedVersion) =>
      writeIf(
        db.doc.send(
          new DeleteCommand({
            TableName: table,
            Key: { userId, taskId },
            ...(expectedVersion === undefined
              ? { ConditionExpression: 'attribute_exists(taskId)' }
              : { ConditionExpression: 'version = :expected', ExpressionAttributeValues: { ':expected': expectedVersion } }),
          }),
        ),
      ),
    list: (userId, filter, sort, newestFirst, limit, cursor) =>
      listPage<TaskRecord>(
        db,
        { table, ...SORT_INDEX[sort], partitionKey: 'userId', partitionValue: userId, itemKey: 'taskId', newestFirst, filter: filterOf(filter) },
        limit,
        cursor,
      ),
  };
}

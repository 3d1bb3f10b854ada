import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Page } from '../core/db/cursor.ts';
import { countItems, type Db, writeIf } from '../core/db/dynamo.ts';
import { listPage } from '../core/db/listing.ts';
import { putIfUnchanged } from '../core/db/optimistic-update.ts';
import { createOwnerCounts } from '../core/db/owner-count.ts';
import type { ActionRecord, ActionStatus } from './action.schema.ts';

/** What a listing may be narrowed by; every filter is applied by DynamoDB on the index query. */
export interface ActionFilter {
  readonly visibility?: 'private' | 'public';
  readonly status?: ActionStatus;
  readonly category?: string;
  /** Matches runtimes starting with it: `python` matches `python3.12`. */
  readonly runtimePrefix?: string;
  /** Case-insensitive substring of the name. */
  readonly nameContains?: string;
}

/**
 * Actions by id: the id is the key, so a supplied id that exists is refused by the conditional
 * put. Owners' listings use the `byOwner` index, public listings the sparse `publicActions` index;
 * the per-owner limit is a counter (`action-counts`, `core/db/owner-count.ts`) that create and
 * delete keep with the record.
 */
export interface ActionStore {
  get(actionId: string): Promise<ActionRecord | null>;
  /**
   * 'taken' when the id is (or a create or delete of it is under way), 'limit' when the owner
   * holds MAX_ACTIONS_PER_OWNER.
   */
  create(action: ActionRecord): Promise<'created' | 'taken' | 'limit'>;
  /** Writes `changes` if the action still has the `updatedAt` it was read with; 'changed' otherwise. */
  update(current: ActionRecord, changes: Partial<ActionRecord>, now: number): Promise<ActionRecord | 'changed'>;
  /** False when it was already gone (or owned by someone else); 'busy' while a create or delete of it is under way. */
  delete(actionId: string, ownerId: string): Promise<boolean | 'busy'>;
  /** How many actions the owner holds (one read of their counter). */
  countByOwner(ownerId: string): Promise<number>;
  /** An owner's actions, newest first. */
  listByOwner(ownerId: string, filter: ActionFilter, limit: number, cursor: string | undefined): Promise<Page<ActionRecord>>;
  /** Public actions others may run (active and deprecated), newest first. */
  listPublic(filter: ActionFilter, limit: number, cursor: string | undefined): Promise<Page<ActionRecord>>;
}

export const MAX_ACTIONS_PER_OWNER = 500;

/** Whether others may find and run it: public and out of development. */
export function isPubliclyListed(action: Pick<ActionRecord, 'visibility' | 'status'>): boolean {
  return action.visibility === 'public' && action.status !== 'development';
}

/** Sets or clears the sparse `publicListing` key, so the public index holds exactly the publicly runnable actions. */
function withListing(action: ActionRecord): ActionRecord {
  const { publicListing: _previous, ...rest } = action;
  return isPubliclyListed(action) ? { ...rest, publicListing: 'public' } : rest;
}

interface FilterExpression {
  readonly FilterExpression?: string;
  readonly ExpressionAttributeNames?: Record<string, string>;
  readonly values: Record<string, unknown>;
}

/** The DynamoDB filter for `filter`; attribute names are aliased (`status` is a reserved word). */
export function filterExpression(filter: ActionFilter): FilterExpression {
  const parts: string[] = [];
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const equals = (attribute: string, value: string | undefined) => {
    if (value === undefined) return;
    names[`#${attribute}`] = attribute;
    values[`:${attribute}`] = value;
    parts.push(`#${attribute} = :${attribute}`);
  };
  equals('visibility', filter.visibility);
  equals('status', filter.status);
  equals('category', filter.category);
  if (filter.runtimePrefix !== undefined) {
    names['#runtime'] = 'runtime';
    values[':runtime'] = filter.runtimePrefix;
    parts.push('begins_with(#runtime, :runtime)');
  }
  if (filter.nameContains !== undefined) {
    names['#nameLower'] = 'nameLower';
    values[':nameLower'] = filter.nameContains.toLowerCase();
    parts.push('contains(#nameLower, :nameLower)');
  }
  if (parts.length === 0) return { values };
  return { FilterExpression: parts.join(' AND '), ExpressionAttributeNames: names, values };
}

export function createActionStore(db: Db): ActionStore {
  const table = db.table('actions');
  const get = async (actionId: string) => {
    const out = await db.doc.send(new GetCommand({ TableName: table, Key: { actionId }, ConsistentRead: true }));
    return (out.Item as ActionRecord | undefined) ?? null;
  };
  // Ids may be supplied and reused after a delete, so holding one means the record is this owner's.
  const counts = createOwnerCounts(db, {
    table: db.table('action-counts'),
    max: MAX_ACTIONS_PER_OWNER,
    holds: async (ownerId, actionId) => (await get(actionId))?.ownerId === ownerId,
    countHeld: (ownerId) =>
      countItems(db, { TableName: table, IndexName: 'byOwner', KeyConditionExpression: 'ownerId = :o', ExpressionAttributeValues: { ':o': ownerId } }),
  });

  /** An owner's or the public listing, narrowed by `filter` on DynamoDB's side. */
  function listIndex(
    index: 'byOwner' | 'publicActions',
    partition: { key: 'ownerId' | 'publicListing'; value: string },
    filter: ActionFilter,
    limit: number,
    cursor: string | undefined,
  ) {
    const { values, FilterExpression, ExpressionAttributeNames } = filterExpression(filter);
    return listPage<ActionRecord>(
      db,
      {
        table,
        index,
        partitionKey: partition.key,
        partitionValue: partition.value,
        sortKey: 'createdAt',
        itemKey: 'actionId',
        newestFirst: true,
        filter:
          FilterExpression === undefined
            ? undefined
            : { expression: FilterExpression, ...(ExpressionAttributeNames ? { names: ExpressionAttributeNames } : {}), values },
      },
      limit,
      cursor,
    );
  }

  return {
    get,
    async create(action) {
      const created = await counts.add(action.ownerId, action.actionId, () =>
        writeIf(db.doc.send(new PutCommand({ TableName: table, Item: withListing(action), ConditionExpression: 'attribute_not_exists(actionId)' }))),
      );
      if (created === true) return 'created';
      return created === 'limit' ? 'limit' : 'taken';
    },
    async update(current, changes, now) {
      const item = withListing({ ...current, ...changes, actionId: current.actionId, ownerId: current.ownerId, updatedAt: now });
      return (await putIfUnchanged(db, table, item, current.updatedAt)) ?? 'changed';
    },
    async delete(actionId, ownerId) {
      return counts.remove(ownerId, actionId, () =>
        writeIf(
          db.doc.send(
            new DeleteCommand({
              TableName: table,
              Key: { actionId },
              ConditionExpression: 'ownerId = :owner',
              ExpressionAttributeValues: { ':owner': ownerId },
            }),
          ),
        ),
      );
    },
    countByOwner: (ownerId) => counts.count(ownerId),
    listByOwner: (ownerId, filter, limit, cursor) => listIndex('byOwner', { key: 'ownerId', value: ownerId }, filter, limit, cursor),
    listPublic: (filter, limit, cursor) => listIndex('publicActions', { key: 'publicListing', value: 'public' }, filter, limit, cursor),
  };
}

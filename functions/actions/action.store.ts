import { DeleteCommand, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { decodeCursor, encodeCursor, type Page } from '../core/db/cursor.ts';
import { isConditionFailed, type Db, writeIf } from '../core/db/dynamo.ts';
import { ValidationError } from '../core/errors.ts';
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
 * put. Owners' listings use the `byOwner` index, public listings the sparse `publicActions` index.
 */
export interface ActionStore {
  get(actionId: string): Promise<ActionRecord | null>;
  /** False when the id is taken. */
  create(action: ActionRecord): Promise<boolean>;
  /** Writes `changes` if the action still has the `updatedAt` it was read with; 'changed' otherwise. */
  update(current: ActionRecord, changes: Partial<ActionRecord>, now: number): Promise<ActionRecord | 'changed'>;
  /** False when it was already gone (or owned by someone else). */
  delete(actionId: string, ownerId: string): Promise<boolean>;
  countByOwner(ownerId: string): Promise<number>;
  /** An owner's actions, newest first. */
  listByOwner(ownerId: string, filter: ActionFilter, limit: number, cursor: string | undefined): Promise<Page<ActionRecord>>;
  /** Public actions others may run (active and deprecated), newest first. */
  listPublic(filter: ActionFilter, limit: number, cursor: string | undefined): Promise<Page<ActionRecord>>;
}

export const MAX_ACTIONS_PER_OWNER = 500;
/** Items a filtered listing reads per query page, and pages per request before it answers with a cursor. */
const FILTERED_PAGE_ITEMS = 100;
const MAX_PAGES_PER_LISTING = 10;

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

/** An index listing: which index, its partition, and the key attributes of a position in it. */
interface IndexQuery {
  readonly index: 'byOwner' | 'publicActions';
  readonly partitionKey: 'ownerId' | 'publicListing';
  readonly partitionValue: string;
}

/** The position after `item` in the index: the table key plus the index key. */
function positionOf(query: IndexQuery, item: ActionRecord): Record<string, unknown> {
  return { actionId: item.actionId, [query.partitionKey]: query.partitionValue, createdAt: item.createdAt };
}

/** A cursor is only accepted for the listing that made it (a cursor of another owner's listing is a 400). */
function startKeyOf(query: IndexQuery, cursor: string | undefined): Record<string, unknown> | undefined {
  const key = decodeCursor(cursor);
  if (key === undefined) return undefined;
  const expected = ['actionId', 'createdAt', query.partitionKey].sort();
  const fits =
    Object.keys(key).sort().join() === expected.join() &&
    typeof key['actionId'] === 'string' &&
    typeof key['createdAt'] === 'number' &&
    key[query.partitionKey] === query.partitionValue;
  if (!fits) throw new ValidationError('Invalid query parameters', ['cursor: is not a cursor returned by this listing']);
  return key;
}

export function createActionStore(db: Db): ActionStore {
  const table = db.table('actions');

  /**
   * Reads the index newest first until `limit` items passed the filter, the index ended, or the
   * page budget ran out; the cursor then points just after the last item returned (or after the
   * last item read, when the budget ran out first).
   */
  async function listIndex(query: IndexQuery, filter: ActionFilter, limit: number, cursor: string | undefined): Promise<Page<ActionRecord>> {
    const { values, ...expression } = filterExpression(filter);
    const filtered = expression.FilterExpression !== undefined;
    const items: ActionRecord[] = [];
    let start = startKeyOf(query, cursor);
    for (let page = 0; page < MAX_PAGES_PER_LISTING; page++) {
      const out = await db.doc.send(
        new QueryCommand({
          TableName: table,
          IndexName: query.index,
          KeyConditionExpression: `${query.partitionKey} = :partition`,
          ...expression,
          ExpressionAttributeValues: { ':partition': query.partitionValue, ...values },
          ScanIndexForward: false,
          // Unfiltered, read exactly what is missing; filtered, read in batches and stop mid-page.
          Limit: filtered ? FILTERED_PAGE_ITEMS : limit - items.length + 1,
          ExclusiveStartKey: start,
        }),
      );
      for (const item of (out.Items ?? []) as ActionRecord[]) {
        if (items.length === limit) return { items, nextCursor: encodeCursor(positionOf(query, items[items.length - 1]!)) };
        items.push(item);
      }
      start = out.LastEvaluatedKey;
      if (start === undefined) return { items, nextCursor: null };
    }
    return { items, nextCursor: encodeCursor(start) };
  }

  return {
    async get(actionId) {
      const out = await db.doc.send(new GetCommand({ TableName: table, Key: { actionId }, ConsistentRead: true }));
      return (out.Item as ActionRecord | undefined) ?? null;
    },
    async create(action) {
      return writeIf(db.doc.send(new PutCommand({ TableName: table, Item: withListing(action), ConditionExpression: 'attribute_not_exists(actionId)' })));
    },
    async update(current, changes, now) {
      const item = withListing({ ...current, ...changes, actionId: current.actionId, ownerId: current.ownerId, updatedAt: now });
      try {
        await db.doc.send(new PutCommand({ TableName: table, Item: item, ConditionExpression: 'updatedAt = :expected', ExpressionAttributeValues: { ':expected': current.updatedAt } }));
        return item;
      } catch (error) {
        if (isConditionFailed(error)) return 'changed';
        throw error;
      }
    },
    async delete(actionId, ownerId) {
      return writeIf(
        db.doc.send(new DeleteCommand({ TableName: table, Key: { actionId }, ConditionExpression: 'ownerId = :owner', ExpressionAttributeValues: { ':owner': ownerId } })),
      );
    },
    async countByOwner(ownerId) {
      let count = 0;
      let start: Record<string, unknown> | undefined;
      do {
        const out = await db.doc.send(
          new QueryCommand({ TableName: table, IndexName: 'byOwner', KeyConditionExpression: 'ownerId = :o', ExpressionAttributeValues: { ':o': ownerId }, Select: 'COUNT', ExclusiveStartKey: start }),
        );
        count += out.Count ?? 0;
        start = out.LastEvaluatedKey;
      } while (start !== undefined);
      return count;
    },
    listByOwner: (ownerId, filter, limit, cursor) => listIndex({ index: 'byOwner', partitionKey: 'ownerId', partitionValue: ownerId }, filter, limit, cursor),
    listPublic: (filter, limit, cursor) => listIndex({ index: 'publicActions', partitionKey: 'publicListing', partitionValue: 'public' }, filter, limit, cursor),
  };
}

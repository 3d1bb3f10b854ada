import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Page } from '../core/db/cursor.ts';
import { countItems, writeIf, type Db } from '../core/db/dynamo.ts';
import { listPage, type PageRequest } from '../core/db/listing.ts';
import type { StarRecord } from './star.schema.ts';

/**
 * Stars (`stars`): one item per (resource, user), written with `attribute_not_exists` and removed
 * with `attribute_exists`, so starring twice stores one item and unstarring what is not starred
 * changes nothing.
 *
 * The count is the number of star items in the resource's partition, read strongly consistent
 * (a `Select: COUNT` Query), not a separate counter: a counter next to the items would need a
 * transaction to never drift, and the platform keeps to single-item writes (dynalite has no
 * `TransactWriteItems`; docs/ARCHITECTURE.md, "Data rules as applied"). Counting costs one Query call per about 1 MB of
 * star keys (thousands of stars), so it stays exact under any concurrency at a read cost that grows
 * slowly with the stars of one resource.
 */
export interface StarStore {
  /** True when this call added the star, false when it was there already. */
  star(star: StarRecord): Promise<boolean>;
  /** True when this call removed a star, false when there was none. */
  unstar(resourceId: string, userId: string): Promise<boolean>;
  get(resourceId: string, userId: string): Promise<StarRecord | null>;
  count(resourceId: string): Promise<number>;
  /** A page of a user's stars, newest first. */
  listByUser(userId: string, page: Omit<PageRequest, 'offset'>): Promise<Page<StarRecord>>;
}

export function createStarStore(db: Db): StarStore {
  const stars = db.table('stars');
  return {
    star: (star) => writeIf(db.doc.send(new PutCommand({ TableName: stars, Item: star, ConditionExpression: 'attribute_not_exists(resourceId)' }))),
    unstar: (resourceId, userId) =>
      writeIf(db.doc.send(new DeleteCommand({ TableName: stars, Key: { resourceId, userId }, ConditionExpression: 'attribute_exists(resourceId)' }))),
    async get(resourceId, userId) {
      const out = await db.doc.send(new GetCommand({ TableName: stars, Key: { resourceId, userId }, ConsistentRead: true }));
      return (out.Item as StarRecord | undefined) ?? null;
    },
    count: (resourceId) =>
      countItems(db, { TableName: stars, KeyConditionExpression: 'resourceId = :r', ExpressionAttributeValues: { ':r': resourceId }, ConsistentRead: true }),
    listByUser: (userId, page) =>
      listPage<StarRecord>(
        db,
        { table: stars, index: 'byUser', partitionKey: 'userId', partitionValue: userId, sortKey: 'starredAt', itemKey: 'resourceId', newestFirst: true },
        page.limit,
        page.cursor,
      ),
  };
}

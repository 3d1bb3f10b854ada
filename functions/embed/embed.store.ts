import { GetCommand, PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Page } from '../core/db/cursor.ts';
import { writeIf, type Db } from '../core/db/dynamo.ts';
import { listPage } from '../core/db/listing.ts';
import { updateIfUnchanged } from '../core/db/optimistic-update.ts';
import type { EmbedRecord } from './embed.schema.ts';

/** Fields an owner may change with PUT /embed/{embedTokenId}. */
export type EmbedChanges = Partial<
  Pick<EmbedRecord, 'allowedDomains' | 'rateLimitPerDay' | 'rateLimitPerIp' | 'minutesLimit' | 'creditLimit' | 'config' | 'status'>
>;

/**
 * Embed tokens keyed by id; `byOwner` lists an owner's, `byDigest` finds the token a widget
 * presents. The index is eventually consistent, so a token found there is read again by id
 * (strongly) before anything is decided on its status: a revoked token stops at once.
 *
 * Owners' changes are conditional on the `updatedAt` they read; usage (credits, minutes) is added
 * atomically and leaves `updatedAt` alone, so neither undoes the other.
 */
export interface EmbedStore {
  get(embedTokenId: string): Promise<EmbedRecord | null>;
  /** The token with this digest, read by id after the index lookup; null when none. */
  findByDigest(digest: string): Promise<EmbedRecord | null>;
  create(record: EmbedRecord): Promise<boolean>;
  /** Applies `changes` if the record still has `expectedUpdatedAt`; null when someone changed it since (or it is gone). */
  update(embedTokenId: string, changes: EmbedChanges, expectedUpdatedAt: number, now: number): Promise<EmbedRecord | null>;
  /** An owner's tokens, newest first. */
  listByOwner(ownerId: string, limit: number, cursor: string | undefined): Promise<Page<EmbedRecord>>;
  /** Adds what a visitor's chat or call spent (atomic ADD); nothing when the token is gone. */
  addUsage(embedTokenId: string, usage: { credits?: number; minutes?: number }): Promise<void>;
}

export function createEmbedStore(db: Db): EmbedStore {
  const table = db.table('embed-tokens');
  const get = async (embedTokenId: string) => {
    const out = await db.doc.send(new GetCommand({ TableName: table, Key: { embedTokenId }, ConsistentRead: true }));
    return (out.Item as EmbedRecord | undefined) ?? null;
  };
  return {
    get,
    async findByDigest(digest) {
      const out = await db.doc.send(
        new QueryCommand({
          TableName: table,
          IndexName: 'byDigest',
          KeyConditionExpression: 'digest = :d',
          ExpressionAttributeValues: { ':d': digest },
          ProjectionExpression: 'embedTokenId',
          Limit: 1,
        }),
      );
      const id = out.Items?.[0]?.['embedTokenId'];
      return typeof id === 'string' ? get(id) : null;
    },
    create: (record) => writeIf(db.doc.send(new PutCommand({ TableName: table, Item: record, ConditionExpression: 'attribute_not_exists(embedTokenId)' }))),
    update: (embedTokenId, changes, expectedUpdatedAt, now) => updateIfUnchanged<EmbedRecord>(db, table, { embedTokenId }, changes, expectedUpdatedAt, now),
    listByOwner: (ownerId, limit, cursor) =>
      listPage<EmbedRecord>(
        db,
        { table, index: 'byOwner', partitionKey: 'ownerId', partitionValue: ownerId, sortKey: 'createdAt', itemKey: 'embedTokenId', newestFirst: true },
        limit,
        cursor,
      ),
    async addUsage(embedTokenId, usage) {
      const credits = usage.credits ?? 0;
      const minutes = usage.minutes ?? 0;
      if (credits <= 0 && minutes <= 0) return;
      await writeIf(
        db.doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { embedTokenId },
            UpdateExpression: 'ADD creditsUsed :c, minutesUsed :m',
            ConditionExpression: 'attribute_exists(embedTokenId)',
            ExpressionAttributeValues: { ':c': credits, ':m': minutes },
          }),
        ),
      );
    },
  };
}

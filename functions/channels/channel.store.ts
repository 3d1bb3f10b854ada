import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Page } from '../core/db/cursor.ts';
import { queryItems, sendIf, writeIf, type Db } from '../core/db/dynamo.ts';
import { listPage } from '../core/db/listing.ts';
import { fieldAssignments, updateIfUnchanged } from '../core/db/optimistic-update.ts';
import type { ChannelError, ChannelRecord, SenderRecord } from './channel.schema.ts';

/**
 * Channels keyed by id alone (an inbound delivery names only the id), listed per owner through
 * `byOwner`; senders (conversation, mute, SMS opt-out) per channel; and the delivery ids already
 * taken, so a platform's retry is acknowledged without running the agent twice.
 */
export interface ChannelStore {
  get(channelId: string): Promise<ChannelRecord | null>;
  create(channel: ChannelRecord): Promise<boolean>;
  /**
   * Sets `changes` if the stored channel still has `expectedUpdatedAt`; null when someone changed it
   * since. Only those fields are written, so failures counted meanwhile are kept.
   */
  update(channelId: string, changes: Readonly<Record<string, unknown>>, expectedUpdatedAt: number, now: number): Promise<ChannelRecord | null>;
  delete(channelId: string, ownerId: string): Promise<boolean>;
  listByOwner(ownerId: string, limit: number, cursor: string | undefined): Promise<Page<ChannelRecord>>;
  /**
   * Counts a delivery that failed, in the total and in the run of consecutive failures, and keeps
   * `error` (when given) as the channel's last, in the same write. When that run reaches `pauseAfter` (0: never),
   * an active channel is paused with `reason`: 'paused' when this call paused it, 'counted' otherwise.
   */
  countFailure(channelId: string, pauseAfter: number, reason: string, now: number, error?: ChannelError): Promise<'counted' | 'paused'>;
  /** Keeps `error` as the channel's last failure without counting it (a failure its caller saw at once). */
  recordError(channelId: string, error: ChannelError): Promise<void>;
  /** Ends a run of consecutive failures (a delivery succeeded). */
  clearFailureRun(channelId: string): Promise<void>;
  getSender(channelId: string, senderKey: string): Promise<SenderRecord | null>;
  /** Sets fields of a sender's record, creating it if needed. */
  updateSender(channelId: string, senderKey: string, fields: Partial<Omit<SenderRecord, 'channelId' | 'senderKey'>>): Promise<void>;
  mutedSenders(channelId: string): Promise<SenderRecord[]>;
  /**
   * True the first time `deliveryId` is claimed for the channel; false for a repeat delivery. The
   * claim is kept `ttlSec`, then expires (DynamoDB's TTL removes it).
   */
  claimDelivery(channelId: string, deliveryId: string, nowMs: number, ttlSec: number): Promise<boolean>;
}

export function createChannelStore(db: Db): ChannelStore {
  const table = db.table('channels');
  const senders = db.table('channel-senders');
  const deliveries = db.table('channel-deliveries');
  return {
    async get(channelId) {
      const out = await db.doc.send(new GetCommand({ TableName: table, Key: { channelId }, ConsistentRead: true }));
      return (out.Item as ChannelRecord | undefined) ?? null;
    },
    create: (channel) => writeIf(db.doc.send(new PutCommand({ TableName: table, Item: channel, ConditionExpression: 'attribute_not_exists(channelId)' }))),
    update: (channelId, changes, expectedUpdatedAt, now) => updateIfUnchanged<ChannelRecord>(db, table, { channelId }, changes, expectedUpdatedAt, now),
    delete: (channelId, ownerId) =>
      writeIf(
        db.doc.send(
          new DeleteCommand({
            TableName: table,
            Key: { channelId },
            ConditionExpression: 'ownerId = :owner',
            ExpressionAttributeValues: { ':owner': ownerId },
          }),
        ),
      ),
    listByOwner: (ownerId, limit, cursor) =>
      listPage<ChannelRecord>(
        db,
        { table, index: 'byOwner', partitionKey: 'ownerId', partitionValue: ownerId, sortKey: 'createdAt', itemKey: 'channelId', newestFirst: false },
        limit,
        cursor,
      ),
    async countFailure(channelId, pauseAfter, reason, now, error) {
      const counted = await sendIf(
        db.doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { channelId },
            // Not `updatedAt`: an owner's edit read before this failure must still go through.
            UpdateExpression: `ADD failureCount :one, consecutiveFailures :one${error === undefined ? '' : ' SET lastError = :error'}`,
            ConditionExpression: 'attribute_exists(channelId)',
            ExpressionAttributeValues: { ':one': 1, ...(error === undefined ? {} : { ':error': error }) },
            ReturnValues: 'UPDATED_NEW',
          }),
        ),
      );
      const run = Number(counted?.Attributes?.['consecutiveFailures'] ?? 0);
      if (pauseAfter <= 0 || run < pauseAfter) return 'counted';
      // Only an active channel: one its owner paused, or that another failure paused first, stays as it is.
      const paused = await writeIf(
        db.doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { channelId },
            UpdateExpression: 'SET #status = :paused, pausedReason = :reason, updatedAt = :now',
            ConditionExpression: '#status = :active',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':paused': 'paused', ':active': 'active', ':reason': reason, ':now': now },
          }),
        ),
      );
      return paused ? 'paused' : 'counted';
    },
    async recordError(channelId, error) {
      await writeIf(
        db.doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { channelId },
            UpdateExpression: 'SET lastError = :error',
            ConditionExpression: 'attribute_exists(channelId)',
            ExpressionAttributeValues: { ':error': error },
          }),
        ),
      );
    },
    async clearFailureRun(channelId) {
      await writeIf(
        db.doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { channelId },
            UpdateExpression: 'SET consecutiveFailures = :zero',
            ConditionExpression: 'attribute_exists(channelId)',
            ExpressionAttributeValues: { ':zero': 0 },
          }),
        ),
      );
    },
    async getSender(channelId, senderKey) {
      const out = await db.doc.send(new GetCommand({ TableName: senders, Key: { channelId, senderKey }, ConsistentRead: true }));
      return (out.Item as SenderRecord | undefined) ?? null;
    },
    async updateSender(channelId, senderKey, fields) {
      const { sets, names, values } = fieldAssignments(fields);
      if (sets.length === 0) return;
      await db.doc.send(
        new UpdateCommand({
          TableName: senders,
          Key: { channelId, senderKey },
          UpdateExpression: `SET ${sets.join(', ')}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
    },
    mutedSenders: (channelId) =>
      queryItems<SenderRecord>(db, {
        TableName: senders,
        KeyConditionExpression: 'channelId = :c',
        FilterExpression: 'muted = :yes',
        ExpressionAttributeValues: { ':c': channelId, ':yes': true },
      }),
    claimDelivery: (channelId, deliveryId, nowMs, ttlSec) =>
      writeIf(
        db.doc.send(
          new PutCommand({
            TableName: deliveries,
            Item: { deliveryKey: `${channelId}#${deliveryId}`, expiresAt: Math.ceil(nowMs / 1000) + ttlSec },
            // dynalite keeps expired items (no TTL expiry): an expired claim counts as free.
            ConditionExpression: 'attribute_not_exists(deliveryKey) OR expiresAt < :now',
            ExpressionAttributeValues: { ':now': Math.floor(nowMs / 1000) },
          }),
        ),
      ),
  };
}

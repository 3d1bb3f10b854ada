import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Page } from '../core/db/cursor.ts';
import { countItems, sendIf, writeIf, type Db } from '../core/db/dynamo.ts';
import { listPage } from '../core/db/listing.ts';
import { updateIfUnchanged } from '../core/db/optimistic-update.ts';
import { createOwnerCounts } from '../core/db/owner-count.ts';
import { MAX_CONSECUTIVE_FAILURES, MAX_CRON_JOBS_PER_OWNER, type CronRecord, type CronRunError } from './cron.schema.ts';

/** Fields an owner may change with PUT /cron/{cronId}. */
export type CronChanges = Partial<Pick<CronRecord, 'name' | 'agentId' | 'agentName' | 'schedule' | 'scheduleTimezone' | 'inputMessage' | 'status'>>;

/** A run's outcome, as recorded on the job. */
export type RunOutcome = { readonly ok: true } | { readonly ok: false; readonly error: Omit<CronRunError, 'at'> };

/**
 * Cron jobs keyed by `cronId` alone, so a run (which receives only the id) loads its job with one
 * read; the `byOwner` index lists an owner's. The per-owner limit is a counter (`cron-counts`,
 * core/db/owner-count.ts), so concurrent creates cannot pass 20.
 *
 * Two kinds of write touch a job and must not undo each other: an owner's changes (conditional on
 * the `updatedAt` they read, so of two concurrent edits one gets a conflict) and run outcomes
 * (single atomic updates of the run fields only, which leave `updatedAt` alone). Neither writes the
 * other's fields, so an edit during a run loses nothing, and two runs finishing at once both count.
 */
export interface CronStore {
  get(cronId: string): Promise<CronRecord | null>;
  /** 'limit' when the owner holds MAX_CRON_JOBS_PER_OWNER; 'taken' for an id in use (never, for random ids). */
  create(job: CronRecord): Promise<'created' | 'taken' | 'limit'>;
  /** Applies `changes` if the job still has `expectedUpdatedAt`; null when someone changed it since (or it is gone). */
  update(cronId: string, changes: CronChanges & { consecutiveFailures?: 0 }, expectedUpdatedAt: number, now: number): Promise<CronRecord | null>;
  /** False when already gone; 'busy' while a create or delete of it is under way. */
  delete(cronId: string, ownerId: string): Promise<boolean | 'busy'>;
  /** An owner's jobs, oldest first. */
  listByOwner(ownerId: string, limit: number, cursor: string | undefined): Promise<Page<CronRecord>>;
  /**
   * Claims due time `scheduledTime` for a scheduled run: true once per due time, false for a repeat
   * delivery (or an older one arriving late), for a job that is not `active`, or one that is gone.
   */
  claimScheduled(cronId: string, scheduledTime: number): Promise<boolean>;
  /**
   * Records a run's outcome atomically: success resets the counter (the latest `lastError` stays),
   * failure adds one and becomes `lastError`. Returns the job after the update (null when it was
   * deleted meanwhile).
   */
  recordOutcome(cronId: string, outcome: RunOutcome, at: number): Promise<CronRecord | null>;
  /** Moves an `active` job whose counter reached the limit to `error`; false when another run did it first or it changed. */
  markError(cronId: string): Promise<boolean>;
}

export function createCronStore(db: Db): CronStore {
  const table = db.table('cron-jobs');
  const get = async (cronId: string) => {
    const out = await db.doc.send(new GetCommand({ TableName: table, Key: { cronId }, ConsistentRead: true }));
    return (out.Item as CronRecord | undefined) ?? null;
  };
  const counts = createOwnerCounts(db, {
    table: db.table('cron-counts'),
    max: MAX_CRON_JOBS_PER_OWNER,
    holds: async (ownerId, cronId) => (await get(cronId))?.ownerId === ownerId,
    countHeld: (ownerId) =>
      countItems(db, { TableName: table, IndexName: 'byOwner', KeyConditionExpression: 'ownerId = :o', ExpressionAttributeValues: { ':o': ownerId } }),
  });

  return {
    get,
    async create(job) {
      const created = await counts.add(job.ownerId, job.cronId, () =>
        writeIf(db.doc.send(new PutCommand({ TableName: table, Item: job, ConditionExpression: 'attribute_not_exists(cronId)' }))),
      );
      if (created === true) return 'created';
      return created === 'limit' ? 'limit' : 'taken';
    },
    update: (cronId, changes, expectedUpdatedAt, now) => updateIfUnchanged<CronRecord>(db, table, { cronId }, changes, expectedUpdatedAt, now),
    delete(cronId, ownerId) {
      return counts.remove(ownerId, cronId, () =>
        writeIf(
          db.doc.send(
            new DeleteCommand({ TableName: table, Key: { cronId }, ConditionExpression: 'ownerId = :owner', ExpressionAttributeValues: { ':owner': ownerId } }),
          ),
        ),
      );
    },
    listByOwner: (ownerId, limit, cursor) =>
      listPage<CronRecord>(
        db,
        { table, index: 'byOwner', partitionKey: 'ownerId', partitionValue: ownerId, sortKey: 'createdAt', itemKey: 'cronId', newestFirst: false },
        limit,
        cursor,
      ),
    claimScheduled: (cronId, scheduledTime) =>
      writeIf(
        db.doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { cronId },
            UpdateExpression: 'SET lastScheduledTime = :t',
            ConditionExpression: '#status = :active AND (attribute_not_exists(lastScheduledTime) OR lastScheduledTime = :null OR lastScheduledTime < :t)',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':t': scheduledTime, ':active': 'active', ':null': null },
          }),
        ),
      ),
    async recordOutcome(cronId, outcome, at) {
      const out = await sendIf(
        db.doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { cronId },
            ...(outcome.ok
              ? {
                  UpdateExpression: 'SET lastRunAt = :at, lastRunStatus = :status, consecutiveFailures = :zero, lastRunError = :null',
                  ExpressionAttributeValues: { ':at': at, ':status': 'success', ':zero': 0, ':null': null },
                }
              : {
                  UpdateExpression: 'SET lastRunAt = :at, lastRunStatus = :status, lastRunError = :message, lastError = :error ADD consecutiveFailures :one',
                  ExpressionAttributeValues: {
                    ':at': at,
                    ':status': 'error',
                    ':message': outcome.error.message,
                    ':error': { at, code: outcome.error.code, message: outcome.error.message } satisfies CronRunError,
                    ':one': 1,
                  },
                }),
            ConditionExpression: 'attribute_exists(cronId)',
            ReturnValues: 'ALL_NEW',
          }),
        ),
      );
      return (out?.Attributes as CronRecord | undefined) ?? null;
    },
    markError: (cronId) =>
      writeIf(
        db.doc.send(
          new UpdateCommand({
            TableName: table,
            Key: { cronId },
            UpdateExpression: 'SET #status = :error',
            ConditionExpression: '#status = :active AND consecutiveFailures >= :max',
            ExpressionAttributeNames: { '#status': 'status' },
            ExpressionAttributeValues: { ':error': 'error', ':active': 'active', ':max': MAX_CONSECUTIVE_FAILURES },
          }),
        ),
      ),
  };
}

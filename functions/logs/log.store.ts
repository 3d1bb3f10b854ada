import { GetCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { readQuery, type Db } from '../core/db/dynamo.ts';
import type { UsageLogRecord } from '../core/usage-log.ts';
import type { LogStatus } from './log.schema.ts';

/**
 * Every read loop stops after this many Query calls (each reads at most 1 MB), so a listing with a
 * rare filter over a busy account, or a runaway trace, costs a bounded time instead of a timeout.
 */
export const MAX_QUERY_CALLS = 30;
/** Items DynamoDB evaluates per call at most; fewer when fewer are still wanted and nothing filters. */
const MAX_BATCH = 1000;
const MIN_BATCH = 100;

export interface LogFilters {
  readonly resourceId?: string | undefined;
  readonly status?: LogStatus | undefined;
  readonly parentConversationId?: string | undefined;
}

export interface LogScan {
  /** Matching records, in index order. */
  readonly items: UsageLogRecord[];
  /** True when the read stopped at MAX_QUERY_CALLS (or the item cap) with records left unread. */
  readonly scanLimitReached: boolean;
}

/**
 * Reads of the `usage-logs` table. Every read drops records whose `expiresAt` has passed: DynamoDB
 * deletes expired items up to days late and dynalite never does, and retention is a promise to the
 * user, not a storage detail. `now` is epoch milliseconds; `expiresAt` is epoch seconds (TTL).
 */
export interface LogStore {
  /** The record, or null when there is none or it has expired. Strongly consistent. */
  get(requestId: string, now: number): Promise<UsageLogRecord | null>;
  /** A user's records created at or after `since`, newest first, until `want` match. */
  listByUser(userId: string, options: { since: number; now: number; filters: LogFilters; want: number }): Promise<LogScan>;
  /** Every user's records of one trace (root request id), oldest first, at most `max`. */
  listByRoot(rootRequestId: string, options: { now: number; max: number }): Promise<LogScan>;
}

const nowSeconds = (now: number) => Math.floor(now / 1000);
const isLive = (record: UsageLogRecord, now: number) => record.expiresAt > nowSeconds(now);

export function createLogStore(db: Db): LogStore {
  const table = db.table('usage-logs');

  /** Runs a Query page by page until `want` items came back, the index is read to the end, or the call budget is spent. */
  async function collect(input: Omit<QueryCommandInput, 'ExclusiveStartKey' | 'Limit'>, want: number, filtered: boolean): Promise<LogScan> {
    const read = await readQuery<UsageLogRecord>(db, input, {
      max: want,
      // Without a filter every evaluated item (bar expired ones) matches, so ask for about what is missing.
      pageLimit: (missing) => (filtered ? MAX_BATCH : Math.min(MAX_BATCH, Math.max(MIN_BATCH, missing + 1))),
      maxCalls: MAX_QUERY_CALLS,
    });
    return { items: read.items.slice(0, want), scanLimitReached: read.lastKey !== undefined && read.items.length < want };
  }

  return {
    async get(requestId, now) {
      const out = await db.doc.send(new GetCommand({ TableName: table, Key: { requestId }, ConsistentRead: true }));
      const record = out.Item as UsageLogRecord | undefined;
      return record !== undefined && isLive(record, now) ? record : null;
    },

    listByUser(userId, { since, now, filters, want }) {
      // The time range is part of the key condition, so DynamoDB reads only that slice of the index;
      // the other filters (and expiry) are evaluated on the items read.
      const conditions = ['expiresAt > :nowSec'];
      const names: Record<string, string> = {};
      const values: Record<string, unknown> = { ':u': userId, ':since': since, ':nowSec': nowSeconds(now) };
      if (filters.resourceId !== undefined) {
        conditions.push('resourceId = :resourceId');
        values[':resourceId'] = filters.resourceId;
      }
      if (filters.status !== undefined) {
        // `status` is a DynamoDB reserved word.
        conditions.push('#status = :status');
        names['#status'] = 'status';
        values[':status'] = filters.status;
      }
      if (filters.parentConversationId !== undefined) {
        conditions.push('parentConversationId = :conversation');
        values[':conversation'] = filters.parentConversationId;
      }
      return collect(
        {
          TableName: table,
          IndexName: 'byUser',
          KeyConditionExpression: 'userId = :u AND createdAt >= :since',
          FilterExpression: conditions.join(' AND '),
          ...(Object.keys(names).length > 0 ? { ExpressionAttributeNames: names } : {}),
          ExpressionAttributeValues: values,
          ScanIndexForward: false,
        },
        want,
        conditions.length > 1,
      );
    },

    listByRoot(rootRequestId, { now, max }) {
      // Oldest first, so a capped read keeps the start of the trace. (A record is written when its
      // invocation ends, so children usually precede their parent; the service links by parent id.)
      return collect(
        {
          TableName: table,
          IndexName: 'byRoot',
          KeyConditionExpression: 'rootRequestId = :root',
          FilterExpression: 'expiresAt > :nowSec',
          ExpressionAttributeValues: { ':root': rootRequestId, ':nowSec': nowSeconds(now) },
          ScanIndexForward: true,
        },
        max,
        false,
      );
    },
  };
}

import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { BlobStore } from './blobs.ts';
import type { Clock } from './clock.ts';
import type { Db } from './db/dynamo.ts';
import type { Lineage } from './http/lineage.ts';
import { redact } from './logger.ts';
import { scrubSecrets } from './secret-scope.ts';

/** Bodies up to this size are kept in the record; larger ones go to the blob store in full. */
export const INLINE_BODY_BYTES = 8 * 1024;

export type ResourceType = 'agent' | 'action' | 'mcp' | 'voice' | 'code-server' | 'cron' | 'channel' | 'knowledge' | 'test';

export interface LoggedBody {
  /** The body, or its first INLINE_BODY_BYTES when `truncated`. */
  readonly preview: string;
  /** `json` when the body was a value serialised as JSON, `text` when it was a string kept as is. */
  readonly encoding: 'json' | 'text';
  readonly sizeBytes: number;
  readonly truncated: boolean;
  /** Blob key of the full body when truncated. */
  readonly blobKey: string | null;
}

/** One record per resource invocation (SPEC part 2, "Log record"). */
export interface UsageLogRecord {
  readonly requestId: string;
  readonly rootRequestId: string;
  readonly parentRequestId: string | null;
  readonly parentConversationId: string | null;
  readonly parentAgentId: string | null;
  readonly userId: string;
  readonly resourceId: string;
  readonly resourceType: ResourceType;
  /** Finer kind where the spec names one, e.g. `CODE_SERVER_BILLING`. */
  readonly requestType: string | null;
  readonly status: 'success' | 'error' | 'timeout';
  readonly request: LoggedBody;
  readonly response: LoggedBody;
  readonly metrics: { readonly durationMs: number; readonly memoryMb: number | null; readonly maxMemoryUsedMb: number | null };
  readonly creditsUsed: number;
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly createdAt: number;
  /** Epoch seconds; DynamoDB TTL. */
  readonly expiresAt: number;
}

export interface UsageLogInput {
  readonly lineage: Lineage;
  readonly userId: string;
  readonly resourceId: string;
  readonly resourceType: ResourceType;
  readonly requestType?: string;
  readonly status: UsageLogRecord['status'];
  readonly request: unknown;
  readonly response: unknown;
  readonly durationMs: number;
  readonly memoryMb?: number;
  readonly maxMemoryUsedMb?: number;
  readonly creditsUsed: number;
  readonly error?: { code: string; message: string };
}

export interface UsageLogWriter {
  write(input: UsageLogInput): Promise<UsageLogRecord>;
}

/**
 * Told of each record as it is written, before `write` resolves: the analytics counters
 * (functions/core/usage-counters.store.ts), so figures are added as usage is recorded and
 * never computed by scanning records. Its failure fails `write`, as the record's own would.
 *
 * Its writes go out beside the record's own put (`stored`), not after it: each store call is a
 * round trip the run's answer waits for, so one step instead of two. A listener must therefore
 * take back what it added when `stored` rejects, so figures never count a run that is not
 * recorded; a take-back that fails too is reported as its rejection.
 */
export interface UsageRecordListener {
  recorded(record: UsageLogRecord, stored: Promise<unknown>): Promise<void>;
}

/**
 * `value` with every secret handed out in this request (secret-scope.ts) replaced in every string,
 * object keys included, and nothing else changed: unlike the log redactor it keeps fields named
 * `token` or `password`, so it suits data shown to someone (a run's result) rather than logs.
 */
export function scrubSecretValues(value: unknown): unknown {
  if (typeof value === 'string') return scrubSecrets(value);
  if (Array.isArray(value)) return value.map(scrubSecretValues);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [scrubSecrets(k), scrubSecretValues(v)]));
}

/**
 * Writes usage records: large bodies first to the blob store, then the record (so a record never
 * points at a missing body). Bodies pass through the log redactor, so credentials that a caller
 * put in a body are not kept; every other string of the record (the error message above all,
 * which is user code's text, and the lineage a caller sent) has the request's secrets scrubbed.
 */
export function createUsageLogWriter(db: Db, blobs: BlobStore, clock: Clock, retentionDays: number, listener?: UsageRecordListener): UsageLogWriter {
  const table = db.table('usage-logs');

  async function logBody(value: unknown, key: string): Promise<LoggedBody> {
    const encoding = typeof value === 'string' ? 'text' : 'json';
    const text = encoding === 'text' ? String(redact(value)) : JSON.stringify(redact(value ?? null));
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.length <= INLINE_BODY_BYTES) return { preview: text, encoding, sizeBytes: bytes.length, truncated: false, blobKey: null };
    await blobs.put(key, bytes, encoding === 'json' ? 'application/json' : 'text/plain; charset=utf-8');
    return {
      preview: bytes
        .subarray(0, INLINE_BODY_BYTES)
        .toString('utf8')
        .replace(/\uFFFD$/, ''),
      encoding,
      sizeBytes: bytes.length,
      truncated: true,
      blobKey: key,
    };
  }

  return {
    async write(input) {
      const now = clock.now();
      const { lineage } = input;
      const prefix = `usage-logs/${input.userId}/${lineage.requestId}`;
      const orNull = (text: string | null) => (text === null ? null : scrubSecrets(text));
      // The two bodies are independent blobs: stored together (a large one is a store call each).
      const [request, response] = await Promise.all([logBody(input.request, `${prefix}/request.json`), logBody(input.response, `${prefix}/response.json`)]);
      const record: UsageLogRecord = {
        requestId: lineage.requestId,
        rootRequestId: scrubSecrets(lineage.rootRequestId),
        parentRequestId: orNull(lineage.parentRequestId),
        parentConversationId: orNull(lineage.parentConversationId),
        parentAgentId: orNull(lineage.parentAgentId),
        userId: input.userId,
        resourceId: scrubSecrets(input.resourceId),
        resourceType: input.resourceType,
        requestType: orNull(input.requestType ?? null),
        status: input.status,
        request,
        response,
        metrics: { durationMs: input.durationMs, memoryMb: input.memoryMb ?? null, maxMemoryUsedMb: input.maxMemoryUsedMb ?? null },
        creditsUsed: input.creditsUsed,
        error: input.error === undefined ? null : { code: String(redact(input.error.code)), message: String(redact(input.error.message)) },
        createdAt: now,
        expiresAt: Math.floor(now / 1000) + retentionDays * 86_400,
      };
      const stored = db.doc.send(new PutCommand({ TableName: table, Item: record }));
      // --- analytics hook (issue 37): beside the record's put, taken back by the listener if the
      // put fails, so a counted run still always has its record (issue 33: one step, not two). ---
      const counted = listener === undefined ? Promise.resolve() : listener.recorded(record, stored);
      const [put, counters] = await Promise.allSettled([stored, counted]);
      // --- end of analytics hook ---
      if (put.status === 'rejected') {
        // The record's failure is the error; counters that could not be taken back are said with it.
        if (counters.status === 'rejected') throw new AggregateError([put.reason, counters.reason], `usage record not written: ${messageOf(counters.reason)}`);
        throw put.reason;
      }
      if (counters.status === 'rejected') throw counters.reason;
      return record;
    },
  };
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * The layout of the usage counters (table `usage-stats`): which items one usage record adds to, and
 * how a duration histogram is bucketed and read back. Pure, so the write side (usage-counters.store.ts,
 * called by the usage recorder), the read side and the bench share one definition.
 *
 * Items, all keyed `scope` + `slot`, every figure an atomic ADD:
 * - `u#<userId>` / `h#<YYYY-MM-DDTHH>`: the user's hour (timeseries by hour);
 * - `u#<userId>` / `d#<YYYY-MM-DD>`: the user's day, with per-type figures (overview, timeseries by day);
 * - `u#<userId>` / `r#<YYYY-MM-DD>#<resourceType>#<resourceId>`: the user's day on one resource, with a
 *   duration histogram (resources, top resources, percentiles);
 * - `r#<resourceId>` / `d#<YYYY-MM-DD>`: the resource's day over every payer, counts only (what an
 *   author sees of others' calls: this total minus the author's own).
 * The user is the record's `userId` (the payer), the same one `/logs` lists by, so the two agree.
 */
import type { UsageLogRecord } from './usage-log.ts';

export const HOUR_MS = 3_600_000;
export const DAY_MS = 86_400_000;

/** Counter items outlive the figures the API reaches back to (365 days), then DynamoDB's TTL drops them. */
export const COUNTER_RETENTION_DAYS = 400;

/**
 * Duration buckets: BUCKETS_PER_DOUBLING per doubling of (ms + 1), so bucket `i` holds durations
 * with 2^(i/4) <= ms + 1 < 2^((i+1)/4). A percentile is reported as its bucket's geometric middle,
 * so it is within a factor 2^(1/8) (about 9 %) of the exact value, whatever the number of runs.
 */
export const BUCKETS_PER_DOUBLING = 4;
/** 2^(120/4) ms is beyond any run's limit: the last bucket holds everything above. */
export const MAX_BUCKET = 120;

export function durationBucket(durationMs: number): number {
  const ms = Number.isFinite(durationMs) && durationMs > 0 ? durationMs : 0;
  return Math.min(MAX_BUCKET, Math.floor(Math.log2(ms + 1) * BUCKETS_PER_DOUBLING));
}

/** The value a percentile falling in bucket `i` is reported as (ms, rounded). */
export function bucketMiddle(bucket: number): number {
  return Math.max(0, Math.round(2 ** ((bucket + 0.5) / BUCKETS_PER_DOUBLING) - 1));
}

/** Histogram attribute names: `h<bucket>`. */
export const histogramAttribute = (bucket: number) => `h${bucket}`;

/** The `p` (0..1] percentile of a histogram (bucket -> count), null when it is empty. */
export function percentileOf(histogram: ReadonlyMap<number, number>, p: number): number | null {
  let total = 0;
  for (const count of histogram.values()) total += count;
  if (total === 0) return null;
  const rank = Math.max(1, Math.ceil(p * total));
  let seen = 0;
  for (const bucket of [...histogram.keys()].sort((a, b) => a - b)) {
    seen += histogram.get(bucket)!;
    if (seen >= rank) return bucketMiddle(bucket);
  }
  return null;
}

/** A record counts as an error unless it succeeded (`error` and `timeout` alike), as `/logs?status=` tells them apart. */
export const isError = (record: Pick<UsageLogRecord, 'status'>) => record.status !== 'success';

export const hourSlot = (ms: number) => `h#${new Date(ms).toISOString().slice(0, 13)}`;
export const daySlot = (ms: number) => `d#${new Date(ms).toISOString().slice(0, 10)}`;
export const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
export const userScope = (userId: string) => `u#${userId}`;
export const resourceScope = (resourceId: string) => `r#${resourceId}`;
export const resourceDaySlot = (ms: number, resourceType: string, resourceId: string) => `r#${dayOf(ms)}#${resourceType}#${resourceId}`;

/** What one counter item receives from one record: numbers to ADD, and fields to SET (the same each time). */
export interface CounterDelta {
  readonly scope: string;
  readonly slot: string;
  readonly add: Readonly<Record<string, number>>;
  readonly set: Readonly<Record<string, string | number>>;
}

/** The four counter items one usage record adds to. */
export function countersOf(
  record: Pick<UsageLogRecord, 'userId' | 'resourceId' | 'resourceType' | 'status' | 'metrics' | 'creditsUsed' | 'createdAt'>,
): CounterDelta[] {
  const at = record.createdAt;
  const errors = isError(record) ? 1 : 0;
  const base = { n: 1, e: errors, c: record.creditsUsed, d: record.metrics.durationMs };
  const expiresAt = Math.floor(at / 1000) + COUNTER_RETENTION_DAYS * 86_400;
  const type = record.resourceType;
  return [
    { scope: userScope(record.userId), slot: hourSlot(at), add: base, set: { expiresAt } },
    {
      scope: userScope(record.userId),
      slot: daySlot(at),
      add: { ...base, [`n_${type}`]: 1, [`e_${type}`]: errors, [`c_${type}`]: record.creditsUsed },
      set: { expiresAt },
    },
    {
      scope: userScope(record.userId),
      slot: resourceDaySlot(at, type, record.resourceId),
      add: { ...base, [histogramAttribute(durationBucket(record.metrics.durationMs))]: 1 },
      set: { expiresAt, resourceId: record.resourceId, resourceType: type },
    },
    { scope: resourceScope(record.resourceId), slot: daySlot(at), add: { n: 1, e: errors }, set: { expiresAt, resourceType: type } },
  ];
}

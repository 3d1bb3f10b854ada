/**
 * The rules of the usage counters (functions/core/usage-counters.ts): which items a record adds
 * to, the duration buckets and the precision of percentiles read from them; and the task board's
 * sort keys (functions/task-board/task.store.ts).
 */
import { describe, expect, it } from 'vitest';
import { bucketMiddle, countersOf, durationBucket, percentileOf } from '../../functions/core/usage-counters.ts';
import { NO_DUE_SORT, sortKeysOf } from '../../functions/task-board/task.store.ts';

const at = Date.parse('2026-11-28T19:42:10.123Z');
const record = (status: 'success' | 'error' | 'timeout', durationMs = 120) => ({
  userId: 'u1',
  resourceId: 'r1',
  resourceType: 'mcp' as const,
  status,
  metrics: { durationMs, memoryMb: null, maxMemoryUsedMb: null },
  creditsUsed: 0.0125,
  createdAt: at,
});

describe('usage counters', () => {
  it("adds one record to the user's hour, day and resource-day, and to the resource's day", () => {
    // Act
    const deltas = countersOf(record('timeout'));

    // Assess
    expect(deltas.map((d) => [d.scope, d.slot])).toEqual([
      ['u#u1', 'h#2026-11-28T19'],
      ['u#u1', 'd#2026-11-28'],
      ['u#u1', 'r#2026-11-28#mcp#r1'],
      ['r#r1', 'd#2026-11-28'],
    ]);
    expect(deltas[1]!.add).toMatchObject({ n: 1, e: 1, c: 0.0125, d: 120, n_mcp: 1, e_mcp: 1, c_mcp: 0.0125 });
    expect(deltas[2]!.add).toMatchObject({ [`h${durationBucket(120)}`]: 1 });
    // Counts only on the resource's item: nothing of the payer or what they spent.
    expect(deltas[3]).toMatchObject({ add: { n: 1, e: 1 } });
    expect(JSON.stringify(deltas[3])).not.toContain('u1');
    expect(countersOf(record('success'))[0]!.add.e).toBe(0);
  });

  it('reads percentiles within a factor 2^(1/8) of the exact value, whatever the spread', () => {
    // Prepare: durations from 0 ms to ten minutes, log-spread
    const durations = Array.from({ length: 5000 }, (_, i) => Math.round(Math.exp((i / 5000) * Math.log(600_000))) - 1).sort((a, b) => a - b);
    const histogram = new Map<number, number>();
    for (const ms of durations) histogram.set(durationBucket(ms), (histogram.get(durationBucket(ms)) ?? 0) + 1);

    // Act / Assess
    for (const p of [0.5, 0.9, 0.95, 0.99]) {
      const exact = durations[Math.ceil(p * durations.length) - 1]!;
      const estimate = percentileOf(histogram, p)!;
      const ratio = (estimate + 1) / (exact + 1);
      expect(ratio, `p${p * 100}`).toBeLessThanOrEqual(2 ** (1 / 8) + 1e-9);
      expect(ratio, `p${p * 100}`).toBeGreaterThanOrEqual(2 ** (-1 / 8) - 1e-9);
    }
    expect(percentileOf(new Map(), 0.5)).toBeNull();
    expect(durationBucket(0)).toBe(0);
    expect(durationBucket(-5)).toBe(0);
    expect(durationBucket(Number.NaN)).toBe(0);
    expect(bucketMiddle(durationBucket(1_000))).toBeGreaterThan(900);
  });
});

describe('task sort keys', () => {
  it('orders by priority, then by age, and puts tasks without a due time last', () => {
    // Act
    const high = sortKeysOf({ priority: 'high', createdAt: 1, dueAt: null });
    const mediumNewer = sortKeysOf({ priority: 'medium', createdAt: 4_000_000_000_000, dueAt: 5 });
    const undatedNewer = sortKeysOf({ priority: 'low', createdAt: 4_000_000_000_000, dueAt: null });
    const latestDate = sortKeysOf({ priority: 'low', createdAt: 1, dueAt: 8_640_000_000_000_000 });

    // Assess
    expect(high.prioritySort).toBeGreaterThan(mediumNewer.prioritySort);
    expect(high.dueSort).toBe(NO_DUE_SORT + 1);
    expect(mediumNewer.dueSort).toBe(5);
    // Undated tasks come after the latest date there is, and in order of age among themselves, exactly.
    expect(high.dueSort).toBeGreaterThan(latestDate.dueSort);
    expect(undatedNewer.dueSort).toBeGreaterThan(high.dueSort);
    expect(Number.isSafeInteger(undatedNewer.dueSort)).toBe(true);
  });
});

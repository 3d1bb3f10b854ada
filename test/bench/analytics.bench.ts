import { randomUUID } from 'node:crypto';
import { countersOf, DAY_MS, type CounterDelta } from '../../functions/core/usage-counters.ts';
import { addToCounter } from '../../functions/core/usage-counters.store.ts';
import { lineageOf } from '../../functions/core/http/lineage.ts';
import { createUsageLogWriter, type ResourceType, type UsageLogInput } from '../../functions/core/usage-log.ts';
import { DEFAULT_SPARES } from '../../lib/local/platform.ts';
import { createUser, startTestPlatform } from '../support/local-platform.ts';
import type { BenchModule } from './harness.ts';
import { measured, versus } from './stats.ts';

const RECORD_SAMPLES = 300;
const OVERVIEW_SAMPLES = 30;
const DAYS = 30;
const RESOURCES = 20;
const TYPES: readonly ResourceType[] = ['agent', 'action', 'mcp', 'cron'];

/**
 * The counter items `count` runs of `userId` leave, spread over the last DAYS days and RESOURCES
 * resources: every record's deltas (countersOf, exactly what the recorder adds) merged per item.
 * ADD is commutative, so one ADD of the sums leaves the item as `count` ADDs would; recording
 * 100,000 runs one by one through dynalite would take the bench longer than it measures.
 */
function historyOf(userId: string, count: number, now: number): CounterDelta[] {
  const items = new Map<string, { scope: string; slot: string; add: Record<string, number>; set: Record<string, string | number> }>();
  for (let i = 0; i < count; i++) {
    const resource = i % RESOURCES;
    const deltas = countersOf({
      userId,
      resourceId: `${userId}-res-${resource}`,
      resourceType: TYPES[resource % TYPES.length]!,
      status: i % 17 === 0 ? 'error' : 'success',
      metrics: { durationMs: 20 + ((i * 7919) % 2000), memoryMb: null, maxMemoryUsedMb: null },
      creditsUsed: 0.01,
      // Within the overview of the last DAYS UTC days: today and the DAYS - 1 before it.
      createdAt: now - Math.floor((i / count) * (DAYS - 1) * DAY_MS),
    });
    for (const delta of deltas) {
      const key = `${delta.scope}|${delta.slot}`;
      const item = items.get(key) ?? { scope: delta.scope, slot: delta.slot, add: {}, set: { ...delta.set } };
      for (const [field, value] of Object.entries(delta.add)) item.add[field] = (item.add[field] ?? 0) + value;
      items.set(key, item);
    }
  }
  return [...items.values()];
}

/**
 * What analytics costs: the usage recorder with its counter hook against the same recorder without
 * it (alternating, one platform), and GET /analytics/overview for a user with 100,000 recorded runs
 * against one with 100, over HTTP on the local platform.
 */
export const analyticsBench: BenchModule = {
  name: 'analytics',
  async run({ progress, defer }) {
    progress('analytics: starting the platform');
    const platform = await startTestPlatform({ ...DEFAULT_SPARES });
    defer(() => platform.stop({ removeData: true }));
    const { ports } = platform.running;
    const bare = createUsageLogWriter(ports.db, ports.blobs, ports.clock, 30);
    const recorder = await createUser(platform);
    const input = (): UsageLogInput => ({
      lineage: lineageOf(randomUUID(), undefined),
      userId: recorder.userId,
      resourceId: 'bench-resource',
      resourceType: 'action',
      status: 'success',
      request: { n: 1 },
      response: { ok: true },
      durationMs: 42,
      creditsUsed: 0.01,
    });

    progress(`analytics: recording ${RECORD_SAMPLES} runs with and without the counters`);
    const withHook: number[] = [];
    const withoutHook: number[] = [];
    for (let i = 0; i < RECORD_SAMPLES; i++) {
      for (const [writer, samples] of [
        [bare, withoutHook],
        [ports.usageLogs, withHook],
      ] as const) {
        const startedAt = performance.now();
        await writer.write(input());
        samples.push(performance.now() - startedAt);
      }
    }

    const table = ports.db.table('usage-stats');
    const users = { small: await createUser(platform), large: await createUser(platform) };
    const now = platform.clock.now();
    for (const [user, count] of [
      [users.small, 100],
      [users.large, 100_000],
    ] as const) {
      const items = historyOf(user.userId, count, now);
      progress(`analytics: writing the ${items.length} counter items of ${count} runs`);
      for (let i = 0; i < items.length; i += 25) await Promise.all(items.slice(i, i + 25).map((item) => addToCounter(ports.db, table, item)));
    }

    progress('analytics: timing the overview');
    const overview = { small: [] as number[], large: [] as number[] };
    const check = { small: 0, large: 0 };
    for (let i = 0; i < OVERVIEW_SAMPLES; i++) {
      for (const size of ['small', 'large'] as const) {
        const startedAt = performance.now();
        const res = await platform.api('GET', `/analytics/overview?days=${DAYS}`, { token: users[size].token });
        overview[size].push(performance.now() - startedAt);
        if (res.status !== 200) throw new Error(`overview: ${res.status} ${res.text}`);
        check[size] = res.body.data.requests;
      }
    }
    if (check.small !== 100 || check.large !== 100_000) throw new Error(`overview counted ${check.small} and ${check.large} runs`);

    const bareRow = measured('record a run, no counters', withoutHook, { note: 'usage record put only' });
    const hookRow = versus(
      measured('record a run + its 4 counter ADDs', withHook, { note: 'issue 37 hook: 4 UpdateItems in parallel after the put' }),
      bareRow,
    );
    const smallRow = measured('overview, 100 recorded runs', overview.small, { note: `${DAYS} days, up to ${RESOURCES} resources` });
    const largeRow = versus(
      measured('overview, 100,000 recorded runs', overview.large, {
        note: `reads day and resource-day counters: bounded by ${DAYS} x ${RESOURCES}, not by runs`,
      }),
      smallRow,
    );
    return [bareRow, hookRow, smallRow, largeRow];
  },
};

import { areas } from '../../lib/manifest/areas.ts';
import { cronBenchArea } from '../fixtures/cron-bench-area/cron-bench.module.ts';
import { delays } from '../fixtures/cron-bench-area/handlers/record-due.queue.ts';
import { DEFAULT_SPARES } from '../../lib/local/platform.ts';
import { startTestPlatform } from '../support/local-platform.ts';
import type { BenchModule } from './harness.ts';
import { measured } from './stats.ts';

const JOBS = 1_000;
const MB = 1024 * 1024;

/** The heap after a full collection when `--expose-gc` is on, else as it stands. */
function heapUsed(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

/**
 * The local scheduler's overhead for 1,000 cron jobs: the memory its 1,000 armed schedules take, and
 * the time from each due time to the start of its run, when all 1,000 fall due in the same minute
 * (rate(1 minute), the densest schedule there is). Each due time goes the way a cron job's does:
 * timer, the persistent task queue, delivery to a queue handler; the handler here only notes the
 * delay, so agent runs do not count.
 */
export const cronBench: BenchModule = {
  name: 'cron',
  async run({ progress, defer }) {
    progress('cron: starting the platform');
    const platform = await startTestPlatform({ ...DEFAULT_SPARES, areas: [...areas, cronBenchArea] });
    defer(() => platform.stop({ removeData: true }));
    const schedules = platform.running.schedules;

    const before = heapUsed();
    progress(`cron: arming ${JOBS} schedules`);
    const putTimes: number[] = [];
    for (let i = 0; i < JOBS; i++) {
      const startedAt = performance.now();
      await schedules.put({
        id: `bench-${i}`,
        expression: 'rate(1 minute)',
        timezone: 'UTC',
        enabled: true,
        queue: 'cronbench.record-due',
        input: { cronId: `bench-${i}` },
      });
      putTimes.push(performance.now() - startedAt);
    }
    const armed = heapUsed() - before;
    const due = schedules.nextDue('bench-0')!;

    progress(`cron: waiting for the due time ${due.toISOString()}`);
    const until = due.getTime() + 120_000;
    while (delays.length < JOBS && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 250));
    if (delays.length < JOBS) throw new Error(`only ${delays.length} of ${JOBS} due times reached their handler within 2 minutes`);
    for (let i = 0; i < JOBS; i++) await schedules.remove(`bench-${i}`);

    return [
      measured(`heap of ${JOBS} armed schedules`, [armed / MB], {
        unit: 'MB',
        note: (globalThis as { gc?: unknown }).gc ? 'after GC' : 'no --expose-gc: heap as it stood',
      }),
      measured('put one schedule (table write + timer)', putTimes),
      measured(`due -> run start, ${JOBS} due in the same minute`, delays.slice(0, JOBS), { note: 'timer, task-queue write, delivery (4 at a time)' }),
    ];
  },
};

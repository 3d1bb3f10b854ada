/**
 * The in-process scheduler behind `npm start`: fires each schedule at its timetable's slots, never
 * runs one schedule twice at once, and stops cleanly. Time is vitest's fake clock, so a five-minute
 * rate takes no real time.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { defineSchedule, type BoundSchedule } from '../../functions/core/entry/entry-point.ts';
import { createLogger } from '../../functions/core/logger.ts';
import type { Ports } from '../../functions/ports.ts';
import { defineArea } from '../../lib/manifest/define.ts';
import { startLocalScheduler } from '../../lib/local/scheduler.ts';

const area = defineArea({ name: 'timed', entryPoints: [{ kind: 'schedule', handler: 'tick', expression: 'rate(5 minutes)', timeoutSec: 600 }] });
const spec = area.entryPoints[0] as BoundSchedule['spec'];

function fakePorts(lines: string[]): Ports {
  return { log: createLogger('debug', {}, (line) => lines.push(line)), clock: { now: () => Date.now() } } as unknown as Ports;
}

describe('the local scheduler', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-11-24T10:02:00Z'));
  });
  afterEach(() => vi.useRealTimers());

  it('fires at each slot of the timetable with the slot as firedAt', async () => {
    // Prepare
    const fired: string[] = [];
    const definition = defineSchedule({ run: async ({ firedAt }) => void fired.push(firedAt.toISOString()) });
    const scheduler = startLocalScheduler({ schedules: [{ spec, definition, area }], ports: fakePorts([]) });

    // Act
    await vi.advanceTimersByTimeAsync(13 * 60_000);
    await scheduler.close();

    // Assess
    expect(fired).toEqual(['2026-11-24T10:05:00.000Z', '2026-11-24T10:10:00.000Z', '2026-11-24T10:15:00.000Z']);
  });

  it('skips a slot while the previous run of the same schedule is still going, and says so', async () => {
    // Prepare: a run that takes seven minutes
    const lines: string[] = [];
    let started = 0;
    const definition = defineSchedule({
      run: async () => {
        started += 1;
        await new Promise((resolve) => setTimeout(resolve, 7 * 60_000));
      },
    });
    const scheduler = startLocalScheduler({ schedules: [{ spec, definition, area }], ports: fakePorts(lines) });

    // Act: slots at 10:05 (runs to 10:12), 10:10 (skipped), 10:15 (runs to 10:22), 10:20 (skipped)
    await vi.advanceTimersByTimeAsync(14 * 60_000);
    await vi.advanceTimersByTimeAsync(7 * 60_000);
    await scheduler.close();

    // Assess
    expect(started).toBe(2);
    expect(lines.filter((l) => l.includes('scheduled run skipped')).map((l) => (JSON.parse(l) as { firedAt: string }).firedAt)).toEqual([
      '2026-11-24T10:10:00.000Z',
      '2026-11-24T10:20:00.000Z',
    ]);
  });

  it('fires the last slot of a year range, then has ended: says so and throws nothing', async () => {
    // Prepare: a schedule whose last slot is 10:30 today
    const lines: string[] = [];
    const fired: string[] = [];
    const ending = defineArea({ name: 'ending', entryPoints: [{ kind: 'schedule', handler: 'once', expression: 'cron(30 10 24 11 ? 2026)', timeoutSec: 60 }] });
    const definition = defineSchedule({ run: async ({ firedAt }) => void fired.push(firedAt.toISOString()) });
    const scheduler = startLocalScheduler({
      schedules: [{ spec: ending.entryPoints[0] as BoundSchedule['spec'], definition, area: ending }],
      ports: fakePorts(lines),
    });

    // Act
    await vi.advanceTimersByTimeAsync(60 * 60_000);
    await scheduler.close();

    // Assess
    expect(fired).toEqual(['2026-11-24T10:30:00.000Z']);
    expect(lines.filter((l) => l.includes('has ended'))).toHaveLength(1);
  });

  it('fires nothing after close', async () => {
    // Prepare
    let runs = 0;
    const definition = defineSchedule({ run: async () => void (runs += 1) });
    const scheduler = startLocalScheduler({ schedules: [{ spec, definition, area }], ports: fakePorts([]) });

    // Act
    await scheduler.close();
    await vi.advanceTimersByTimeAsync(60 * 60_000);

    // Assess
    expect(runs).toBe(0);
  });
});

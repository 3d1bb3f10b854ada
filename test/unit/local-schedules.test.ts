/**
 * The local stand-in for EventBridge Scheduler's run-time schedules (cron jobs): a schedule whose
 * year range ends after a due time sends that due time, then has no next one, and nothing it does
 * reaches the process. Time is vitest's fake clock; the table is a stand-in that keeps what is put.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { defineQueue, type BoundQueue } from '../../functions/core/entry/queue.ts';
import { createLogger } from '../../functions/core/logger.ts';
import type { ScheduleDefinitionInput } from '../../functions/core/tasks/schedules.ts';
import type { TaskQueue } from '../../functions/core/tasks/tasks.ts';
import type { Ports } from '../../functions/ports.ts';
import { createLocalSchedules } from '../../functions/adapters/schedules/local.ts';
import { defineArea, entryPointsOf } from '../../lib/manifest/define.ts';

const area = defineArea({ name: 'timed', entryPoints: [{ kind: 'queue', handler: 'run', maxAttempts: 1, timeoutSec: 60 }] });
const queue: BoundQueue = { spec: entryPointsOf(area, 'queue')[0]!, definition: defineQueue({ payload: z.unknown(), run: async () => {} }), area };

function fakePorts(lines: string[], stored: ScheduleDefinitionInput[]): Ports {
  const send = async (command: { constructor: { name: string }; input: { Item?: unknown } }) => {
    if (command.constructor.name === 'ScanCommand') return { Items: stored };
    if (command.constructor.name === 'PutCommand') stored.push(command.input.Item as ScheduleDefinitionInput);
    return {};
  };
  return {
    log: createLogger('debug', {}, (line) => lines.push(line)),
    clock: { now: () => Date.now() },
    config: { TABLE_PREFIX: 'test-' },
    db: { doc: { send } },
  } as unknown as Ports;
}

const schedule = (expression: string): ScheduleDefinitionInput => ({
  id: 'cron_0000000000000000000a1',
  expression,
  timezone: 'UTC',
  enabled: true,
  queue: queue.spec.id,
  input: { cronId: 'cron_0000000000000000000a1' },
});

describe('the local run-time schedules', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(new Date('2026-12-31T11:58:00Z'));
  });
  afterEach(() => vi.useRealTimers());

  it('sends the last due time of a year range, then has no next one and keeps serving the other schedules', async () => {
    // Prepare: one schedule whose last run is today at noon, one that goes on
    const lines: string[] = [];
    const sent: string[] = [];
    const tasks: TaskQueue = { enqueue: async (_queue, body) => (sent.push(body), { taskId: `t${sent.length}` }) };
    const schedules = createLocalSchedules();
    await schedules.start({ queues: [queue], taskQueue: tasks, ports: fakePorts(lines, []) });
    await schedules.put(schedule('cron(0 12 31 12 ? 2026)'));
    await schedules.put({ ...schedule('rate(1 minute)'), id: 'cron_0000000000000000000b2', input: { cronId: 'cron_0000000000000000000b2' } });

    // Act: past noon, and three more minutes
    await vi.advanceTimersByTimeAsync(5 * 60_000);
    const ended = schedules.nextDue('cron_0000000000000000000a1');
    const going = schedules.nextDue('cron_0000000000000000000b2');
    await schedules.close();

    // Assess
    expect(sent.filter((body) => body.includes('a1'))).toEqual([
      JSON.stringify({ cronId: 'cron_0000000000000000000a1', scheduledTime: '2026-12-31T12:00:00.000Z' }),
    ]);
    expect(sent.filter((body) => body.includes('b2'))).toHaveLength(5);
    expect(ended).toBeNull();
    expect(going?.toISOString()).toBe('2026-12-31T12:04:00.000Z');
    expect(lines.some((line) => line.includes('has ended') && line.includes('cron_0000000000000000000a1'))).toBe(true);
  });

  it('arms nothing, and throws nothing, for a stored or new schedule whose year range has passed', async () => {
    // Prepare: a schedule stored before its last run, read at a start after it
    const lines: string[] = [];
    const stored = [schedule('cron(0 8 1 1 ? 2026)')];
    const schedules = createLocalSchedules();

    // Act
    await schedules.start({ queues: [queue], taskQueue: { enqueue: async () => ({ taskId: 't' }) }, ports: fakePorts(lines, stored) });
    const afterStart = schedules.nextDue('cron_0000000000000000000a1');
    await schedules.put({ ...schedule('cron(0 8 1 1 ? 2020)'), id: 'cron_0000000000000000000c3' });
    const afterPut = schedules.nextDue('cron_0000000000000000000c3');
    await schedules.close();

    // Assess
    expect(afterStart).toBeNull();
    expect(afterPut).toBeNull();
    expect(lines.filter((line) => line.includes('has ended'))).toHaveLength(2);
  });

  it('logs a schedule that fails to fire and keeps firing the others', async () => {
    // Prepare: a task queue that throws as it is called (not a rejected promise): the timer's own stack
    const lines: string[] = [];
    let calls = 0;
    const tasks: TaskQueue = {
      enqueue: (_queue, body) => {
        calls += 1;
        if (body.includes('a1')) throw new Error('broken on purpose');
        return Promise.resolve({ taskId: 't' });
      },
    };
    const schedules = createLocalSchedules();
    await schedules.start({ queues: [queue], taskQueue: tasks, ports: fakePorts(lines, []) });
    await schedules.put(schedule('rate(1 minute)'));
    await schedules.put({ ...schedule('rate(1 minute)'), id: 'cron_0000000000000000000b2', input: { cronId: 'cron_0000000000000000000b2' } });

    // Act
    await vi.advanceTimersByTimeAsync(3 * 60_000);
    const broken = schedules.nextDue('cron_0000000000000000000a1');
    const going = schedules.nextDue('cron_0000000000000000000b2');
    await schedules.close();

    // Assess: the broken one fired once and was disarmed; the other fired every minute and is armed
    expect(calls).toBe(1 + 3);
    expect(broken).toBeNull();
    expect(going).not.toBeNull();
    expect(lines.some((line) => line.includes('failed to fire') && line.includes('broken on purpose'))).toBe(true);
  });
});

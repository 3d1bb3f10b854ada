/**
 * What only the local task queue does, on dynalite without the HTTP platform: stopping lets a
 * delivery in progress finish and record its outcome while pending tasks stay for the next start,
 * and a task whose attempts a stop or crash used up is set aside on resume instead of run again
 * (as SQS redrives a message past its receive count instead of delivering it).
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineQueue, type BoundQueue } from '../../functions/core/entry/queue.ts';
import { createLogger } from '../../functions/core/logger.ts';
import type { Ports } from '../../functions/ports.ts';
import { createLocalTaskQueue, TASK_TABLE } from '../../functions/adapters/task-queue/local.ts';
import { defineArea } from '../../lib/manifest/define.ts';
import type { QueueSpec } from '../../lib/manifest/types.ts';
import { startLocalDb, type LocalDb } from '../support/local-db.ts';

const area = defineArea({ name: 'local', entryPoints: [{ kind: 'queue', handler: 'work', maxAttempts: 2, timeoutSec: 30 }] });
const spec = area.entryPoints[0] as QueueSpec;

describe('the local task queue', () => {
  let local: LocalDb;
  let platform: Ports;
  const lines: string[] = [];

  beforeEach(async () => {
    local = await startLocalDb();
    platform = {
      config: { TABLE_PREFIX: 'test-' },
      db: local.db,
      clock: { now: () => Date.now() },
      log: createLogger('debug', {}, (line) => lines.push(line)),
    } as unknown as Ports;
  });
  afterEach(() => local.stop());

  it('lets a delivery in progress finish when it stops, and leaves pending tasks for the next start', async () => {
    // Prepare: a handler that runs until the test lets it end
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let markStarted!: () => void;
    const started = new Promise<void>((resolve) => (markStarted = resolve));
    const ran: number[] = [];
    const definition = defineQueue({
      payload: z.object({ n: z.number() }),
      run: async ({ payload }) => {
        if (payload.n === 1) {
          markStarted();
          await gate;
        }
        ran.push(payload.n);
      },
    });
    const bound: BoundQueue = { spec, definition, area };
    const first = createLocalTaskQueue();
    await first.start({ queues: [bound], ports: platform });
    await first.enqueue(spec, '{"n":1}', 0);
    const delayed = await first.enqueue(spec, '{"n":2}', 600);
    await started;

    // Act
    const closing = first.close();
    release();
    await closing;
    const afterClose = await first.list();
    const second = createLocalTaskQueue();
    await second.start({ queues: [bound], ports: platform });
    const resumed = await second.list();
    await second.close();

    // Assess
    expect(ran).toEqual([1]);
    expect(afterClose).toMatchObject([{ taskId: delayed.taskId, state: 'pending', attempt: 0 }]);
    expect(resumed).toMatchObject([{ taskId: delayed.taskId, state: 'pending' }]);
  });

  it('sets aside, without running it, a resumed task whose attempts were all used', async () => {
    // Prepare: a task that was being delivered for the last time when the platform went away
    let runs = 0;
    const bound: BoundQueue = { spec, definition: defineQueue({ payload: z.unknown(), run: async () => void (runs += 1) }), area };
    const first = createLocalTaskQueue();
    await first.start({ queues: [], ports: platform });
    const { taskId } = await first.enqueue(spec, '{}', 0);
    await first.close();
    await local.db.doc.send(
      new UpdateCommand({
        TableName: `test-${TASK_TABLE.name}`,
        Key: { queue: spec.id, taskId },
        UpdateExpression: 'SET attempt = :used',
        ExpressionAttributeValues: { ':used': spec.maxAttempts },
      }),
    );

    // Act
    const second = createLocalTaskQueue();
    await second.start({ queues: [bound], ports: platform });
    await second.idle();
    const kept = await second.list();
    await second.close();

    // Assess
    expect(runs).toBe(0);
    expect(kept).toMatchObject([{ taskId, state: 'dead', attempt: spec.maxAttempts, setAside: { reason: 'max-attempts' } }]);
  });
});

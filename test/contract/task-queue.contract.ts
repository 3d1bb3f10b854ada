/**
 * The TaskQueue port's contract (functions/core/tasks/tasks.ts), as an area sees it through
 * `tasks.send` and its queue handler: what `send` accepts and refuses (JSON of at most 256 KiB, a
 * delay of 0 to 900 whole seconds, the area's own queues), and what the consumer receives and in
 * what shape: the payload parsed, the id `send` returned, the attempt; at least once, after the
 * delay; a failed task again with the same id until `maxAttempts`, then set aside as a dead letter;
 * a payload the handler's schema refuses set aside at once, unrun. task-queue.test.ts runs it
 * against the local persistent queue and against SQS on moto, each with its own consumer harness.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineQueue, type BoundQueue } from '../../functions/core/entry/queue.ts';
import {
  createPlatformTasks,
  MAX_TASK_BYTES,
  MAX_TASK_DELAY_SEC,
  tasksForArea,
  TaskSendError,
  type TaskQueue,
  type Tasks,
} from '../../functions/core/tasks/tasks.ts';
import { defineArea, entryPointsOf } from '../../lib/manifest/define.ts';

/** A task set aside, as the adapter keeps it for the operator. */
export interface DeadLetter {
  readonly taskId: string;
  /** The payload's JSON, as sent. */
  readonly body: string;
  readonly reason: 'invalid-payload' | 'max-attempts';
}

/** A working adapter, with the consumer side played as its wiring plays it. */
export interface TaskQueueUnderTest {
  readonly queue: TaskQueue;
  /**
   * Hands every task due now to the consumer, as the wiring would, until none is left due. A
   * failed task is due again at once: its backoff (the local retry delay, SQS's visibility
   * timeout) is the harness's to skip.
   */
  deliverDue(): Promise<void>;
  /** Lets `seconds` pass for the queue's delays. */
  pass(seconds: number): Promise<void>;
  /** Every task set aside so far. */
  deadLetters(): Promise<DeadLetter[]>;
  close(): Promise<void>;
}

export interface TaskQueueContractSetup {
  /** The adapter, with `consumer` bound as the only queue entry point it delivers to. */
  start(consumer: BoundQueue): Promise<TaskQueueUnderTest>;
}

/** The consumer's area: one queue entry point, three attempts (the assertions count them). */
export const contractArea = defineArea({ name: 'relay', entryPoints: [{ kind: 'queue', handler: 'work', maxAttempts: 3, timeoutSec: 5 }], uses: ['tasks'] });
export const contractQueue = entryPointsOf(contractArea, 'queue')[0]!;

interface Delivery {
  readonly taskId: string;
  readonly attempt: number;
  readonly payload: unknown;
}

/** `data` that makes the payload's JSON exactly `bytes` long. */
function payloadOfBytes(bytes: number): { kind: 'ok'; n: number; data: string } {
  const empty = Buffer.byteLength(JSON.stringify({ kind: 'ok', n: 0, data: '' }), 'utf8');
  return { kind: 'ok', n: 0, data: 'x'.repeat(bytes - empty) };
}

export function describeTaskQueueContract(adapterName: string, setup: TaskQueueContractSetup): void {
  describe(`TaskQueue contract: ${adapterName}`, () => {
    let under: TaskQueueUnderTest;
    let tasks: Tasks;
    let deliveries: Delivery[] = [];
    const payload = z.object({ kind: z.enum(['ok', 'fail']), n: z.number(), data: z.unknown().optional() });
    const consumer: BoundQueue = {
      spec: contractQueue,
      area: contractArea,
      definition: defineQueue({
        payload,
        run: async ({ taskId, attempt, payload: task }) => {
          deliveries.push({ taskId, attempt, payload: task });
          if (task.kind === 'fail') throw new Error(`task ${task.n} fails on purpose`);
        },
      }),
    };
    const deliveriesOf = (taskId: string) => deliveries.filter((d) => d.taskId === taskId);

    beforeAll(async () => {
      under = await setup.start(consumer);
      tasks = tasksForArea(createPlatformTasks(under.queue), contractArea);
    });
    afterAll(async () => {
      await under?.close();
    });
    beforeEach(() => {
      deliveries = [];
    });

    it('delivers a sent payload to its consumer once, parsed, with the id send returned, as attempt 1', async () => {
      // Prepare: text SQS refuses in a body as it is (U+FFFE, U+FFFF), a lone surrogate, control characters, multi-byte text
      const data = { text: 'Grüße ✓ 🚀 二 \uFFFE\uFFFF \uD800 \u0001\t\n', list: [1, null, true, { deep: 'é' }] };

      // Act
      const sent = await tasks.send('work', { kind: 'ok', n: 1, data });
      await under.deliverDue();
      await under.deliverDue();

      // Assess
      expect(sent.taskId).toEqual(expect.any(String));
      expect(deliveries).toEqual([{ taskId: sent.taskId, attempt: 1, payload: { kind: 'ok', n: 1, data } }]);
    });

    it('keeps each send a task of its own, equal payloads included', async () => {
      // Act
      const first = await tasks.send('work', { kind: 'ok', n: 2 });
      const second = await tasks.send('work', { kind: 'ok', n: 2 });
      await under.deliverDue();

      // Assess
      expect(first.taskId).not.toBe(second.taskId);
      expect(deliveries.map((d) => d.taskId).sort()).toEqual([first.taskId, second.taskId].sort());
    });

    it(`delivers a payload of exactly ${MAX_TASK_BYTES} bytes of JSON intact, and refuses one byte more without storing it`, async () => {
      // Prepare
      const largest = payloadOfBytes(MAX_TASK_BYTES);
      const tooLarge = payloadOfBytes(MAX_TASK_BYTES + 1);

      // Act
      const sent = await tasks.send('work', largest);
      const refused = tasks.send('work', tooLarge);
      await expect(refused).rejects.toThrow(TaskSendError);
      await under.deliverDue();

      // Assess
      expect(deliveries).toEqual([{ taskId: sent.taskId, attempt: 1, payload: largest }]);
    });

    it('refuses what is not JSON, a delay that is not 0 to 900 whole seconds and a queue not its area own, storing nothing', async () => {
      // Prepare
      const circular: Record<string, unknown> = { kind: 'ok', n: 3 };
      circular['self'] = circular;

      // Act + Assess
      for (const notJson of [undefined, () => 1, 1n, circular, Symbol('s')]) await expect(tasks.send('work', notJson)).rejects.toThrow(TaskSendError);
      for (const delaySec of [-1, 1.5, MAX_TASK_DELAY_SEC + 1, Number.NaN])
        await expect(tasks.send('work', { kind: 'ok', n: 3 }, { delaySec })).rejects.toThrow(TaskSendError);
      await expect(tasks.send('elsewhere', { kind: 'ok', n: 3 })).rejects.toThrow(TaskSendError);
      await under.deliverDue();
      expect(deliveries).toEqual([]);
    });

    it('holds a delayed task back until its delay has passed, and accepts the longest delay', async () => {
      // Act
      const longest = await tasks.send('work', { kind: 'ok', n: 4 }, { delaySec: MAX_TASK_DELAY_SEC });
      const delayed = await tasks.send('work', { kind: 'ok', n: 5 }, { delaySec: 1 });
      await under.deliverDue();
      const beforeDelay = [...deliveries];
      await under.pass(1);
      await under.deliverDue();

      // Assess
      expect(longest.taskId).toEqual(expect.any(String));
      expect(beforeDelay).toEqual([]);
      expect(deliveries).toEqual([{ taskId: delayed.taskId, attempt: 1, payload: { kind: 'ok', n: 5 } }]);
    });

    it('delivers a failing task again with the same id and the next attempt, up to maxAttempts, then sets it aside with its payload', async () => {
      // Act
      const sent = await tasks.send('work', { kind: 'fail', n: 6 });
      await under.deliverDue();
      await under.deliverDue();
      const dead = (await under.deadLetters()).filter((d) => d.taskId === sent.taskId);

      // Assess
      expect(deliveriesOf(sent.taskId).map((d) => d.attempt)).toEqual([1, 2, 3]);
      expect(dead).toEqual([{ taskId: sent.taskId, body: JSON.stringify({ kind: 'fail', n: 6 }), reason: 'max-attempts' }]);
    });

    it('sets aside at once, without running the handler, a payload its schema refuses', async () => {
      // Act
      const sent = await tasks.send('work', { kind: 'unknown', n: 7 });
      await under.deliverDue();
      const dead = (await under.deadLetters()).filter((d) => d.taskId === sent.taskId);

      // Assess
      expect(deliveries).toEqual([]);
      expect(dead).toEqual([{ taskId: sent.taskId, body: JSON.stringify({ kind: 'unknown', n: 7 }), reason: 'invalid-payload' }]);
    });
  });
}

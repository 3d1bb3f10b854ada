/**
 * The TaskQueue contract (task-queue.contract.ts) against both adapters, each consumed as its
 * wiring consumes it:
 * - local: `createLocalTaskQueue` on dynalite, delivering through its own consumer loop; time is
 *   the platform clock, which the harness moves for delays, and retries are due at once;
 * - SQS: `createSqsTaskQueue` against moto with the real AWS SDK, queues made as the stack makes
 *   them (256 KiB messages, redrive to a dead-letter queue at `maxAttempts`), consumed by
 *   `createSqsConsumer` (what a queue function's entry runs, functions/cloud.ts `queueHandler`)
 *   with the test playing Lambda's event source (test/support/sqs-event-source.ts). moto keeps
 *   real time, so a delay passes by waiting it out.
 */
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe } from 'vitest';
import { createLogger } from '../../functions/core/logger.ts';
import { createSqsConsumer, createSqsTaskQueue } from '../../functions/adapters/task-queue/aws.ts';
import { MAX_TASK_BYTES } from '../../functions/core/tasks/tasks.ts';
import type { Ports } from '../../functions/ports.ts';
import { createLocalTaskQueue } from '../../functions/adapters/task-queue/local.ts';
import { startLocalDb } from '../support/local-db.ts';
import { motoAvailable, motoClientConfig, startMoto } from '../support/moto.ts';
import { createQueueWithDeadLetter, deleteMessages, deliverBatch, receiveBatch } from '../support/sqs-event-source.ts';
import { describeTaskQueueContract, type DeadLetter } from './task-queue.contract.ts';

const hasMoto = motoAvailable();
if (!hasMoto) console.warn('moto is not installed: the SQS task queue contract is skipped (python3 -m pip install "moto[server]")');

/** The platform as the queues and the handlers use it: the handlers' log lines are kept, not printed. */
function platformStub(over: Record<string, unknown>): Ports {
  return { log: createLogger('debug', {}, () => undefined), ...over } as unknown as Ports;
}

describeTaskQueueContract('local (persistent queue on dynalite)', {
  async start(consumer) {
    const local = await startLocalDb();
    const clock = { at: Date.now(), now: () => clock.at };
    const queue = createLocalTaskQueue({ retryDelayMs: () => 0 });
    await queue.start({ queues: [consumer], ports: platformStub({ config: { TABLE_PREFIX: 'test-' }, db: local.db, clock }) });
    return {
      queue,
      deliverDue: () => queue.idle(),
      pass: async (seconds) => {
        clock.at += seconds * 1000;
      },
      deadLetters: async () =>
        (await queue.list()).filter((task) => task.state === 'dead').map((task) => ({ taskId: task.taskId, body: task.body, reason: task.setAside!.reason })),
      close: async () => {
        await queue.close();
        await local.stop();
      },
    };
  },
});

describe.skipIf(!hasMoto)('with moto', () => {
  describeTaskQueueContract('SQS (moto, real AWS SDK)', {
    async start(consumer) {
      const moto = await startMoto();
      const sqs = new SQSClient(motoClientConfig(moto.endpoint));
      const { main, deadLetter } = await createQueueWithDeadLetter(sqs, 'relay-work', consumer.spec.maxAttempts, {
        MaximumMessageSize: String(MAX_TASK_BYTES),
      });
      const platform = platformStub({
        config: {
          TASK_QUEUES: JSON.stringify({ [consumer.spec.id]: main.url }),
          TASK_DEAD_LETTER_QUEUES: JSON.stringify({ [consumer.spec.id]: deadLetter.url }),
        },
        clock: { now: () => Date.now() },
      });
      const handler = createSqsConsumer({ queues: [consumer], ports: () => platform, sqs: () => sqs });
      /** Messages due or in flight (a failed one is invisible until the millisecond after its receive); delayed ones are not counted. */
      const unfinished = async () => {
        const { Attributes } = await sqs.send(
          new GetQueueAttributesCommand({ QueueUrl: main.url, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'] }),
        );
        return Number(Attributes?.['ApproximateNumberOfMessages']) + Number(Attributes?.['ApproximateNumberOfMessagesNotVisible']);
      };
      const dead: DeadLetter[] = [];
      return {
        queue: createSqsTaskQueue({ sqs, queueUrls: { [consumer.spec.id]: main.url } }),
        async deliverDue() {
          // Rounds of Lambda's event source until nothing is due or in flight.
          for (;;) {
            if ((await deliverBatch(sqs, main, handler)) !== null) continue;
            if ((await unfinished()) === 0) return;
            await sleep(10);
          }
        },
        // moto's delays run on its own real clock: wait them out (past the millisecond it counts them to).
        pass: (seconds) => sleep(seconds * 1000 + 50),
        async deadLetters() {
          for (let batch = await receiveBatch(sqs, deadLetter.url, 60); batch.length > 0; batch = await receiveBatch(sqs, deadLetter.url, 60)) {
            for (const m of batch) {
              // The consumer sets a refused payload aside as a new message naming the task; the redrive moves the task itself.
              const setAside = m.MessageAttributes?.['setAsideReason']?.StringValue;
              dead.push({
                taskId: setAside === undefined ? m.MessageId! : m.MessageAttributes!['taskId']!.StringValue!,
                body: m.Body!,
                reason: setAside === 'invalid-payload' ? 'invalid-payload' : 'max-attempts',
              });
            }
            await deleteMessages(sqs, deadLetter.url, batch);
          }
          return [...dead];
        },
        async close() {
          sqs.destroy();
          await moto.stop();
        },
      };
    },
  });
});

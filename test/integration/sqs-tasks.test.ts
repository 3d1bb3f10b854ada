/**
 * The cloud's task queue and queue consumer against moto's SQS with the real AWS SDK: a send is one
 * SendMessage with the payload's JSON and delay; the consumer runs each record, answers the failed
 * ones as partial batch failures so SQS delivers them again (with a higher receive count) until the
 * redrive moves them to the dead-letter queue, and sends a payload its schema refuses to the
 * dead-letter queue at once. Lambda's event source is played by the test (test/support/sqs-event-source.ts):
 * receive, hand the batch to the handler, delete what it did not report as failed.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineQueue, type BoundQueue } from '../../functions/core/entry/queue.ts';
import { createLogger } from '../../functions/core/logger.ts';
import { createSqsConsumer, createSqsTaskQueue } from '../../functions/adapters/task-queue/aws.ts';
import { createPlatformTasks, tasksForArea } from '../../functions/core/tasks/tasks.ts';
import type { Ports } from '../../functions/ports.ts';
import { defineArea } from '../../lib/manifest/define.ts';
import type { QueueSpec } from '../../lib/manifest/types.ts';
import { motoAvailable, motoClientConfig, startMoto, type MotoServer } from '../support/moto.ts';
import { createQueueWithDeadLetter, deleteMessages, deliverBatch, receiveBatch, type SqsQueue } from '../support/sqs-event-source.ts';

const hasMoto = motoAvailable();
if (!hasMoto) console.warn('moto is not installed: the SQS task queue test is skipped (python3 -m pip install "moto[server]")');

const area = defineArea({ name: 'relay', entryPoints: [{ kind: 'queue', handler: 'work', maxAttempts: 2, timeoutSec: 5 }], uses: ['tasks'] });
const spec = area.entryPoints[0] as QueueSpec;

describe.skipIf(!hasMoto)('SQS tasks against moto with the real AWS SDK', () => {
  let moto: MotoServer;
  let sqs: SQSClient;
  let queue: SqsQueue;
  let deadLetter: SqsQueue;

  beforeAll(async () => {
    moto = await startMoto();
    sqs = new SQSClient(motoClientConfig(moto.endpoint));
    ({ main: queue, deadLetter } = await createQueueWithDeadLetter(sqs, 'relay-work', spec.maxAttempts));
  });
  afterAll(async () => {
    sqs?.destroy();
    await moto?.stop();
  });

  it("sends a task as one message with the payload's JSON, holding a delayed one back", async () => {
    // Prepare
    const tasks = tasksForArea(createPlatformTasks(createSqsTaskQueue({ sqs, queueUrls: { [spec.id]: queue.url } })), area);

    // Act
    const sent = await tasks.send('work', { n: 1, note: 'é' });
    const delayed = await tasks.send('work', { n: 2 }, { delaySec: 900 });
    const received = await receiveBatch(sqs, queue.url, 0);
    await deleteMessages(sqs, queue.url, received);

    // Assess
    expect(received.map((m) => [m.MessageId, m.Body])).toEqual([[sent.taskId, '{"n":1,"note":"é"}']]);
    expect(delayed.taskId).not.toBe(sent.taskId);
  });

  it('retries failed records through SQS until the redrive sets them aside, and sets a refused payload aside at once', async () => {
    // Prepare
    const attempts: number[] = [];
    const definition = defineQueue({
      payload: z.object({ n: z.number() }),
      run: async ({ payload, attempt }) => {
        if (payload.n < 0) {
          attempts.push(attempt);
          throw new Error('negative');
        }
      },
    });
    const bound: BoundQueue = { spec, definition, area };
    const lines: string[] = [];
    const platform = {
      config: { TASK_QUEUES: JSON.stringify({ [spec.id]: queue.url }), TASK_DEAD_LETTER_QUEUES: JSON.stringify({ [spec.id]: deadLetter.url }) },
      log: createLogger('debug', {}, (line) => lines.push(line)),
      clock: { now: () => Date.now() },
    } as unknown as Ports;
    const handler = createSqsConsumer({ queues: [bound], ports: () => platform, sqs: () => sqs });
    const ids = {
      fine: (await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: '{"n":1}' }))).MessageId!,
      failing: (await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: '{"n":-1}' }))).MessageId!,
      refused: (await sqs.send(new SendMessageCommand({ QueueUrl: queue.url, MessageBody: '{"n":"one"}' }))).MessageId!,
    };

    // Act: what Lambda's event source does, three times over (bounded)
    const responses = [];
    for (let round = 0; round < 3; round++) {
      const response = await deliverBatch(sqs, queue, handler);
      if (response === null) break;
      responses.push(response);
    }
    const dead = await receiveBatch(sqs, deadLetter.url, 0);

    // Assess
    expect(responses.map((r) => r.batchItemFailures)).toEqual([[{ itemIdentifier: ids.failing }], [{ itemIdentifier: ids.failing }]]);
    expect(attempts).toEqual([1, 2]);
    const refused = dead.find((m) => m.MessageAttributes?.['setAsideReason']?.StringValue === 'invalid-payload');
    expect(refused).toMatchObject({ Body: '{"n":"one"}', MessageAttributes: { taskId: { StringValue: ids.refused } } });
    expect(dead.find((m) => m.MessageId === ids.failing)?.Body).toBe('{"n":-1}');
    expect(dead.some((m) => m.Body === '{"n":1}')).toBe(false);
  });
});

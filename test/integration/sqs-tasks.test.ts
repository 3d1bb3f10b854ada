/**
 * The cloud's task queue and queue consumer against moto's SQS with the real AWS SDK: a send is one
 * SendMessage with the payload's JSON and delay; the consumer runs each record, answers the failed
 * ones as partial batch failures so SQS delivers them again (with a higher receive count) until the
 * redrive moves them to the dead-letter queue, and sends a payload its schema refuses to the
 * dead-letter queue at once. Lambda's event source is played by the test: receive, hand the batch
 * to the handler, delete what it did not report as failed.
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
  type Message,
} from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
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

const hasMoto = motoAvailable();
if (!hasMoto) console.warn('moto is not installed: the SQS task queue test is skipped (python3 -m pip install "moto[server]")');

const area = defineArea({ name: 'relay', entryPoints: [{ kind: 'queue', handler: 'work', maxAttempts: 2, timeoutSec: 5 }], uses: ['tasks'] });
const spec = area.entryPoints[0] as QueueSpec;

describe.skipIf(!hasMoto)('SQS tasks against moto with the real AWS SDK', () => {
  let moto: MotoServer;
  let sqs: SQSClient;
  let queue: { url: string; arn: string };
  let deadLetter: { url: string; arn: string };

  const create = async (name: string, attributes: Record<string, string> = {}) => {
    const url = (await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl!;
    const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes!['QueueArn']!;
    return { url, arn };
  };

  /** One receive, as Lambda's event source makes it; visible again at once when not deleted. */
  const receive = async (url: string): Promise<Message[]> =>
    (
      await sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          VisibilityTimeout: 0,
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      )
    ).Messages ?? [];

  const asEvent = (messages: Message[], arn: string): SQSEvent => ({
    Records: messages.map((m) => ({
      messageId: m.MessageId!,
      receiptHandle: m.ReceiptHandle!,
      body: m.Body!,
      attributes: {
        ApproximateReceiveCount: m.Attributes!['ApproximateReceiveCount']!,
        SentTimestamp: m.Attributes!['SentTimestamp']!,
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: '0',
      },
      messageAttributes: {},
      md5OfBody: m.MD5OfBody!,
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      awsRegion: 'us-east-1',
    })),
  });

  beforeAll(async () => {
    moto = await startMoto();
    sqs = new SQSClient(motoClientConfig(moto.endpoint));
    deadLetter = await create('relay-work-dead');
    queue = await create('relay-work', { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetter.arn, maxReceiveCount: String(spec.maxAttempts) }) });
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
    const received = await receive(queue.url);
    await sqs.send(
      new DeleteMessageBatchCommand({ QueueUrl: queue.url, Entries: received.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }),
    );

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
      const batch = await receive(queue.url);
      if (batch.length === 0) break;
      const response = await handler(asEvent(batch, queue.arn));
      responses.push(response);
      const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
      const done = batch.filter((m) => !failed.has(m.MessageId!));
      if (done.length > 0)
        await sqs.send(
          new DeleteMessageBatchCommand({ QueueUrl: queue.url, Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }),
        );
    }
    const dead = await receive(deadLetter.url);

    // Assess
    expect(responses.map((r) => r.batchItemFailures)).toEqual([[{ itemIdentifier: ids.failing }], [{ itemIdentifier: ids.failing }]]);
    expect(attempts).toEqual([1, 2]);
    const refused = dead.find((m) => m.MessageAttributes?.['setAsideReason']?.StringValue === 'invalid-payload');
    expect(refused).toMatchObject({ Body: '{"n":"one"}', MessageAttributes: { taskId: { StringValue: ids.refused } } });
    expect(dead.find((m) => m.MessageId === ids.failing)?.Body).toBe('{"n":-1}');
    expect(dead.some((m) => m.Body === '{"n":1}')).toBe(false);
  });
});

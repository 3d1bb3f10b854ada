/**
 * Lambda's SQS event source, played by a test against moto's SQS with the real AWS SDK: queues made
 * as the stack makes a queue entry point's (a dead-letter queue the redrive moves a message to
 * after `maxAttempts` receives), receives as the event source makes them, the batch handed to the
 * consumer as the SQSEvent Lambda builds, and deletion of what the consumer did not report as
 * failed. Used by the task queue's contract (test/contract/task-queue.test.ts) and the SQS tasks
 * test (test/integration/sqs-tasks.test.ts).
 */
import {
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  type Message,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';

export interface SqsQueue {
  readonly url: string;
  readonly arn: string;
}

/** A queue entry point's queue and its dead-letter queue (`<name>-dead`), the redrive at `maxAttempts` receives. */
export async function createQueueWithDeadLetter(
  sqs: SQSClient,
  name: string,
  maxAttempts: number,
  attributes: Record<string, string> = {},
): Promise<{ main: SqsQueue; deadLetter: SqsQueue }> {
  const create = async (queueName: string, own: Record<string, string>): Promise<SqsQueue> => {
    const url = (await sqs.send(new CreateQueueCommand({ QueueName: queueName, Attributes: { ...attributes, ...own } }))).QueueUrl!;
    const arn = (await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }))).Attributes!['QueueArn']!;
    return { url, arn };
  };
  const deadLetter = await create(`${name}-dead`, {});
  const main = await create(name, { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: deadLetter.arn, maxReceiveCount: String(maxAttempts) }) });
  return { main, deadLetter };
}

/**
 * One receive of up to 10 messages with their system and message attributes, as the event source
 * makes it. `visibilityTimeout` 0: a message not deleted is due again at once.
 */
export async function receiveBatch(sqs: SQSClient, url: string, visibilityTimeout: number): Promise<Message[]> {
  const { Messages } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: 10,
      VisibilityTimeout: visibilityTimeout,
      MessageSystemAttributeNames: ['All'],
      MessageAttributeNames: ['All'],
    }),
  );
  return Messages ?? [];
}

export async function deleteMessages(sqs: SQSClient, url: string, messages: readonly Message[]): Promise<void> {
  if (messages.length === 0) return;
  await sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: messages.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle! })) }));
}

/** A batch as Lambda's SQS event source hands it to the function. */
export function asSqsEvent(messages: readonly Message[], arn: string): SQSEvent {
  return {
    Records: messages.map((m) => ({
      messageId: m.MessageId!,
      receiptHandle: m.ReceiptHandle!,
      body: m.Body!,
      attributes: {
        ApproximateReceiveCount: m.Attributes!['ApproximateReceiveCount']!,
        SentTimestamp: m.Attributes!['SentTimestamp']!,
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: m.Attributes!['ApproximateFirstReceiveTimestamp'] ?? '0',
      },
      messageAttributes: {},
      md5OfBody: m.MD5OfBody!,
      eventSource: 'aws:sqs',
      eventSourceARN: arn,
      awsRegion: 'us-east-1',
    })),
  };
}

/**
 * One round of the event source on `queue` (visibility timeout 0, so a failed message is due again
 * at once): receive a batch, hand it to `handler`, delete what it did not report as failed.
 * Null when there was nothing to receive, else the handler's response.
 */
export async function deliverBatch(sqs: SQSClient, queue: SqsQueue, handler: (event: SQSEvent) => Promise<SQSBatchResponse>): Promise<SQSBatchResponse | null> {
  const batch = await receiveBatch(sqs, queue.url, 0);
  if (batch.length === 0) return null;
  const response = await handler(asSqsEvent(batch, queue.arn));
  const failed = new Set(response.batchItemFailures.map((f) => f.itemIdentifier));
  await deleteMessages(
    sqs,
    queue.url,
    batch.filter((m) => !failed.has(m.MessageId!)),
  );
  return response;
}

import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import * as z from 'zod';
import type { Ports } from '../../ports.ts';
import { ConfigError, type Config } from '../../core/config.ts';
import { runQueueTask, type BoundQueue } from '../../core/entry/queue.ts';
import type { TaskQueue } from '../../core/tasks/tasks.ts';

const queueUrls = z.record(z.string(), z.url());

/** A JSON object of entry-point id to queue URL (TASK_QUEUES, TASK_DEAD_LETTER_QUEUES). */
export function parseQueueUrls(variable: 'TASK_QUEUES' | 'TASK_DEAD_LETTER_QUEUES', value: string | undefined): Readonly<Record<string, string>> {
  if (value === undefined) throw new ConfigError(`Invalid platform configuration: ${variable}: is required in the cloud to use queue entry points`);
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    throw new ConfigError(`Invalid platform configuration: ${variable}: must be a JSON object of entry-point ids to queue URLs`);
  }
  const parsed = queueUrls.safeParse(json);
  if (!parsed.success) throw new ConfigError(`Invalid platform configuration: ${variable}: must be a JSON object of entry-point ids to queue URLs`);
  return parsed.data;
}

/**
 * The cloud's task queue: one SendMessage to the entry point's queue, whose URL comes from
 * TASK_QUEUES. The stack gives a function the URLs, and the permission, of its own areas' queues
 * only; a queue missing from the variable is one the function may not send to.
 */
export function createSqsTaskQueue(options: { sqs: SQSClient; queueUrls: Readonly<Record<string, string>> }): TaskQueue {
  return {
    async enqueue(queue, body, delaySec) {
      const url = options.queueUrls[queue.id];
      if (url === undefined) throw new ConfigError(`No queue URL for ${queue.id} in TASK_QUEUES: this function is not granted that queue`);
      const sent = await options.sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body, DelaySeconds: delaySec }));
      if (sent.MessageId === undefined) throw new Error(`SQS accepted a task for ${queue.id} without a message id`);
      return { taskId: sent.MessageId };
    },
  };
}

export interface SqsConsumerOptions {
  /** The area's queue entry points the function consumes. */
  readonly queues: readonly BoundQueue[];
  /** The ports, built on the first event (the function's configuration is read then). */
  readonly ports: () => Ports;
  readonly sqs: () => SQSClient;
}

/**
 * The handler of an area's queue consumer: Lambda's SQS event source hands it batches of one
 * queue's messages. Each message runs through `runQueueTask`, all at once (each bounded by its
 * entry point's timeout, which the function's outlives). It answers with partial batch failures
 * (`ReportBatchItemFailures`): failed messages reappear after the visibility timeout, with a
 * higher receive count, until the queue's redrive moves them to the dead-letter queue at
 * `maxAttempts`. A payload the handler's schema refuses is sent to the dead-letter queue at once
 * (with the reason as a message attribute) and removed from the queue: retrying cannot help.
 */
export function createSqsConsumer(options: SqsConsumerOptions): (event: SQSEvent) => Promise<SQSBatchResponse> {
  let byQueueName: Map<string, { bound: BoundQueue; deadLetterUrl: string | undefined }> | undefined;
  const resolve = (config: Config) => {
    if (byQueueName !== undefined) return byQueueName;
    const urls = parseQueueUrls('TASK_QUEUES', config.TASK_QUEUES);
    const deadLetters = parseQueueUrls('TASK_DEAD_LETTER_QUEUES', config.TASK_DEAD_LETTER_QUEUES);
    byQueueName = new Map(
      options.queues.map((bound) => {
        const url = urls[bound.spec.id];
        if (url === undefined) throw new ConfigError(`Invalid platform configuration: TASK_QUEUES: has no queue for ${bound.spec.id}`);
        return [queueNameOfUrl(url), { bound, deadLetterUrl: deadLetters[bound.spec.id] }];
      }),
    );
    return byQueueName;
  };

  return async (event) => {
    const ports = options.ports();
    const queues = resolve(ports.config);
    const failed = await Promise.all(
      event.Records.map(async (record): Promise<string | null> => {
        const entry = queues.get(queueNameOfArn(record.eventSourceARN));
        if (entry === undefined) {
          ports.log.error('task from a queue this function does not consume', { queueArn: record.eventSourceARN, taskId: record.messageId });
          return record.messageId;
        }
        const outcome = await runQueueTask(entry.bound, ports, { taskId: record.messageId, body: record.body, attempt: attemptOf(record) });
        if (outcome === 'succeeded') return null;
        if (outcome !== 'invalid-payload') return record.messageId;
        return (await setAside(options.sqs(), entry, record, ports)) ? null : record.messageId;
      }),
    );
    return { batchItemFailures: failed.filter((id): id is string => id !== null).map((itemIdentifier) => ({ itemIdentifier })) };
  };
}

/** Moves an unreadable task to the dead-letter queue; false (so SQS keeps retrying, then redrives it) when that fails. */
async function setAside(sqs: SQSClient, entry: { bound: BoundQueue; deadLetterUrl: string | undefined }, record: SQSRecord, ports: Ports): Promise<boolean> {
  const log = ports.log.child({ entryPoint: entry.bound.spec.id, taskId: record.messageId });
  if (entry.deadLetterUrl === undefined) {
    log.error('no dead-letter queue to set the task aside in (TASK_DEAD_LETTER_QUEUES); it stays until the queue redrives it');
    return false;
  }
  try {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: entry.deadLetterUrl,
        MessageBody: record.body,
        MessageAttributes: {
          setAsideReason: { DataType: 'String', StringValue: 'invalid-payload' },
          taskId: { DataType: 'String', StringValue: record.messageId },
        },
      }),
    );
    return true;
  } catch (error) {
    log.error('could not set the task aside; it stays until the queue redrives it', { error });
    return false;
  }
}

/** SQS's receive count: 1 on the first delivery. */
function attemptOf(record: SQSRecord): number {
  const count = Number(record.attributes.ApproximateReceiveCount);
  return Number.isInteger(count) && count > 0 ? count : 1;
}

/** `arn:aws:sqs:<region>:<account>:<name>` */
function queueNameOfArn(arn: string): string {
  return arn.slice(arn.lastIndexOf(':') + 1);
}

/** `https://sqs.<region>.amazonaws.com/<account>/<name>` */
function queueNameOfUrl(url: string): string {
  return new URL(url).pathname.split('/').filter(Boolean).pop() ?? url;
}

// One client for the execution environment: a queue function may both consume and send.
let sqs: SQSClient | undefined;
function sqsClient(config: Config): SQSClient {
  sqs ??= new SQSClient({ region: config.AWS_REGION });
  return sqs;
}

/** The task queue in the cloud: SQS, to the queues TASK_QUEUES names (those of the function's own areas). */
export function sqsTaskQueue(config: Config): TaskQueue {
  return createSqsTaskQueue({ sqs: sqsClient(config), queueUrls: parseQueueUrls('TASK_QUEUES', config.TASK_QUEUES) });
}

/** The handler consuming an area's queues from Lambda's SQS event source, with the shared client. */
export function sqsQueueConsumer(options: Omit<SqsConsumerOptions, 'sqs'>): ReturnType<typeof createSqsConsumer> {
  return createSqsConsumer({ ...options, sqs: () => sqsClient(options.ports().config) });
}

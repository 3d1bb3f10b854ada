import { SQSClient } from '@aws-sdk/client-sqs';
import type { Config } from '../core/config.ts';
import { createSqsConsumer, createSqsTaskQueue, parseQueueUrls, type SqsConsumerOptions } from '../core/tasks/sqs-tasks.ts';
import type { TaskQueue } from '../core/tasks/tasks.ts';

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
  return createSqsConsumer({ ...options, sqs: () => sqsClient(options.platform().config) });
}

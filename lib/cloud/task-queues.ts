import { Duration, Stack } from 'aws-cdk-lib';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { Config } from '../../functions/core/config.ts';
import { validateQueueSpec } from '../../functions/core/entry/queue.ts';
import { MAX_TASK_BYTES } from '../../functions/core/tasks/tasks.ts';
import { entryPointsOf } from '../manifest/routes.ts';
import type { AreaModule, QueueSpec } from '../manifest/types.ts';
import type { PlatformFunction } from './platform-function.ts';

/**
 * AWS's guidance for a queue feeding Lambda: a visibility timeout of at least six times the
 * function's timeout, so a batch the event source retries while the function is throttled is not
 * delivered again meanwhile. It is also the wait before a failed task's next attempt.
 */
const VISIBILITY_TIMEOUT_FACTOR = 6;

/** Messages per invocation; partial batch responses retry only the failed ones. */
const BATCH_SIZE = 10;

const QUEUE_URLS = 'TASK_QUEUES' satisfies keyof Config;
const DEAD_LETTER_QUEUE_URLS = 'TASK_DEAD_LETTER_QUEUES' satisfies keyof Config;

export interface TaskQueuesProps {
  /** The area modules; each queue entry point gets a queue and a dead-letter queue. */
  readonly modules: readonly AreaModule[];
  /** Timeout in seconds of the function consuming these queues of one area (the queues' visibility timeout follows from it). */
  readonly consumerTimeoutSec: (queues: readonly QueueSpec[]) => number;
}

/** The SQS queue of one queue entry point and its dead-letter queue. */
export interface EntryPointQueue {
  readonly spec: QueueSpec;
  readonly queue: Queue;
  readonly deadLetter: Queue;
}

/**
 * One SQS queue per queue entry point, with a dead-letter queue its redrive moves a task to after
 * `maxAttempts` receives. Encrypted with SQS-managed keys (no key policy or KMS calls to grant) and
 * reachable over TLS only. The dead-letter queue keeps messages for the 14-day maximum, longer than
 * the queue's 4 days: a standard queue's redrive keeps a message's original enqueue time.
 */
export class TaskQueues extends Construct {
  /** By entry-point id. */
  readonly queues: ReadonlyMap<string, EntryPointQueue>;

  constructor(scope: Construct, id: string, props: TaskQueuesProps) {
    super(scope, id);
    const queues = new Map<string, EntryPointQueue>();
    for (const area of props.modules) {
      const specs = entryPointsOf(area, 'queue');
      if (specs.length === 0) continue;
      specs.forEach(validateQueueSpec);
      const visibilityTimeout = Duration.seconds(VISIBILITY_TIMEOUT_FACTOR * props.consumerTimeoutSec(specs));
      for (const spec of specs) {
        const name = spec.id.replace(/[^A-Za-z0-9]/g, '-');
        const common = { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, maxMessageSizeBytes: MAX_TASK_BYTES } as const;
        const deadLetter = new Queue(this, `Dead-${name}`, { ...common, retentionPeriod: Duration.days(14) });
        const queue = new Queue(this, `Queue-${name}`, {
          ...common,
          retentionPeriod: Duration.days(4),
          visibilityTimeout,
          deadLetterQueue: { queue: deadLetter, maxReceiveCount: spec.maxAttempts },
        });
        queues.set(spec.id, { spec, queue, deadLetter });
      }
    }
    this.queues = queues;
  }

  /**
   * Lets `grantee` (a function, or a service's task role) send tasks to the queues of `areas` (those
   * of the areas it serves that declare the `tasks` port): `sqs:SendMessage` on exactly those
   * queues. Returns the variables that tell it their URLs (TASK_QUEUES), none when there are none.
   */
  grantSend(grantee: IGrantable, areas: ReadonlySet<string>): Record<string, string> {
    const own = [...this.queues.values()].filter((q) => areas.has(q.spec.area));
    if (own.length === 0) return {};
    for (const q of own) q.queue.grant(grantee, 'sqs:SendMessage');
    return { [QUEUE_URLS]: this.urls(own, 'queue') };
  }

  /**
   * Makes `fn` the consumer of `area`'s queues: an SQS event source per queue with partial batch
   * responses (the event source's grant is what reads and deletes messages), the queue URLs to
   * tell its records apart, and `sqs:SendMessage` on the dead-letter queues, where it sets aside a
   * task whose payload its handler refuses.
   */
  consume(fn: PlatformFunction, area: string): void {
    const own = [...this.queues.values()].filter((q) => q.spec.area === area);
    for (const q of own) {
      fn.function.addEventSource(new SqsEventSource(q.queue, { batchSize: BATCH_SIZE, reportBatchItemFailures: true }));
      q.deadLetter.grant(fn, 'sqs:SendMessage');
    }
    fn.function.addEnvironment(QUEUE_URLS, this.urls(own, 'queue'));
    fn.function.addEnvironment(DEAD_LETTER_QUEUE_URLS, this.urls(own, 'deadLetter'));
  }

  /** `{ "<entry-point id>": "<queue URL>" }`, resolved by CloudFormation. */
  private urls(queues: readonly EntryPointQueue[], which: 'queue' | 'deadLetter'): string {
    return Stack.of(this).toJsonString(Object.fromEntries(queues.map((q) => [q.spec.id, q[which].queueUrl])));
  }
}

import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { isConditionFailed, queryItems, writeIf } from '../../core/db/dynamo.ts';
import { runQueueTask, type BoundQueue, type TaskOutcome } from '../../core/entry/queue.ts';
import { sortableId } from '../../core/ids.ts';
import type { TaskQueue } from '../../core/tasks/tasks.ts';
import type { Ports } from '../../ports.ts';
import type { TableSpec } from '../../../lib/manifest/types.ts';

/**
 * Where the local queue keeps its tasks: a table of its own in dynalite, next to the platform's.
 * Not the blob store (s3rver), although one object per task would do: every attempt changes a
 * task (its attempt count, when it is due, whether it is set aside), which is one conditional
 * update of one item here; resuming reads each queue's partition with paged Queries, which dynalite
 * serves well, while s3rver's paged listings fail with 500 under OpenSSL 3 unless Node runs with
 * --openssl-legacy-provider (npm start does; a library user might not); and tasks in
 * the `blobs` bucket would be seen by storage events watching it. Not in the manifest either: in
 * the cloud SQS holds the tasks, so the table must not be created there.
 */
export const TASK_TABLE: TableSpec = { name: 'task-queue', partitionKey: 'queue', sortKey: 'taskId' };

/** A task as the local queue keeps it. */
export interface TaskRecord {
  /** The queue entry point's id (`sample.file-note`). */
  readonly queue: string;
  readonly taskId: string;
  /** `dead`: set aside after its last attempt or for a payload its handler refused; kept for the operator. */
  readonly state: 'pending' | 'dead';
  /** The payload's JSON. */
  readonly body: string;
  /** Deliveries so far. */
  readonly attempt: number;
  /** When it is next delivered (epoch ms), while pending. */
  readonly dueAt: number;
  readonly enqueuedAt: number;
  readonly setAside?: { readonly reason: 'invalid-payload' | 'max-attempts'; readonly at: number; readonly outcome: TaskOutcome };
}

/** The in-process stand-in for SQS and Lambda's event source behind `npm start`. */
export interface LocalTaskQueue extends TaskQueue {
  /** Binds the consumers and resumes every pending task (TASK_TABLE must exist: the stores' layout has it). */
  start(options: { readonly queues: readonly BoundQueue[]; readonly ports: Ports }): Promise<void>;
  /**
   * Resolves once no task is running and none is due by the platform clock: due tasks are
   * delivered at once rather than at their timer. Later ones (delayed, or waiting to be retried)
   * stay for their time, so a test moves the clock past them and calls this again.
   */
  idle(): Promise<void>;
  /** Every task kept for `queue` (an entry-point id), or for every bound queue: pending ones and dead letters. */
  list(queue?: string): Promise<TaskRecord[]>;
  /** Stops delivering and waits for the deliveries in progress; pending tasks stay in the table for the next start. */
  close(): Promise<void>;
}

export interface LocalTaskQueueOptions {
  /** Deliveries running at once, over all queues. @default 4 */
  readonly concurrency?: number;
  /** The wait before the attempt after `attempt` failed. @default 1 s doubling per attempt, at most 5 min */
  readonly retryDelayMs?: (attempt: number) => number;
}

interface Waiting {
  readonly queue: string;
  readonly taskId: string;
  readonly dueAt: number;
}

/**
 * A persistent queue per queue entry point, with SQS's delivery rules: a task is delivered after
 * its delay, each delivery counts as an attempt before the handler runs (so a crash mid-run is
 * counted, like SQS's receive count), a failed attempt is retried after a backoff, and after
 * `maxAttempts` the task is kept as a dead letter and logged at error. A payload its handler's
 * schema refuses is set aside at once. Delivery is at least once: a task whose run succeeded but
 * whose removal did not reach the table runs again. Timers do not keep the process alive.
 */
export function createLocalTaskQueue(options: LocalTaskQueueOptions = {}): LocalTaskQueue {
  const concurrency = options.concurrency ?? 4;
  const retryDelayMs = options.retryDelayMs ?? ((attempt: number) => Math.min(1000 * 2 ** (attempt - 1), 300_000));
  const consumers = new Map<string, BoundQueue>();
  const waiting = new Map<string, Waiting>();
  const running = new Map<string, Promise<void>>();
  let given: Ports | undefined;
  let table = '';
  let timer: NodeJS.Timeout | undefined;
  let closed = false;

  const keyOf = (task: { queue: string; taskId: string }) => `${task.queue}\n${task.taskId}`;
  const started = (): Ports => {
    if (given === undefined) throw new Error('The local task queue is not started yet.');
    return given;
  };

  const arm = () => {
    clearTimeout(timer);
    timer = undefined;
    // A full queue re-arms when a delivery ends; arming now would spin on tasks already due.
    if (closed || given === undefined || waiting.size === 0 || running.size >= concurrency) return;
    let next = Number.POSITIVE_INFINITY;
    for (const task of waiting.values()) next = Math.min(next, task.dueAt);
    // setTimeout holds at most about 24.8 days; the clock is checked again when it fires.
    timer = setTimeout(pumpGuarded, Math.min(Math.max(next - given.clock.now(), 0), 2 ** 31 - 1));
    timer.unref();
  };

  function pump(): void {
    if (closed || given === undefined) return;
    const now = given.clock.now();
    const due = [...waiting.values()].filter((task) => task.dueAt <= now).sort((a, b) => a.dueAt - b.dueAt);
    for (const task of due) {
      if (running.size >= concurrency) break;
      const key = keyOf(task);
      waiting.delete(key);
      const delivery = deliver(task)
        .catch((error: unknown) => {
          // The table did not answer: try again later rather than lose the task from memory.
          started().log.error('local task queue: a delivery failed; retrying it later', { entryPoint: task.queue, taskId: task.taskId, error });
          waiting.set(key, { ...task, dueAt: started().clock.now() + retryDelayMs(1) });
        })
        .finally(() => {
          running.delete(key);
          pumpGuarded();
        });
      running.set(key, delivery);
    }
    arm();
  }

  /**
   * pump from a timer or a delivery's end, where nothing catches: a throw there would end the
   * platform (or leave a rejection no one handles), so it is logged and the next enqueue, delivery
   * end or idle() pumps again.
   */
  function pumpGuarded(): void {
    try {
      pump();
    } catch (error) {
      given?.log.error('local task queue: pumping the queue failed; it resumes at the next task', { error });
    }
  }

  async function deliver(task: Waiting): Promise<void> {
    const ports = started();
    const bound = consumers.get(task.queue);
    if (bound === undefined) return;
    const Key = { queue: task.queue, taskId: task.taskId };
    const item = (await ports.db.doc.send(new GetCommand({ TableName: table, Key, ConsistentRead: true }))).Item as TaskRecord | undefined;
    if (item === undefined || item.state !== 'pending') return;
    // Its attempts were used up by runs a stop or crash cut short: SQS would redrive it rather than deliver it.
    if (item.attempt >= bound.spec.maxAttempts) return setAside(ports, Key, 'max-attempts', 'failed', item.attempt);
    const attempt = item.attempt + 1;
    // Counted before the run, as SQS counts a receive: a crash mid-run still uses up the attempt.
    const counted = await writeIf(
      ports.db.doc.send(
        new UpdateCommand({
          TableName: table,
          Key,
          UpdateExpression: 'SET attempt = :attempt',
          ConditionExpression: '#state = :pending AND attempt = :seen',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':attempt': attempt, ':pending': 'pending', ':seen': item.attempt },
        }),
      ),
    );
    if (!counted) return;
    const outcome = await runQueueTask(bound, ports, { taskId: task.taskId, body: item.body, attempt });
    if (outcome === 'succeeded') {
      await ports.db.doc.send(new DeleteCommand({ TableName: table, Key }));
    } else if (outcome === 'invalid-payload' || attempt >= bound.spec.maxAttempts) {
      await setAside(ports, Key, outcome === 'invalid-payload' ? 'invalid-payload' : 'max-attempts', outcome, attempt);
    } else {
      const dueAt = ports.clock.now() + retryDelayMs(attempt);
      await ports.db.doc.send(
        new UpdateCommand({ TableName: table, Key, UpdateExpression: 'SET dueAt = :dueAt', ExpressionAttributeValues: { ':dueAt': dueAt } }),
      );
      waiting.set(keyOf(task), { ...task, dueAt });
    }
  }

  /** Keeps the task as a dead letter, for the operator to read. */
  async function setAside(
    ports: Ports,
    Key: { queue: string; taskId: string },
    reason: 'invalid-payload' | 'max-attempts',
    outcome: TaskOutcome,
    attempts: number,
  ) {
    await ports.db.doc.send(
      new UpdateCommand({
        TableName: table,
        Key,
        UpdateExpression: 'SET #state = :dead, setAside = :setAside',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':dead': 'dead', ':setAside': { reason, at: ports.clock.now(), outcome } },
      }),
    );
    ports.log.error('task set aside as a dead letter', { entryPoint: Key.queue, taskId: Key.taskId, reason, attempts });
  }

  const partition = async (ports: Ports, queue: string, pendingOnly: boolean): Promise<TaskRecord[]> =>
    queryItems<TaskRecord>(ports.db, {
      TableName: table,
      KeyConditionExpression: '#queue = :queue',
      ExpressionAttributeNames: { '#queue': 'queue', ...(pendingOnly ? { '#state': 'state' } : {}) },
      ExpressionAttributeValues: { ':queue': queue, ...(pendingOnly ? { ':pending': 'pending' } : {}) },
      ...(pendingOnly ? { FilterExpression: '#state = :pending' } : {}),
    });

  return {
    async start({ queues, ports }) {
      table = `${ports.config.TABLE_PREFIX}${TASK_TABLE.name}`;
      for (const bound of queues) consumers.set(bound.spec.id, bound);
      // The queues' reads at once: they are on the platform's start.
      const pending = (await Promise.all(queues.map((bound) => partition(ports, bound.spec.id, true)))).flat();
      for (const task of pending) waiting.set(keyOf(task), { queue: task.queue, taskId: task.taskId, dueAt: task.dueAt });
      if (pending.length > 0) ports.log.info('local task queue resumed pending tasks', { tasks: pending.length });
      given = ports;
      pump();
    },

    async enqueue(queue, body, delaySec) {
      const ports = started();
      const now = ports.clock.now();
      const task: TaskRecord = {
        queue: queue.id,
        taskId: sortableId('task-', now),
        state: 'pending',
        body,
        attempt: 0,
        dueAt: now + delaySec * 1000,
        enqueuedAt: now,
      };
      try {
        await ports.db.doc.send(new PutCommand({ TableName: table, Item: task, ConditionExpression: 'attribute_not_exists(taskId)' }));
      } catch (error) {
        if (isConditionFailed(error)) throw new Error(`Task id ${task.taskId} collided; send again.`);
        throw error;
      }
      // A queue of an area this platform does not serve keeps the task for a start that does.
      if (consumers.has(queue.id)) {
        waiting.set(keyOf(task), { queue: task.queue, taskId: task.taskId, dueAt: task.dueAt });
        pump();
      }
      return { taskId: task.taskId };
    },

    async idle() {
      for (;;) {
        pump();
        const inFlight = [...running.values()];
        if (inFlight.length === 0) return;
        await Promise.allSettled(inFlight);
      }
    },

    async list(queue) {
      const ports = started();
      const queues = queue === undefined ? [...consumers.keys()] : [queue];
      return (await Promise.all(queues.map((q) => partition(ports, q, false)))).flat();
    },

    async close() {
      closed = true;
      clearTimeout(timer);
      await Promise.allSettled([...running.values()]);
    },
  };
}

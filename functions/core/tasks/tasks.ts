import type { EntryPointSpec, QueueSpec } from '../../../lib/manifest/specs.ts';

/** What `tasksForArea` reads of an area module: the kernel may not import `AreaModule`, which names its ports. */
type QueueOwner = { readonly name: string; readonly entryPoints: readonly EntryPointSpec[] };

/**
 * The largest task: SQS's classic message limit, 256 KiB of JSON (the queues are created with it,
 * lib/cloud/task-queues.ts, and the local queue enforces the same so nothing passes locally that
 * the cloud refuses). Large data goes to the blob store; the task carries its key.
 */
export const MAX_TASK_BYTES = 256 * 1024;

/** The longest delay SQS allows on one message (DelaySeconds), enforced locally too. */
export const MAX_TASK_DELAY_SEC = 900;

export interface SendOptions {
  /** Seconds before the task is first delivered, 0 to 900. @default 0 */
  readonly delaySec?: number;
}

/**
 * Hands work to one of the area's own `queue` entry points, to run after the current request or
 * event, with retries (the `tasks` port, as `ctx.ports.tasks` sees it). The payload must be JSON of
 * at most 256 KiB; the consumer's schema checks it on delivery.
 */
export interface Tasks {
  /** `queueHandler` is the handler name of one of the area's queue entry points (`file-note`). */
  send(queueHandler: string, payload: unknown, options?: SendOptions): Promise<{ readonly taskId: string }>;
}

/**
 * Where tasks are kept until delivered: SQS in the cloud (adapters/task-queue/aws.ts), the local platform's
 * persistent queue (functions/adapters/task-queue/local.ts). Handlers never see it; they get their area's `Tasks`.
 */
export interface TaskQueue {
  /** Stores one task for `queue`; `body` is the payload's JSON, already checked against the limits. */
  enqueue(queue: QueueSpec, body: string, delaySec: number): Promise<{ readonly taskId: string }>;
}

/** A send the platform refuses: another area's or an unknown queue, a payload that is not JSON or too large, a bad delay. */
export class TaskSendError extends Error {}

/** The queue behind each platform-level `tasks` member, which only an area's view may use. */
const queueOf = new WeakMap<Tasks, TaskQueue>();
const bound = new WeakMap<Tasks, WeakMap<QueueOwner, Tasks>>();

/**
 * The platform's `tasks` member (createPorts). It cannot send by itself: which queues are reachable
 * depends on the area, so handlers reach it through `portsForArea`, which binds it (`tasksForArea`).
 */
export function createPlatformTasks(queue: TaskQueue): Tasks {
  const tasks: Tasks = {
    send: () =>
      Promise.reject(
        new TaskSendError(
          `tasks.send must be called through an area's view of the platform (ctx.ports, portsForArea): tasks go to the sending area's own queues.`,
        ),
      ),
  };
  queueOf.set(tasks, queue);
  return tasks;
}

/** `area`'s `tasks`: sends to that area's own queue entry points and refuses every other name. */
export function tasksForArea(tasks: Tasks, area: QueueOwner): Tasks {
  const queue = queueOf.get(tasks);
  if (queue === undefined) return tasks;
  let byArea = bound.get(tasks);
  if (byArea === undefined) bound.set(tasks, (byArea = new WeakMap()));
  const existing = byArea.get(area);
  if (existing !== undefined) return existing;
  const own = new Map(area.entryPoints.filter((e): e is QueueSpec => e.kind === 'queue').map((spec) => [spec.handler, spec]));
  const view: Tasks = {
    async send(queueHandler, payload, options = {}) {
      const spec = own.get(queueHandler);
      if (spec === undefined)
        throw new TaskSendError(
          `The ${area.name} area has no queue entry point named "${queueHandler}"; an area sends tasks only to its own queues (${[...own.keys()].join(', ') || 'it declares none'}).`,
        );
      return queue.enqueue(spec, encodeTask(spec, payload), delayOf(spec, options.delaySec));
    },
  };
  byArea.set(area, view);
  return view;
}

/** The payload as the queue carries it: JSON within MAX_TASK_BYTES. */
function encodeTask(spec: QueueSpec, payload: unknown): string {
  let json: string | undefined;
  try {
    json = JSON.stringify(payload);
  } catch (error) {
    throw new TaskSendError(`The payload of a task for ${spec.id} cannot be written as JSON: ${(error as Error).message}`);
  }
  if (json === undefined) throw new TaskSendError(`The payload of a task for ${spec.id} must be a JSON value, not ${typeof payload}.`);
  // SQS refuses U+FFFE and U+FFFF in a message body, and JSON.stringify leaves them as they are.
  const body = json.replace(/[\uFFFE\uFFFF]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);
  const bytes = Buffer.byteLength(body, 'utf8');
  if (bytes > MAX_TASK_BYTES)
    throw new TaskSendError(
      `The payload of a task for ${spec.id} is ${bytes} bytes of JSON; the limit is ${MAX_TASK_BYTES} (SQS). Put large data in the blob store and send its key.`,
    );
  return body;
}

function delayOf(spec: QueueSpec, delaySec: number | undefined): number {
  const delay = delaySec ?? 0;
  if (!Number.isInteger(delay) || delay < 0 || delay > MAX_TASK_DELAY_SEC)
    throw new TaskSendError(`The delay of a task for ${spec.id} must be a whole number of seconds from 0 to ${MAX_TASK_DELAY_SEC}, not ${delaySec}.`);
  return delay;
}

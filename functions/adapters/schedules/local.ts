import { DeleteCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { BoundQueue } from '../../core/entry/queue.ts';
import { parseScheduleExpression, type Timetable } from '../../core/entry/schedule-expression.ts';
import { checkSchedule, type ScheduleDefinitionInput, type Schedules } from '../../core/tasks/schedules.ts';
import type { TaskQueue } from '../../core/tasks/tasks.ts';
import type { Ports } from '../../ports.ts';
import type { TableSpec } from '../../../lib/manifest/types.ts';

/**
 * Where the local scheduler keeps its schedules: a table of its own in dynalite, as EventBridge
 * Scheduler keeps them apart from the platform's tables in the cloud (so not in the manifest).
 */
export const SCHEDULE_TABLE: TableSpec = { name: 'local-schedules', partitionKey: 'id' };

/** The in-process stand-in for EventBridge Scheduler's run-time schedules behind `npm start`. */
export interface LocalSchedules extends Schedules {
  /** Loads every schedule and arms the enabled ones from now (SCHEDULE_TABLE must exist: the stores' layout has it). */
  start(options: { readonly queues: readonly BoundQueue[]; readonly taskQueue: TaskQueue; readonly ports: Ports }): Promise<void>;
  /** The next due time of schedule `id`, or null when it is disabled, has ended or is unknown (tests, bench). */
  nextDue(id: string): Date | null;
  /** Stops the timers; schedules stay in the table for the next start. */
  close(): Promise<void>;
}

interface Armed {
  readonly schedule: ScheduleDefinitionInput;
  readonly timetable: Timetable;
  due: Date;
  timer: NodeJS.Timeout;
}

/**
 * One timer per enabled schedule, set for its next due time, which sends `{...input,
 * scheduledTime}` to the schedule's queue entry point through the local task queue, as Scheduler
 * sends it to SQS: so the same queue handler runs, with the queue's delivery rules. Due times are
 * computed from now at start, so slots missed while the platform was stopped are not replayed
 * (Scheduler does not replay them either); a due time sent just before a stop is still in the
 * task queue and is delivered after the restart, and the handler's claim keeps it from running
 * twice. Timers do not keep the process alive.
 */
export function createLocalSchedules(): LocalSchedules {
  const armed = new Map<string, Armed>();
  let started: { queues: Map<string, BoundQueue>; taskQueue: TaskQueue; ports: Ports; table: string } | undefined;
  let closed = false;

  const running = () => {
    if (started === undefined) throw new Error('The local scheduler is not started yet.');
    return started;
  };

  const disarm = (id: string) => {
    const entry = armed.get(id);
    if (entry !== undefined) clearTimeout(entry.timer);
    armed.delete(id);
  };

  const arm = (schedule: ScheduleDefinitionInput, timetable: Timetable, after: Date) => {
    disarm(schedule.id);
    if (!schedule.enabled || closed) return;
    const { ports } = running();
    const due = timetable.next(after);
    if (due === null) {
      // A cron whose year range has passed: Scheduler keeps it with no next invocation; so does this.
      ports.log.info('local scheduler: schedule has no run after this; it has ended', { schedule: schedule.id, after: after.toISOString() });
      return;
    }
    // setTimeout holds at most about 24.8 days; a later due time is reached in steps.
    const delay = Math.min(Math.max(due.getTime() - ports.clock.now(), 0), 2 ** 31 - 1);
    const entry: Armed = { schedule, timetable, due, timer: setTimeout(() => fire(entry), delay) };
    entry.timer.unref();
    armed.set(schedule.id, entry);
  };

  /**
   * A timer's callback: what it throws would end the whole platform (no caller is there to catch
   * it), so a failure is logged and that schedule left disarmed, while every other one keeps firing.
   */
  function fire(entry: Armed): void {
    try {
      send(entry);
    } catch (error) {
      disarm(entry.schedule.id);
      started?.ports.log.error('local scheduler: a schedule failed to fire; it stays disarmed until it is put again or the platform restarts', {
        schedule: entry.schedule.id,
        error,
      });
    }
  }

  function send(entry: Armed): void {
    if (armed.get(entry.schedule.id) !== entry) return;
    const { ports, queues, taskQueue } = running();
    if (ports.clock.now() < entry.due.getTime()) {
      arm(entry.schedule, entry.timetable, new Date(entry.due.getTime() - 1));
      return;
    }
    const queue = queues.get(entry.schedule.queue);
    if (queue === undefined) ports.log.error('local scheduler: no such queue entry point', { schedule: entry.schedule.id, queue: entry.schedule.queue });
    else {
      const body = JSON.stringify({ ...entry.schedule.input, scheduledTime: entry.due.toISOString() });
      taskQueue
        .enqueue(queue.spec, body, 0)
        .catch((error: unknown) => ports.log.error('local scheduler: sending a due time failed', { schedule: entry.schedule.id, error }));
    }
    arm(entry.schedule, entry.timetable, entry.due);
  }

  return {
    async start({ queues, taskQueue, ports }) {
      const table = `${ports.config.TABLE_PREFIX}${SCHEDULE_TABLE.name}`;
      started = { queues: new Map(queues.map((q) => [q.spec.id, q])), taskQueue, ports, table };
      let start: Record<string, unknown> | undefined;
      const now = new Date(ports.clock.now());
      do {
        const page = await ports.db.doc.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start, ConsistentRead: true }));
        for (const item of (page.Items ?? []) as ScheduleDefinitionInput[]) {
          try {
            arm(item, parseScheduleExpression(item.expression, item.timezone), now);
          } catch (error) {
            ports.log.error('local scheduler: a stored schedule no longer parses; it stays disarmed', { schedule: item.id, error });
          }
        }
        start = page.LastEvaluatedKey;
      } while (start !== undefined);
    },
    async put(schedule) {
      const { ports, table, queues } = running();
      const timetable = checkSchedule(schedule);
      // Refused here, as Scheduler's adapter refuses a queue without a target, rather than kept and failing at each due time.
      if (!queues.has(schedule.queue)) throw new Error(`No queue entry point ${schedule.queue} for schedule ${schedule.id} to send to.`);
      await ports.db.doc.send(new PutCommand({ TableName: table, Item: schedule }));
      arm(schedule, timetable, new Date(ports.clock.now()));
    },
    async remove(id) {
      const { ports, table } = running();
      disarm(id);
      await ports.db.doc.send(new DeleteCommand({ TableName: table, Key: { id } }));
    },
    nextDue: (id) => armed.get(id)?.due ?? null,
    async close() {
      closed = true;
      for (const id of [...armed.keys()]) disarm(id);
    },
  };
}

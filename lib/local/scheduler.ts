import { runSchedule, type BoundSchedule } from '../../functions/core/entry/entry-point.ts';
import { parseScheduleExpression, type Timetable } from '../../functions/core/entry/schedule-expression.ts';
import type { Ports } from '../../functions/ports.ts';

/** The in-process stand-in for EventBridge Scheduler behind `npm start`. */
export interface LocalScheduler {
  /** Fires one schedule now, as its timetable would (operators' "run it now", and tests). */
  trigger(id: string): Promise<'succeeded' | 'failed' | 'timed-out'>;
  /** Stops the timers and waits for runs in progress. */
  close(): Promise<void>;
}

export interface LocalSchedulerOptions {
  readonly schedules: readonly BoundSchedule[];
  readonly ports: Ports;
  /** @default Date.now */
  readonly now?: () => number;
}

/**
 * One timer per schedule, set for its next fire time and reset after each firing. A firing due
 * while the previous run of the same schedule is still going is skipped and logged, as a missed
 * slot rather than two overlapping runs. Timers do not keep the process alive.
 */
export function startLocalScheduler(options: LocalSchedulerOptions): LocalScheduler {
  const now = options.now ?? Date.now;
  const running = new Map<string, Promise<'succeeded' | 'failed' | 'timed-out'>>();
  const timers = new Map<string, NodeJS.Timeout>();
  const byId = new Map(options.schedules.map((s) => [s.spec.id, { bound: s, timetable: parseScheduleExpression(s.spec.expression) }]));
  let closed = false;

  const fire = (bound: BoundSchedule, firedAt: Date) => {
    const current = running.get(bound.spec.id);
    if (current !== undefined) {
      options.ports.log.warn('scheduled run skipped: the previous one is still running', { entryPoint: bound.spec.id, firedAt: firedAt.toISOString() });
      return current;
    }
    const run = runSchedule(bound, options.ports, firedAt).finally(() => running.delete(bound.spec.id));
    running.set(bound.spec.id, run);
    return run;
  };

  const arm = (bound: BoundSchedule, timetable: Timetable) => {
    if (closed) return;
    const due = timetable.next(new Date(now()));
    if (due === null) {
      options.ports.log.warn('schedule has no run after now; it has ended', { entryPoint: bound.spec.id, expression: bound.spec.expression });
      return;
    }
    // setTimeout holds at most about 24.8 days; a later slot is reached in steps.
    const delay = Math.min(due.getTime() - now(), 2 ** 31 - 1);
    const timer = setTimeout(
      () => {
        // Nothing a timer's callback throws may reach the process: it would end the platform.
        try {
          if (now() >= due.getTime()) void fire(bound, due);
          arm(bound, timetable);
        } catch (error) {
          options.ports.log.error('schedule failed to fire; it stays disarmed until the platform restarts', { entryPoint: bound.spec.id, error });
        }
      },
      Math.max(delay, 0),
    );
    timer.unref();
    timers.set(bound.spec.id, timer);
  };

  for (const { bound, timetable } of byId.values()) arm(bound, timetable);

  return {
    trigger(id) {
      const entry = byId.get(id);
      if (entry === undefined) return Promise.reject(new Error(`No schedule ${id}; known: ${[...byId.keys()].join(', ') || 'none'}.`));
      return fire(entry.bound, new Date(now()));
    },
    async close() {
      closed = true;
      for (const timer of timers.values()) clearTimeout(timer);
      await Promise.allSettled([...running.values()]);
    },
  };
}

import { parseScheduleExpression, type Timetable } from '../entry/schedule-expression.ts';

/**
 * Timetables created at run time (users' cron jobs), as opposed to the manifest's static
 * `schedule` entry points: EventBridge Scheduler schedules in the cloud
 * (functions/adapters/schedules/aws.ts), the local platform's timers (functions/adapters/schedules/local.ts).
 * A schedule fires by sending `{...input, scheduledTime}` (ISO, the due time, not the delivery
 * time) to one queue entry point, so both wirings run the same queue handler, and a handler can
 * tell a second delivery of one due time from the next one.
 */
export interface Schedules {
  /** Creates or replaces schedule `id`; a disabled one keeps its definition and does not fire. */
  put(schedule: ScheduleDefinitionInput): Promise<void>;
  /** Deletes schedule `id`; one that does not exist is not an error. */
  remove(id: string): Promise<void>;
}

export interface ScheduleDefinitionInput {
  /** Unique over the platform; at most 64 characters of `[0-9A-Za-z_.-]` (Scheduler's schedule names). */
  readonly id: string;
  /** `rate(...)` or `cron(...)` in EventBridge Scheduler's syntax (checked by the caller, and by both adapters: checkSchedule). */
  readonly expression: string;
  /** IANA zone of cron fields. */
  readonly timezone: string;
  readonly enabled: boolean;
  /** The queue entry point it sends to (`cron.run-scheduled`). */
  readonly queue: string;
  /** JSON object sent with `scheduledTime` added. */
  readonly input: Readonly<Record<string, string>>;
}

/** Scheduler's schedule names. */
const SCHEDULE_ID = /^[0-9A-Za-z_.-]{1,64}$/;

/**
 * What both adapters check before keeping anything: what EventBridge Scheduler itself refuses (an
 * id it cannot name a schedule, an expression or time zone it does not take, as a
 * ScheduleExpressionError), so nothing works locally that the cloud refuses; and moto, the cloud's
 * stand-in in tests, checks none of it. Returns the timetable.
 */
export function checkSchedule(schedule: ScheduleDefinitionInput): Timetable {
  if (!SCHEDULE_ID.test(schedule.id))
    throw new Error(`Schedule id "${schedule.id}": at most 64 characters of 0-9, A-Z, a-z, _, . and - (EventBridge Scheduler's schedule names).`);
  return parseScheduleExpression(schedule.expression, schedule.timezone);
}

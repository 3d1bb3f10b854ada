/**
 * Timetables created at run time (users' cron jobs), as opposed to the manifest's static
 * `schedule` entry points: EventBridge Scheduler schedules in the cloud
 * (functions/cloud-adapters/scheduler.ts), the local platform's timers (lib/local/schedules.ts).
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
  /** `rate(...)` or `cron(...)` in EventBridge Scheduler's syntax (checked by the caller). */
  readonly expression: string;
  /** IANA zone of cron fields. */
  readonly timezone: string;
  readonly enabled: boolean;
  /** The queue entry point it sends to (`cron.run-scheduled`). */
  readonly queue: string;
  /** JSON object sent with `scheduledTime` added. */
  readonly input: Readonly<Record<string, string>>;
}

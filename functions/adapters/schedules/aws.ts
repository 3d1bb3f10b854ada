import {
  ConflictException,
  CreateScheduleCommand,
  DeleteScheduleCommand,
  ResourceNotFoundException,
  UpdateScheduleCommand,
  type CreateScheduleCommandInput,
  SchedulerClient,
} from '@aws-sdk/client-scheduler';
import * as z from 'zod';
import { systemClock, type Clock } from '../../core/clock.ts';
import { ConfigError, type Config } from '../../core/config.ts';
import { checkSchedule, type ScheduleDefinitionInput, type Schedules } from '../../core/tasks/schedules.ts';

export interface EventBridgeSchedulesOptions {
  readonly scheduler: SchedulerClient;
  /** The stack's schedule group: the cron function may manage schedules in it and nowhere else. */
  readonly group: string;
  /** The role Scheduler assumes to deliver; it may only send to the target queues. */
  readonly roleArn: string;
  /** Queue entry-point id -> queue ARN, for the queues schedules may send to. */
  readonly targets: Readonly<Record<string, string>>;
  readonly clock: Clock;
}

/**
 * Run-time schedules as EventBridge Scheduler schedules, one per id, in the stack's group. Each
 * sends `{...input, scheduledTime: <aws.scheduler.scheduled-time>}` (Scheduler's context attribute,
 * the due time) to its queue entry point's SQS queue, whose consumer runs the same handler as the
 * local scheduler's deliveries. No flexible window (a job runs at its minute, as locally) and no
 * retries (the next due time is the retry, and a late second delivery of a due time runs nothing).
 * A rate starts at the next multiple of its period since the epoch, where the local timetable
 * fires, so both wirings fire at the same times.
 */
export function createEventBridgeSchedules(options: EventBridgeSchedulesOptions): Schedules {
  const request = (schedule: ScheduleDefinitionInput): CreateScheduleCommandInput => {
    const timetable = checkSchedule(schedule);
    const target = options.targets[schedule.queue];
    if (target === undefined) throw new Error(`No schedule target queue for ${schedule.queue} (SCHEDULE_TARGETS).`);
    // A rate always has a next run; a cron's start is the expression's own.
    const rateStart = schedule.expression.trim().startsWith('rate(') ? timetable.next(new Date(options.clock.now())) : null;
    return {
      Name: schedule.id,
      GroupName: options.group,
      ScheduleExpression: schedule.expression,
      ScheduleExpressionTimezone: schedule.timezone,
      ...(rateStart !== null ? { StartDate: rateStart } : {}),
      State: schedule.enabled ? 'ENABLED' : 'DISABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: {
        Arn: target,
        RoleArn: options.roleArn,
        Input: JSON.stringify({ ...schedule.input, scheduledTime: '<aws.scheduler.scheduled-time>' }),
        RetryPolicy: { MaximumRetryAttempts: 0 },
      },
    };
  };
  return {
    async put(schedule) {
      const input = request(schedule);
      try {
        await options.scheduler.send(new CreateScheduleCommand(input));
      } catch (error) {
        if (!(error instanceof ConflictException)) throw error;
        // UpdateSchedule replaces every field, so an existing schedule ends up exactly as asked.
        await options.scheduler.send(new UpdateScheduleCommand(input));
      }
    },
    async remove(id) {
      try {
        await options.scheduler.send(new DeleteScheduleCommand({ Name: id, GroupName: options.group }));
      } catch (error) {
        if (!(error instanceof ResourceNotFoundException)) throw error;
      }
    },
  };
}

const targets = z.record(z.string(), z.string().startsWith('arn:'));

/** The `schedules` port in the cloud: EventBridge Scheduler, in SCHEDULE_GROUP, delivering through SCHEDULER_ROLE_ARN. */
export function eventBridgeSchedules(config: Config): Schedules {
  const missing = (['SCHEDULE_GROUP', 'SCHEDULER_ROLE_ARN', 'SCHEDULE_TARGETS'] as const).filter((name) => !config[name]);
  if (missing.length > 0) throw new ConfigError(`Invalid platform configuration: ${missing.join(', ')}: required in the cloud to manage schedules`);
  let parsed: z.infer<typeof targets>;
  try {
    parsed = targets.parse(JSON.parse(config.SCHEDULE_TARGETS!));
  } catch {
    throw new ConfigError('Invalid platform configuration: SCHEDULE_TARGETS: must be a JSON object of queue entry-point ids to queue ARNs');
  }
  return createEventBridgeSchedules({
    scheduler: new SchedulerClient({ region: config.AWS_REGION }),
    group: config.SCHEDULE_GROUP!,
    roleArn: config.SCHEDULER_ROLE_ARN!,
    targets: parsed,
    clock: systemClock,
  });
}

import { SchedulerClient } from '@aws-sdk/client-scheduler';
import * as z from 'zod';
import { systemClock } from '../core/clock.ts';
import { ConfigError, type Config } from '../core/config.ts';
import { createEventBridgeSchedules } from '../core/tasks/eventbridge-schedules.ts';
import type { Schedules } from '../core/tasks/schedules.ts';

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

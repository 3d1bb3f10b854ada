/**
 * The cloud's run-time schedules against moto's EventBridge Scheduler with the real AWS SDK: one
 * schedule per job in the stack's group, targeting the run queue through the delivery role with the
 * due time as Scheduler's context attribute, no flexible window, no retries; enabled and disabled
 * with the job's state; rewritten in place; deleted (twice without error).
 */
import { CreateScheduleGroupCommand, GetScheduleCommand, ListSchedulesCommand, SchedulerClient } from '@aws-sdk/client-scheduler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEventBridgeSchedules } from '../../functions/adapters/schedules/aws.ts';
import type { Schedules } from '../../functions/core/tasks/schedules.ts';
import { motoAvailable, motoClientConfig, startMoto, type MotoServer } from '../support/moto.ts';

const hasMoto = motoAvailable();
if (!hasMoto) console.warn('moto is not installed: the EventBridge Scheduler adapter test is skipped (python3 -m pip install "moto[server]")');

const GROUP = 'platform-cron';
const ROLE = 'arn:aws:iam::123456789012:role/platform-scheduler';
const QUEUE = 'arn:aws:sqs:us-east-1:123456789012:platform-cron-run-scheduled';

describe.skipIf(!hasMoto)('EventBridge Scheduler schedules against moto with the real AWS SDK', () => {
  let moto: MotoServer;
  let client: SchedulerClient;
  let schedules: Schedules;
  const now = Date.parse('2026-11-24T10:02:30Z');

  beforeAll(async () => {
    moto = await startMoto();
    client = new SchedulerClient(motoClientConfig(moto.endpoint));
    await client.send(new CreateScheduleGroupCommand({ Name: GROUP }));
    schedules = createEventBridgeSchedules({
      scheduler: client,
      group: GROUP,
      roleArn: ROLE,
      targets: { 'cron.run-scheduled': QUEUE },
      clock: { now: () => now },
    });
  });
  afterAll(async () => {
    await moto?.stop();
  });

  const job = (over: Partial<Parameters<Schedules['put']>[0]> = {}) => ({
    id: 'cron_0000000000000000000a1',
    expression: 'cron(0 8 * * ? *)',
    timezone: 'Europe/Paris',
    enabled: true,
    queue: 'cron.run-scheduled',
    input: { cronId: 'cron_0000000000000000000a1' },
    ...over,
  });
  const read = (name: string) => client.send(new GetScheduleCommand({ Name: name, GroupName: GROUP }));

  it('creates one schedule per job that sends the due time to the run queue through the role', async () => {
    // Act
    await schedules.put(job());
    const got = await read('cron_0000000000000000000a1');

    // Assess
    expect(got).toMatchObject({
      Name: 'cron_0000000000000000000a1',
      GroupName: GROUP,
      ScheduleExpression: 'cron(0 8 * * ? *)',
      ScheduleExpressionTimezone: 'Europe/Paris',
      State: 'ENABLED',
      FlexibleTimeWindow: { Mode: 'OFF' },
      Target: { Arn: QUEUE, RoleArn: ROLE, RetryPolicy: { MaximumRetryAttempts: 0 } },
    });
    expect(JSON.parse(got.Target!.Input!)).toEqual({ cronId: 'cron_0000000000000000000a1', scheduledTime: '<aws.scheduler.scheduled-time>' });
  });

  it('disables, re-enables and rewrites the schedule in place, starting a rate where the local timetable fires', async () => {
    // Act
    await schedules.put(job({ enabled: false }));
    const disabled = await read('cron_0000000000000000000a1');
    await schedules.put(job({ expression: 'rate(5 minutes)', timezone: 'UTC' }));
    const rewritten = await read('cron_0000000000000000000a1');
    const listed = await client.send(new ListSchedulesCommand({ GroupName: GROUP }));

    // Assess
    expect(disabled.State).toBe('DISABLED');
    expect(rewritten).toMatchObject({ State: 'ENABLED', ScheduleExpression: 'rate(5 minutes)', ScheduleExpressionTimezone: 'UTC' });
    expect(rewritten.StartDate?.toISOString()).toBe('2026-11-24T10:05:00.000Z');
    expect(listed.Schedules).toHaveLength(1);
  });

  it('deletes the schedule, and a second delete is not an error', async () => {
    // Act
    await schedules.remove('cron_0000000000000000000a1');
    await schedules.remove('cron_0000000000000000000a1');
    const listed = await client.send(new ListSchedulesCommand({ GroupName: GROUP }));

    // Assess
    expect(listed.Schedules ?? []).toHaveLength(0);
  });
});

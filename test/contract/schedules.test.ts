/**
 * The Schedules contract (schedules.contract.ts) against both adapters:
 * - local: `createLocalSchedules` with its table on dynalite, sending to a task queue that records
 *   what it is given; its timers run on real time against the platform clock, which the suite moves;
 * - EventBridge Scheduler: `createEventBridgeSchedules` against moto with the real AWS SDK, in a
 *   schedule group of its own. moto keeps schedules but never fires them, so a delivery is what
 *   Scheduler sends by its documentation: the target's Input with `<aws.scheduler.scheduled-time>`
 *   replaced by the due time (a rate's first is its StartDate), in Scheduler's format.
 */
import { CreateScheduleGroupCommand, GetScheduleCommand, ListSchedulesCommand, ResourceNotFoundException, SchedulerClient } from '@aws-sdk/client-scheduler';
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { describe } from 'vitest';
import * as z from 'zod';
import { defineQueue, type BoundQueue } from '../../functions/core/entry/queue.ts';
import { createLogger } from '../../functions/core/logger.ts';
import { createEventBridgeSchedules } from '../../functions/adapters/schedules/aws.ts';
import type { ScheduleDefinitionInput } from '../../functions/core/tasks/schedules.ts';
import type { TaskQueue } from '../../functions/core/tasks/tasks.ts';
import type { Ports } from '../../functions/ports.ts';
import { createLocalSchedules, SCHEDULE_TABLE } from '../../functions/adapters/schedules/local.ts';
import { defineArea, entryPointsOf } from '../../lib/manifest/define.ts';
import { startLocalDb } from '../support/local-db.ts';
import { motoAvailable, motoClientConfig, startMoto } from '../support/moto.ts';
import { describeSchedulesContract } from './schedules.contract.ts';

const hasMoto = motoAvailable();
if (!hasMoto) console.warn('moto is not installed: the EventBridge Scheduler schedules contract is skipped (python3 -m pip install "moto[server]")');

const PLACEHOLDER = '<aws.scheduler.scheduled-time>';

describeSchedulesContract('local (timers, table on dynalite)', {
  async start({ queue, clock }) {
    const [area, handler] = queue.split('.') as [string, string];
    const module = defineArea({ name: area, entryPoints: [{ kind: 'queue', handler, maxAttempts: 1, timeoutSec: 60 }] });
    const bound: BoundQueue = {
      spec: entryPointsOf(module, 'queue')[0]!,
      definition: defineQueue({ payload: z.unknown(), run: async () => {} }),
      area: module,
    };
    const { db, stop } = await startLocalDb();
    const table = `test-${SCHEDULE_TABLE.name}`;
    // The next send waits here: the schedule's timer fires it once the clock has reached the due time.
    let nextSend: ((sent: { queue: string; body: string }) => void) | undefined;
    const taskQueue: TaskQueue = {
      enqueue: async (spec, body) => {
        nextSend?.({ queue: spec.id, body });
        nextSend = undefined;
        return { taskId: 'task' };
      },
    };
    const schedules = createLocalSchedules();
    const platform = { config: { TABLE_PREFIX: 'test-' }, db, clock, log: createLogger('debug', {}, () => undefined) } as unknown as Ports;
    await schedules.start({ queues: [bound], taskQueue, ports: platform });
    return {
      schedules,
      read: async (id) =>
        ((await db.doc.send(new GetCommand({ TableName: table, Key: { id }, ConsistentRead: true }))).Item as ScheduleDefinitionInput | undefined) ?? null,
      async ids() {
        const ids: string[] = [];
        let start: Record<string, unknown> | undefined;
        do {
          const page = await db.doc.send(new ScanCommand({ TableName: table, ExclusiveStartKey: start, ConsistentRead: true }));
          ids.push(...(page.Items ?? []).map((item) => String(item['id'])));
          start = page.LastEvaluatedKey;
        } while (start !== undefined);
        return ids;
      },
      async delivery(id) {
        if (schedules.nextDue(id) === null) return null;
        const sent = await new Promise<{ queue: string; body: string }>((resolve) => (nextSend = resolve));
        return { queue: sent.queue, body: JSON.parse(sent.body) as Record<string, unknown> };
      },
      async close() {
        await schedules.close();
        await stop();
      },
    };
  },
});

describe.skipIf(!hasMoto)('with moto', () => {
  describeSchedulesContract('EventBridge Scheduler (moto, real AWS SDK)', {
    async start({ queue, clock }) {
      const moto = await startMoto();
      const client = new SchedulerClient(motoClientConfig(moto.endpoint));
      const group = 'platform-cron';
      const queueArn = `arn:aws:sqs:us-east-1:123456789012:${queue.replace('.', '-')}`;
      await client.send(new CreateScheduleGroupCommand({ Name: group }));
      const schedules = createEventBridgeSchedules({
        scheduler: client,
        group,
        roleArn: 'arn:aws:iam::123456789012:role/platform-scheduler',
        targets: { [queue]: queueArn },
        clock,
      });
      const get = async (id: string) => {
        try {
          return await client.send(new GetScheduleCommand({ Name: id, GroupName: group }));
        } catch (error) {
          if (error instanceof ResourceNotFoundException) return null;
          throw error;
        }
      };
      const queueOf = (arn: string | undefined) => (arn === queueArn ? queue : `unknown target ${arn}`);
      return {
        schedules,
        async read(id) {
          const got = await get(id);
          if (got === null) return null;
          const { scheduledTime, ...input } = JSON.parse(got.Target!.Input!) as Record<string, string>;
          return {
            id: got.Name!,
            expression: got.ScheduleExpression!,
            timezone: got.ScheduleExpressionTimezone!,
            enabled: got.State === 'ENABLED',
            queue: queueOf(got.Target!.Arn),
            // A due time other than Scheduler's own shows as input the schedule was not given.
            input: scheduledTime === PLACEHOLDER ? input : { ...input, scheduledTime: scheduledTime! },
          };
        },
        async ids() {
          const ids: string[] = [];
          let token: string | undefined;
          do {
            const page = await client.send(new ListSchedulesCommand({ GroupName: group, NextToken: token }));
            ids.push(...(page.Schedules ?? []).map((s) => s.Name!));
            token = page.NextToken;
          } while (token !== undefined);
          return ids;
        },
        async delivery(id) {
          const got = await get(id);
          if (got === null || got.State !== 'ENABLED') return null;
          if (got.StartDate === undefined)
            throw new Error(`Schedule ${id} has no StartDate: moto does not fire schedules, so only a rate's first due time is known.`);
          const due = got.StartDate.toISOString().replace(/\.\d{3}Z$/, 'Z');
          return { queue: queueOf(got.Target!.Arn), body: JSON.parse(got.Target!.Input!.replaceAll(PLACEHOLDER, due)) as Record<string, unknown> };
        },
        async close() {
          client.destroy();
          await moto.stop();
        },
      };
    },
  });
});

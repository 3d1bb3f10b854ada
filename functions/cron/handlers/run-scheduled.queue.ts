import * as z from 'zod';
import { defineQueue } from '../../core/entry/queue.ts';
import { cronIdSchema } from '../cron.schema.ts';
import { runScheduled } from '../cron-run.service.ts';

/**
 * A job's due time, as its schedule sends it: EventBridge Scheduler (through this entry point's
 * SQS queue) in the cloud, the local scheduler's timers locally.
 */
export default defineQueue({
  payload: z.object({ cronId: cronIdSchema, scheduledTime: z.iso.datetime({ offset: true }) }),
  async run({ ports, log, payload, signal }) {
    await runScheduled(payload.cronId, new Date(payload.scheduledTime), { ...ports, log }, signal);
  },
});

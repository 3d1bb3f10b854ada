import { requireAlias, type UserActor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import { ScheduleExpressionError } from '../core/entry/schedule-expression.ts';
import { ConflictError, NotFoundError, ValidationError } from '../core/errors.ts';
import { sortableId } from '../core/ids.ts';
import type { Schedules } from '../core/tasks/schedules.ts';
import type { AgentStore } from '../agents/agent.store.ts';
import { chattableAgent } from '../agents/chattable-agent.ts';
import { MAX_CRON_JOBS_PER_OWNER, nextFireTime, nextRunOf, presentCron, type CronRecord } from './cron.schema.ts';
import type { CronChanges, CronStore } from './cron.store.ts';

export interface CronPorts {
  readonly cronJobs: CronStore;
  readonly agents: Pick<AgentStore, 'get'>;
  readonly schedules: Schedules;
  readonly clock: Clock;
}

/** The queue entry point every job's schedule sends to (functions/cron/handlers/run-scheduled.queue.ts). */
export const RUN_QUEUE = 'cron.run-scheduled';

/**
 * The job's schedule as the scheduler keeps it: enabled while the job is `active` and its
 * expression still has a run after `now`, so neither wiring is ever asked to enable a schedule
 * that cannot fire (an `ended` job that is resumed).
 */
export function scheduleOf(job: CronRecord, now: Date) {
  return {
    id: job.cronId,
    expression: job.schedule,
    timezone: job.scheduleTimezone,
    enabled: job.status === 'active' && nextRunOf(job, now) !== null,
    queue: RUN_QUEUE,
    input: { cronId: job.cronId },
  };
}

/**
 * A 400 naming the expression (and the zone) when EventBridge Scheduler would refuse them, or when
 * the expression has no run after now (a year range that has passed): a job made or changed to
 * never run is a mistake best told at once, as the platform already tells one that never fires at
 * all. A job whose last run passes later is kept and shows as `ended` (presentCron).
 */
function checkSchedule(schedule: string, timezone: string, now: Date): void {
  let next: Date | null;
  try {
    next = nextFireTime(schedule, timezone, now);
  } catch (error) {
    if (!(error instanceof ScheduleExpressionError)) throw error;
    throw new ValidationError(`Invalid schedule: ${error.message}`, [`schedule: ${error.message}`]);
  }
  if (next === null) {
    const message = `Schedule "${schedule}" has no run after ${now.toISOString()} in ${timezone}: its year range has ended.`;
    throw new ValidationError(`Invalid schedule: ${message}`, [`schedule: ${message}`]);
  }
}

/** The caller's job; someone else's is a 404 like a missing one, so ids reveal nothing. */
export async function ownedCron(actor: UserActor, cronId: string, ports: Pick<CronPorts, 'cronJobs'>): Promise<CronRecord> {
  const job = await ports.cronJobs.get(cronId);
  if (job === null || job.ownerId !== actor.userId) throw new NotFoundError(`Cron job ${cronId} not found.`);
  return job;
}

export async function createCron(
  actor: UserActor,
  input: { name: string; agentId: string; schedule: string; scheduleTimezone: string; inputMessage?: string | undefined; agentName?: string | undefined },
  ports: CronPorts,
) {
  const owner = requireAlias(actor);
  const now = ports.clock.now();
  checkSchedule(input.schedule, input.scheduleTimezone, new Date(now));
  const agent = await chattableAgent(owner.userId, input.agentId, ports);
  const job: CronRecord = {
    cronId: sortableId('cron_', now),
    ownerId: owner.userId,
    name: input.name,
    agentId: input.agentId,
    agentName: input.agentName ?? agent.agentName,
    schedule: input.schedule,
    scheduleTimezone: input.scheduleTimezone,
    inputMessage: input.inputMessage ?? input.name,
    status: 'active',
    consecutiveFailures: 0,
    lastRunAt: null,
    lastRunStatus: null,
    lastRunError: null,
    lastError: null,
    lastScheduledTime: null,
    createdAt: now,
    updatedAt: now,
  };
  const created = await ports.cronJobs.create(job);
  if (created === 'limit') throw new ValidationError(`Limit reached: a user may have at most ${MAX_CRON_JOBS_PER_OWNER} cron jobs; delete one first.`);
  if (created === 'taken') throw new ConflictError('A cron job with this id is being created; try again.');
  try {
    await ports.schedules.put(scheduleOf(job, new Date(now)));
  } catch (error) {
    // No job without its schedule: a job that never runs would look healthy.
    await ports.cronJobs.delete(job.cronId, job.ownerId);
    throw error;
  }
  return presentCron(job, new Date(now));
}

export async function listCrons(actor: UserActor, query: { limit: number; cursor?: string | undefined }, ports: CronPorts) {
  const page = await ports.cronJobs.listByOwner(actor.userId, query.limit, query.cursor);
  const now = new Date(ports.clock.now());
  return { crons: page.items.map((job) => presentCron(job, now)), count: page.items.length, nextCursor: page.nextCursor };
}

export async function getCron(actor: UserActor, cronId: string, ports: CronPorts) {
  return presentCron(await ownedCron(actor, cronId, ports), new Date(ports.clock.now()));
}

/**
 * SPEC part 3: `paused` disables the schedule; `active` (from paused or error) resets the counter
 * and re-enables it; a new schedule or zone rewrites it; a new agent is checked as on create.
 */
export async function updateCron(
  actor: UserActor,
  cronId: string,
  input: Omit<CronChanges, 'agentName' | 'status'> & { status?: 'active' | 'paused' | undefined },
  ports: CronPorts,
) {
  const job = await ownedCron(actor, cronId, ports);
  const now = ports.clock.now();
  const schedule = input.schedule ?? job.schedule;
  const timezone = input.scheduleTimezone ?? job.scheduleTimezone;
  if (input.schedule !== undefined || input.scheduleTimezone !== undefined) checkSchedule(schedule, timezone, new Date(now));
  const changes: { -readonly [K in keyof CronChanges]: CronChanges[K] } & { consecutiveFailures?: 0 } = { ...input };
  if (input.agentId !== undefined && input.agentId !== job.agentId) changes.agentName = (await chattableAgent(job.ownerId, input.agentId, ports)).agentName;
  if (input.status === 'active' && job.status !== 'active') changes.consecutiveFailures = 0;
  const updated = await ports.cronJobs.update(cronId, changes, job.updatedAt, now);
  if (updated === null) throw new ConflictError(`Cron job ${cronId} was changed by another request; read it and try again.`);
  const rewrite = updated.status !== job.status || updated.schedule !== job.schedule || updated.scheduleTimezone !== job.scheduleTimezone;
  if (rewrite) await ports.schedules.put(scheduleOf(updated, new Date(now)));
  return presentCron(updated, new Date(now));
}

/** The schedule first, then the job: a crash in between leaves a job the owner still sees and can delete again. */
export async function deleteCron(actor: UserActor, cronId: string, ports: CronPorts) {
  const job = await ownedCron(actor, cronId, ports);
  await ports.schedules.remove(job.cronId);
  const deleted = await ports.cronJobs.delete(job.cronId, job.ownerId);
  if (deleted === 'busy') throw new ConflictError(`Cron job ${cronId} is being changed; try again.`);
  return { cronId, deleted: true };
}

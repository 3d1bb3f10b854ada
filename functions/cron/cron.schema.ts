import * as z from 'zod';
import { isTimeZone, parseScheduleExpression, ScheduleExpressionError } from '../core/entry/schedule-expression.ts';

/** SPEC part 8. */
export const MAX_CRON_JOBS_PER_OWNER = 20;
/** SPEC part 8: the third consecutive failure moves a job to `error` and disables its schedule. */
export const MAX_CONSECUTIVE_FAILURES = 3;

export type CronStatus = 'active' | 'paused' | 'error';
/** What an owner sees: the stored status, or `ended` for an `active` job that fires no more (presentCron). */
export type PresentedCronStatus = CronStatus | 'ended';

/** Why the latest failed run failed: the code and message its caller would have got, secrets scrubbed. */
export interface CronRunError {
  readonly at: number;
  readonly code: string;
  readonly message: string;
}

/** A cron job as stored (SPEC part 2, "Cron job"); times are epoch ms, shown as ISO. */
export interface CronRecord {
  readonly cronId: string;
  readonly ownerId: string;
  readonly name: string;
  readonly agentId: string;
  readonly agentName: string | null;
  readonly schedule: string;
  readonly scheduleTimezone: string;
  readonly inputMessage: string;
  readonly status: CronStatus;
  readonly consecutiveFailures: number;
  readonly lastRunAt: number | null;
  readonly lastRunStatus: 'success' | 'error' | null;
  /** SPEC part 2's field: the message of the last run when it failed (null after a success). */
  readonly lastRunError: string | null;
  /** The latest failure, kept after later successes (its `at` tells): absent on jobs stored before it existed. */
  readonly lastError?: CronRunError | null;
  /**
   * The latest due time a scheduled run claimed (epoch ms): a delivery of a due time at or before
   * it is a repeat (Scheduler and SQS deliver at least once; a local restart resumes a pending one).
   */
  readonly lastScheduledTime: number | null;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export const cronIdSchema = z.string().regex(/^cron_[0-9A-Za-z]{21}$/, 'is not a cron job id');
export const cronIdParams = z.object({ cronId: cronIdSchema });

const name = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const inputMessage = z.string().min(1, 'must not be empty').max(100_000, 'must be at most 100000 characters');
const agentId = z.uuid({ error: 'must be an agent id (UUID)' });
const scheduleTimezone = z
  .string()
  .max(64, 'must be at most 64 characters')
  .refine(isTimeZone, { error: (issue) => `"${String(issue.input)}" is not an IANA time zone` });
const schedule = z.string().max(256, 'must be at most 256 characters');

export const createCronBody = z.object({
  name,
  agentId,
  schedule,
  scheduleTimezone: scheduleTimezone.default('UTC'),
  // Optional in SPEC 4.8; a job without one sends its name, so a run always has a prompt.
  inputMessage: inputMessage.optional(),
  agentName: z.string().max(200, 'must be at most 200 characters').optional(),
});

export const updateCronBody = z
  .object({
    name: name.optional(),
    agentId: agentId.optional(),
    schedule: schedule.optional(),
    scheduleTimezone: scheduleTimezone.optional(),
    inputMessage: inputMessage.optional(),
    status: z.enum(['active', 'paused'], { error: 'must be active or paused' }).optional(),
  })
  .refine((body) => Object.values(body).some((value) => value !== undefined), {
    error: 'give at least one of name, agentId, schedule, scheduleTimezone, inputMessage, status',
  });

export const listCronsQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(50),
  cursor: z.string().max(2048).optional(),
});

/**
 * The expression's next fire time after `after`, or null when it fires no more (a cron whose year
 * range has ended); a ScheduleExpressionError for an expression EventBridge Scheduler would refuse.
 */
export function nextFireTime(expression: string, timezone: string, after: Date): Date | null {
  try {
    return parseScheduleExpression(expression, timezone).next(after);
  } catch (error) {
    if (error instanceof ScheduleExpressionError) throw error;
    throw new ScheduleExpressionError(`Schedule "${expression}" is not a valid expression.`);
  }
}

/**
 * A stored job's next run by its expression (whatever its status), null when it has none. Never
 * throws: a stored expression the parser now refuses (a parser stricter than the one that accepted
 * it) must not make the owner's list answer 500; the local scheduler leaves it disarmed, so it
 * reads as no next run.
 */
export function nextRunOf(job: CronRecord, now: Date): Date | null {
  try {
    return nextFireTime(job.schedule, job.scheduleTimezone, now);
  } catch {
    return null;
  }
}

/**
 * How a job appears to its owner: every field of SPEC part 2 plus `nextRunAt` (null when it does
 * not run). An `active` job whose schedule fires no more (its year range has passed) shows as
 * `ended`, as EventBridge Scheduler keeps such a schedule with no next invocation: derived at each
 * read rather than stored, so both wirings show it the moment it is true without anything watching
 * for it, and a new schedule makes the job `active` again.
 */
export function presentCron(job: CronRecord, now: Date) {
  const nextRun = job.status === 'active' ? nextRunOf(job, now) : null;
  const status: PresentedCronStatus = job.status === 'active' && nextRun === null ? 'ended' : job.status;
  return {
    cronId: job.cronId,
    name: job.name,
    agentId: job.agentId,
    agentName: job.agentName,
    schedule: job.schedule,
    scheduleTimezone: job.scheduleTimezone,
    inputMessage: job.inputMessage,
    status,
    consecutiveFailures: job.consecutiveFailures,
    lastRunAt: iso(job.lastRunAt),
    lastRunStatus: job.lastRunStatus,
    lastRunError: job.lastRunError,
    lastError: job.lastError ? { at: new Date(job.lastError.at).toISOString(), code: job.lastError.code, message: job.lastError.message } : null,
    nextRunAt: nextRun?.toISOString() ?? null,
    createdAt: new Date(job.createdAt).toISOString(),
    updatedAt: new Date(job.updatedAt).toISOString(),
  };
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

/** SPEC part 2, "Cron job", as `presentCron` shows it: times as ISO strings. */
export const cronResponse = z.object({
  cronId: z.string(),
  name: z.string(),
  agentId: z.string(),
  agentName: z.string().nullable(),
  schedule: z.string().describe('`rate(N unit)` or the 6-field `cron(...)`'),
  scheduleTimezone: z.string().describe('IANA timezone (cron expressions only)'),
  inputMessage: z.string().describe('The prompt sent on each run'),
  status: z.enum(['active', 'paused', 'error', 'ended']).describe('`ended`: an active job whose schedule fires no more'),
  consecutiveFailures: z.number().int().describe('Failed runs since the last success'),
  lastRunAt: z.string().nullable().describe('ISO timestamp'),
  lastRunStatus: z.enum(['success', 'error']).nullable(),
  lastRunError: z.string().nullable().describe('Message of the last run when it failed (null after a success)'),
  lastError: z
    .object({ at: z.string().describe('ISO timestamp'), code: z.string(), message: z.string() })
    .nullable()
    .describe('The latest failure, kept after later successes'),
  nextRunAt: z.string().nullable().describe('ISO timestamp; null when the job will not fire'),
  createdAt: z.string().describe('ISO timestamp'),
  updatedAt: z.string().describe('ISO timestamp'),
});

export const cronListResponse = z.object({
  crons: z.array(cronResponse),
  count: z.number().int(),
  nextCursor: z.string().nullable().describe('Pass as `cursor` for the next page; null on the last'),
});

export const cronDeletedResponse = z.object({ cronId: z.string(), deleted: z.boolean().describe('Always true') });

/** A run started by `POST /cron/{cronId}/run`, as a scheduled run does it. */
export const cronRunResponse = z.object({
  status: z.enum(['success', 'error']),
  response: z.string().optional().describe("The agent's reply, on success"),
  error: z.string().optional().describe('Why the run failed'),
  requestId: z.string().describe("The run's request id (its usage records carry it)"),
});

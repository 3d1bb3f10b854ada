import type { AgentRuns } from '../agents/agent-runs.ts';
import type { Clock } from '../core/clock.ts';
import { childLineageHeader, lineageOf, type Lineage } from '../core/http/lineage.ts';
import { uuid } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import { scrubSecrets } from '../core/secret-scope.ts';
import type { UsageLogWriter } from '../core/usage-log.ts';
import type { TokenStore } from '../tokens/token.store.ts';
import { MAX_CONSECUTIVE_FAILURES, type CronRecord } from './cron.schema.ts';
import { scheduleOf, type CronPorts } from './cron.service.ts';

export interface CronRunPorts extends Pick<CronPorts, 'cronJobs' | 'schedules'> {
  readonly tokens: Pick<TokenStore, 'hasUsable'>;
  readonly agentRuns: AgentRuns;
  readonly usageLogs: UsageLogWriter;
  readonly clock: Clock;
  readonly log: Logger;
}

/** Where a run comes from: "run now" knows the request's base URL and deadline; a scheduled run neither. */
export interface CronRunContext {
  readonly trigger: 'schedule' | 'now';
  readonly scheduledTime?: string;
  readonly baseUrl?: string;
  readonly signal?: AbortSignal;
}

/** What a run answers (POST /cron/{cronId}/run) and records. */
export interface CronRunResult {
  readonly status: 'success' | 'error';
  readonly response?: string;
  readonly error?: string;
  readonly requestId: string;
}

/** A run's outcome before it is recorded: the reply, or the code and message of why there is none. */
type RunOutcome = { readonly ok: true; readonly response: string } | { readonly ok: false; readonly code: string; readonly message: string };

/**
 * One scheduled run: claims the due time first, so a second delivery of it (at-least-once queues,
 * a local restart) runs nothing, and a job that is not `active` (paused, error, or deleted since the
 * schedule fired) does not run. Returns null when nothing ran.
 */
export async function runScheduled(cronId: string, scheduledTime: Date, ports: CronRunPorts, signal?: AbortSignal): Promise<CronRunResult | null> {
  const claimed = await ports.cronJobs.claimScheduled(cronId, scheduledTime.getTime());
  if (!claimed) {
    ports.log.info('cron run skipped: a repeat delivery, or the job is not active', { cronId, scheduledTime: scheduledTime.toISOString() });
    return null;
  }
  const job = await ports.cronJobs.get(cronId);
  if (job === null) return null;
  return runJob(
    job,
    lineageOf(uuid(), undefined),
    { trigger: 'schedule', scheduledTime: scheduledTime.toISOString(), ...(signal === undefined ? {} : { signal }) },
    ports,
  );
}

/**
 * Runs `job` once, as its owner: checks at this moment that the owner holds a usable user token
 * (SPEC 5.8), then runs the agent through the `agentRuns` port, so the chat service bills and logs
 * it like any chat, its usage record a child of this run's, without a credential or a request to
 * the chat endpoint, and outside the owner's interactive chat limit. The outcome is recorded with
 * atomic updates (a failure as `lastError`, code and message), and the third consecutive failure
 * moves an active job to `error` and disables its schedule.
 */
export async function runJob(job: CronRecord, lineage: Lineage, context: CronRunContext, ports: CronRunPorts): Promise<CronRunResult> {
  const started = ports.clock.now();
  const outcome = await callAgent(job, lineage, context, ports);
  const at = ports.clock.now();
  const updated = await ports.cronJobs.recordOutcome(
    job.cronId,
    outcome.ok ? { ok: true } : { ok: false, error: { code: outcome.code, message: outcome.message } },
    at,
  );
  if (updated !== null && !outcome.ok && updated.consecutiveFailures >= MAX_CONSECUTIVE_FAILURES && (await ports.cronJobs.markError(job.cronId))) {
    await ports.schedules.put(scheduleOf({ ...updated, status: 'error' }, new Date(at)));
    ports.log.warn('cron job moved to error after consecutive failures', { cronId: job.cronId, failures: updated.consecutiveFailures });
  }
  const result: CronRunResult = outcome.ok
    ? { status: 'success', response: outcome.response, requestId: lineage.requestId }
    : { status: 'error', error: outcome.message, requestId: lineage.requestId };
  const request = { trigger: context.trigger, ...(context.scheduledTime === undefined ? {} : { scheduledTime: context.scheduledTime }) };
  await ports.usageLogs.write({
    lineage,
    userId: job.ownerId,
    resourceId: job.cronId,
    resourceType: 'cron',
    requestType: context.trigger === 'schedule' ? 'CRON_SCHEDULED_RUN' : 'CRON_RUN_NOW',
    status: outcome.ok ? 'success' : 'error',
    request: { ...request, agentId: job.agentId, inputMessage: job.inputMessage },
    response: result,
    durationMs: at - started,
    creditsUsed: 0,
    ...(outcome.ok ? {} : { error: { code: outcome.code, message: outcome.message } }),
  });
  return result;
}

async function callAgent(job: CronRecord, lineage: Lineage, context: CronRunContext, ports: CronRunPorts): Promise<RunOutcome> {
  if (!(await ports.tokens.hasUsable(job.ownerId, 'user', ports.clock.now())))
    return {
      ok: false,
      code: 'OWNER_TOKEN_REQUIRED',
      message: 'The owner has no active user token; cron jobs run only while the owner holds one (SPEC 5.8).',
    };
  const ran = await ports.agentRuns.run(
    {
      ownerId: job.ownerId,
      agentId: job.agentId,
      prompt: job.inputMessage,
      lineage: childLineageHeader(lineage),
      ...(context.baseUrl === undefined ? {} : { baseUrl: context.baseUrl }),
    },
    context.signal,
  );
  if (ran.ok) return { ok: true, response: ran.reply };
  // The chat service scrubbed the run's secrets already; this request's own are scrubbed here.
  return { ok: false, code: ran.code, message: scrubSecrets(ran.message) };
}

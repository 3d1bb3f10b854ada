import type { RunTokens } from '../core/auth/run-token.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import { childLineageHeader, LINEAGE_HEADER, lineageOf, type Lineage } from '../core/http/lineage.ts';
import { uuid } from '../core/ids.ts';
import type { Logger } from '../core/logger.ts';
import type { UsageLogWriter } from '../core/usage-log.ts';
import { errorMessageOf, outcomeOfEvents, type ChatOutcome } from '../agents/chat-outcome.ts';
import type { TokenStore } from '../tokens/token.store.ts';
import { MAX_CONSECUTIVE_FAILURES, type CronRecord } from './cron.schema.ts';
import { scheduleOf, type CronPorts } from './cron.service.ts';

export interface CronRunPorts extends Pick<CronPorts, 'cronJobs' | 'schedules'> {
  readonly tokens: Pick<TokenStore, 'hasUsable'>;
  readonly runTokens: RunTokens;
  readonly usageLogs: UsageLogWriter;
  readonly config: Pick<Config, 'STREAM_URL'>;
  readonly clock: Clock;
  readonly log: Logger;
  readonly fetch: typeof fetch;
}

/** What a run answers (POST /cron/{cronId}/run) and records. */
export interface CronRunResult {
  readonly status: 'success' | 'error';
  readonly response?: string;
  readonly error?: string;
  readonly requestId: string;
}

/**
 * The run credential outlives the longest chat (SPEC part 8: 900 s streaming) and no more: it is
 * minted per run and never stored, so the job holds no token (SPEC 5.8).
 */
const RUN_TOKEN_TTL_MS = 16 * 60_000;

/**
 * One scheduled run: claims the due time first, so a second delivery of it (at-least-once queues,
 * a local restart) runs nothing, and a job that is not `active` (paused, error, or deleted since the
 * schedule fired) does not run. Returns null when nothing ran.
 */
export async function runScheduled(cronId: string, scheduledTime: Date, ports: CronRunPorts): Promise<CronRunResult | null> {
  const claimed = await ports.cronJobs.claimScheduled(cronId, scheduledTime.getTime());
  if (!claimed) {
    ports.log.info('cron run skipped: a repeat delivery, or the job is not active', { cronId, scheduledTime: scheduledTime.toISOString() });
    return null;
  }
  const job = await ports.cronJobs.get(cronId);
  if (job === null) return null;
  return runJob(job, lineageOf(uuid(), undefined), { trigger: 'schedule', scheduledTime: scheduledTime.toISOString() }, ports);
}

/**
 * Runs `job` once, as its owner: checks at this moment that the owner holds a usable user token
 * (SPEC 5.8), then calls the agent's chat on the streaming host (SPEC 4.8) with a run token, so the
 * chat path authenticates, bills and logs it like any chat, its usage record a child of this run's.
 * The outcome is recorded with atomic updates, and the third consecutive failure moves an active
 * job to `error` and disables its schedule.
 */
export async function runJob(job: CronRecord, lineage: Lineage, request: Record<string, string>, ports: CronRunPorts): Promise<CronRunResult> {
  const started = ports.clock.now();
  const outcome = await callAgent(job, lineage, ports);
  const at = ports.clock.now();
  const updated = await ports.cronJobs.recordOutcome(job.cronId, outcome.ok ? { ok: true } : { ok: false, error: outcome.error }, at);
  if (updated !== null && !outcome.ok && updated.consecutiveFailures >= MAX_CONSECUTIVE_FAILURES && (await ports.cronJobs.markError(job.cronId))) {
    await ports.schedules.put(scheduleOf({ ...updated, status: 'error' }, new Date(at)));
    ports.log.warn('cron job moved to error after consecutive failures', { cronId: job.cronId, failures: updated.consecutiveFailures });
  }
  const result: CronRunResult = outcome.ok
    ? { status: 'success', response: outcome.response, requestId: lineage.requestId }
    : { status: 'error', error: outcome.error, requestId: lineage.requestId };
  await ports.usageLogs.write({
    lineage,
    userId: job.ownerId,
    resourceId: job.cronId,
    resourceType: 'cron',
    requestType: request['trigger'] === 'schedule' ? 'CRON_SCHEDULED_RUN' : 'CRON_RUN_NOW',
    status: outcome.ok ? 'success' : 'error',
    request: { ...request, agentId: job.agentId, inputMessage: job.inputMessage },
    response: result,
    durationMs: at - started,
    creditsUsed: 0,
    ...(outcome.ok ? {} : { error: { code: 'CRON_RUN_FAILED', message: outcome.error } }),
  });
  return result;
}

async function callAgent(job: CronRecord, lineage: Lineage, ports: CronRunPorts): Promise<ChatOutcome> {
  if (!(await ports.tokens.hasUsable(job.ownerId, 'user', ports.clock.now())))
    return { ok: false, error: 'The owner has no active user token; cron jobs run only while the owner holds one (SPEC 5.8).' };
  const streamUrl = ports.config.STREAM_URL;
  if (streamUrl === undefined) return { ok: false, error: 'The platform has no streaming host configured (STREAM_URL).' };
  const token = await ports.runTokens.mint({ userId: job.ownerId, keys: null }, RUN_TOKEN_TTL_MS);
  let response: Response;
  try {
    response = await ports.fetch(`${streamUrl}/agent/${encodeURIComponent(job.agentId)}/chat`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
        [LINEAGE_HEADER]: childLineageHeader(lineage),
      },
      body: JSON.stringify({ prompt: job.inputMessage }),
      signal: AbortSignal.timeout(RUN_TOKEN_TTL_MS),
    });
  } catch (error) {
    ports.log.warn('cron run could not reach the chat endpoint', { cronId: job.cronId, error });
    return { ok: false, error: 'The agent chat endpoint could not be reached.' };
  }
  const body = await response.text();
  if (!response.ok) return { ok: false, error: errorMessageOf(body) ?? `The agent chat answered ${response.status}.` };
  return outcomeOfEvents(body);
}

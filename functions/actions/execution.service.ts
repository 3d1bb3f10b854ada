import { requireAlias, requireUser, type Actor, type UserActor } from '../core/auth/actor.ts';
import type { Credits } from '../core/credits.ts';
import { roundCredits } from '../core/credits.ts';
import { InsufficientCreditsError, PlatformError, TimeoutError } from '../core/errors.ts';
import { toErrorResponse } from '../core/http/error-response.ts';
import type { Lineage } from '../core/http/lineage.ts';
import { Reply } from '../core/http/route.ts';
import type { KeysReader } from '../core/keys-reader.ts';
import type { Logger } from '../core/logger.ts';
import type { UsageLogWriter } from '../core/usage-log.ts';
import type { ActionInvocation, RuntimeEvent } from '../runtimes/compute.ts';
import { checkSource } from '../runtimes/source-check.ts';
import { assertCanUse, loadAction, type ActionPorts } from './action.service.ts';
import { actionCost, assertParametersPresent, eventFromBody, isPlatformFailure, runtimeTimeoutSec, toActionError, type RunPath } from './execution.rules.ts';

export interface ExecutionPorts extends ActionPorts {
  readonly credits: Credits;
  readonly keysReader: KeysReader;
  readonly usageLogs: UsageLogWriter;
  readonly log: Logger;
}

/** What the handler returned, as the execution result's `data`. */
export interface ActionResult {
  readonly statusCode: number;
  readonly body: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** The execution result's `meta` (SPEC 4.3); `executionTime` is in milliseconds. */
export type ExecutionMeta = {
  readonly requestId: string;
  readonly actionId: string | null;
  readonly executionTime: number;
  readonly memoryMb: number;
  readonly creditsUsed: number;
  readonly deprecated?: true;
  readonly notice?: string;
};

/** Hosts action code may reach: AWS endpoints, for boto3 with the owner's keys. */
const ACTION_ALLOW_HOSTS = ['*.amazonaws.com'];
/** Lines of the handler's own output kept in the usage record, and characters per line. */
const MAX_LOG_LINES = 100;
const MAX_LOG_LINE_CHARS = 2000;

/** One run, whatever the route: who pays, what runs for which tenant, with which limits. */
interface Execution {
  readonly caller: UserActor;
  /** The resource owner: the compute tenant and the owner of the keys. */
  readonly tenantId: string;
  readonly actionId: string | null;
  readonly functionName: string;
  readonly source: string;
  readonly event: Record<string, unknown>;
  readonly keysNeeded: readonly string[];
  readonly memoryMb: number;
  /** The action's own timeout (or the inline run's). */
  readonly timeoutSec: number;
  readonly path: RunPath;
  /** What the usage record shows as the request: the event without keys (and the code, inline). */
  readonly loggedRequest: unknown;
  readonly deprecated: boolean;
}

/** What the runtime reported about one run. */
interface Outcome {
  readonly result: ActionResult | null;
  readonly error: Extract<RuntimeEvent, { type: 'error' }> | null;
  readonly logs: string[];
  readonly durationMs: number;
  readonly maxRssKb: number | undefined;
}

/**
 * `GET`/`POST /action/{actionId}` (router) and `/action/python-128mb/{actionId}` (direct). In
 * order: the action exists (404) and the caller may run it (403), required parameters (400), the
 * first credit (402), then the run; a failed run answers with its error code.
 */
export async function runAction(
  actor: Actor,
  actionId: string,
  event: Record<string, unknown>,
  path: 'router' | 'direct',
  ports: ExecutionPorts,
  lineage: Lineage,
  signal: AbortSignal,
): Promise<Reply> {
  const caller = requireUser(actor);
  const action = await loadAction(actionId, ports);
  assertCanUse(caller, action);
  assertParametersPresent(action.parameters, event);
  return execute(
    {
      caller,
      tenantId: action.ownerId,
      actionId: action.actionId,
      functionName: action.actionId,
      source: action.sourceCode,
      event,
      keysNeeded: action.keysNeeded,
      memoryMb: action.memoryMb,
      timeoutSec: action.timeoutSec,
      path,
      loggedRequest: event,
      deprecated: action.status === 'deprecated',
    },
    ports,
    lineage,
    signal,
  );
}

/**
 * `POST /action/python-128mb/inline-code`: code run once without creating an action, for callers
 * with an alias, billed like an action run. The same static check (400 listing every violation).
 */
export async function runInlineCode(
  actor: Actor,
  input: { code: string; event: Record<string, unknown>; timeout: number; memory: number },
  ports: ExecutionPorts,
  lineage: Lineage,
  signal: AbortSignal,
): Promise<Reply> {
  const caller = requireAlias(actor);
  await checkSource(ports.compute, input.code, 'code');
  const event = eventFromBody(input.event);
  return execute(
    {
      caller,
      tenantId: caller.userId,
      actionId: null,
      functionName: 'inline-code',
      source: input.code,
      event,
      keysNeeded: [],
      memoryMb: input.memory,
      timeoutSec: input.timeout,
      path: 'inline',
      loggedRequest: { code: input.code, event, timeout: input.timeout, memory: input.memory },
      deprecated: false,
    },
    ports,
    lineage,
    signal,
  );
}

async function execute(run: Execution, ports: ExecutionPorts, lineage: Lineage, signal: AbortSignal): Promise<Reply> {
  const reason = run.actionId === null ? 'inline code' : `action ${run.actionId}`;
  // The first credit up front, so a caller without credits never starts a run; the keys are read
  // meanwhile (a KMS decrypt in the cloud). Keys that cannot be read give the credit back.
  const [debited, keysRead] = await Promise.allSettled([
    ports.credits.debit(run.caller.userId, 1, { reason, requestId: lineage.requestId }),
    run.keysNeeded.length > 0 ? ports.keysReader.readKeys(run.caller, run.tenantId, run.keysNeeded) : Promise.resolve({}),
  ]);
  if (debited.status === 'rejected') throw debited.reason;
  if (keysRead.status === 'rejected') {
    await refund(run, ports, lineage, reason);
    throw keysRead.reason;
  }
  const keys = keysRead.value;
  let outcome: Outcome;
  try {
    const invocation: ActionInvocation = {
      kind: 'action',
      source: run.source,
      requestId: lineage.requestId,
      functionName: run.functionName,
      timeoutMs: runtimeTimeoutSec(run.timeoutSec, run.path) * 1000,
      memoryMb: run.memoryMb,
      // Keys travel in the run's environment; the runtime puts them in `event.keys`.
      env: { SVC_KEYS_JSON: JSON.stringify(keys), AWS_REGION: ports.config.AWS_REGION, ...(run.actionId ? { SVC_ACTION_ID: run.actionId } : {}) },
      allowHosts: ACTION_ALLOW_HOSTS,
      event: run.event,
    };
    outcome = await collect(ports.compute.invoke(run.tenantId, invocation, signal));
  } catch (error) {
    // The port reports run failures as events; a throw means nothing ran: the credit goes back.
    await refund(run, ports, lineage, reason);
    throw error;
  }

  const failure = outcome.error === null ? null : failureOf(outcome.error, run, signal);
  const creditsUsed = await settleCredits(run, outcome, ports, lineage, reason);
  await ports.usageLogs.write({
    lineage,
    userId: run.caller.userId,
    resourceId: run.actionId ?? 'inline-code',
    resourceType: 'action',
    requestType: run.path === 'inline' ? 'ACTION_INLINE' : run.path === 'direct' ? 'ACTION_DIRECT' : 'ACTION_RUN',
    status: failure === null ? 'success' : failure instanceof TimeoutError ? 'timeout' : 'error',
    request: run.loggedRequest,
    response: { ...(outcome.result ?? { result: null }), ...(outcome.logs.length > 0 ? { logs: outcome.logs } : {}) },
    durationMs: outcome.durationMs,
    memoryMb: run.memoryMb,
    ...(outcome.maxRssKb !== undefined ? { maxMemoryUsedMb: Math.round(outcome.maxRssKb / 1024) } : {}),
    creditsUsed,
    ...(failure !== null ? { error: errorOf(failure) } : {}),
  });
  if (failure !== null) throw failure;
  const result = outcome.result!;
  const meta: ExecutionMeta = {
    requestId: lineage.requestId,
    actionId: run.actionId,
    executionTime: outcome.durationMs,
    memoryMb: run.memoryMb,
    creditsUsed,
    ...(run.deprecated ? { deprecated: true as const, notice: `Action ${run.actionId} is deprecated; its owner may remove it.` } : {}),
  };
  return Reply.ok({ statusCode: result.statusCode, body: result.body, ...(result.headers ? { headers: result.headers } : {}) }, { meta });
}

/** A failure as the caller sees it (code and message from the one error table), for the usage record. */
function errorOf(failure: PlatformError): { code: string; message: string } {
  const { code, message } = toErrorResponse(failure);
  return { code, message };
}

/** The error to answer with; a run cut by the route's deadline reports that deadline's own error. */
function failureOf(event: Extract<RuntimeEvent, { type: 'error' }>, run: Execution, signal: AbortSignal): PlatformError {
  if (signal.aborted && signal.reason instanceof PlatformError) return signal.reason;
  return toActionError(event, { path: run.path, timeoutSec: run.timeoutSec, memoryMb: run.memoryMb });
}

/** Gathers a run's events: its result or error, its printed lines, how long it ran and its peak memory. */
export async function collect(events: AsyncIterable<RuntimeEvent>): Promise<Outcome> {
  const startedAt = performance.now();
  let result: ActionResult | null = null;
  let error: Outcome['error'] = null;
  const logs: string[] = [];
  let durationMs: number | null = null;
  let maxRssKb: number | undefined;
  for await (const event of events) {
    if (event.type === 'result') result = { statusCode: event.statusCode, body: event.body, ...(event.headers ? { headers: event.headers } : {}) };
    else if (event.type === 'error' && error === null) error = event;
    else if (event.type === 'log' && logs.length < MAX_LOG_LINES) logs.push(event.data.slice(0, MAX_LOG_LINE_CHARS));
    else if (event.type === 'end') {
      durationMs = event.durationMs;
      maxRssKb = event.maxRssKb;
    }
  }
  if (error === null && result === null) error = { type: 'error', code: 'INVALID_HANDLER_RESULT', message: 'the handler returned no result' };
  return { result: error === null ? result : null, error, logs, durationMs: Math.round((durationMs ?? performance.now() - startedAt) * 10) / 10, maxRssKb };
}

/**
 * The first credit was taken before the run; the rest of `actionCost` is taken now. Failures of the
 * platform's own (no runtime, capacity) give the first credit back. If the balance ran out
 * meanwhile, a finished run is not taken back: the shortfall is logged.
 */
async function settleCredits(run: Execution, outcome: Outcome, ports: ExecutionPorts, lineage: Lineage, reason: string): Promise<number> {
  if (outcome.error !== null && isPlatformFailure(outcome.error.code)) {
    await refund(run, ports, lineage, reason);
    return 0;
  }
  const extra = roundCredits(actionCost(run.memoryMb, outcome.durationMs) - 1);
  if (extra <= 0) return 1;
  try {
    await ports.credits.debit(run.caller.userId, extra, { reason: `${reason} run time`, requestId: lineage.requestId });
    return roundCredits(1 + extra);
  } catch (error) {
    if (!(error instanceof InsufficientCreditsError)) throw error;
    ports.log.warn('action run time not covered by the balance', { actionId: run.actionId, extra });
    return 1;
  }
}

async function refund(run: Execution, ports: ExecutionPorts, lineage: Lineage, reason: string): Promise<void> {
  try {
    await ports.credits.grant(run.caller.userId, 1, { reason: `${reason} refund: the platform could not run it`, requestId: lineage.requestId });
  } catch (error) {
    ports.log.error('refund of an action credit failed', { actionId: run.actionId, error });
  }
}

import { requireAlias, requireUser, type UserActor } from '../core/auth/actor.ts';
import { throwFirstFailure } from '../core/all-settled.ts';
import type { Credits } from '../core/credits.ts';
import { PlatformError, TimeoutError } from '../core/errors.ts';
import { toErrorResponse } from '../core/http/error-response.ts';
import type { RequestScope } from '../core/request-scope.ts';
import { openBilledRun } from '../core/runs/billed-run.ts';
import { Reply } from '../core/http/route.ts';
import type { KeysReader } from '../core/keys-reader.ts';
import { scrubSecrets } from '../core/secret-scope.ts';
import { scrubSecretValues, type UsageLogWriter } from '../core/usage-log.ts';
import type { ActionInvocation, RuntimeEvent } from '../runtimes/compute.ts';
import { checkSource } from '../runtimes/source-check.ts';
import { assertCanUse, loadAction, type ActionPorts } from './action.service.ts';
import {
  actionCost,
  assertParametersPresent,
  creditsForRun,
  eventFromBody,
  holdRefusedError,
  runtimeTimeoutSec,
  toActionError,
  type RunPath,
} from './execution.rules.ts';

export interface ExecutionPorts extends ActionPorts {
  readonly credits: Credits;
  readonly keysReader: KeysReader;
  readonly usageLogs: UsageLogWriter;
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

/** What one run produced, and what the platform observed of it. */
interface Outcome {
  readonly result: ActionResult | null;
  readonly error: Extract<RuntimeEvent, { type: 'error' }> | null;
  readonly logs: string[];
  /** Whether the code started (the adapter saw the runtime's `start`). */
  readonly started: boolean;
  /** By the platform's clock. */
  readonly durationMs: number;
  readonly maxRssKb: number | undefined;
}

/**
 * `GET`/`POST /action/{actionId}` (router) and `/action/python-128mb/{actionId}` (direct). In
 * order: the action exists (404) and the caller may run it (403), required parameters (400), the
 * run's worst case held (402), then the run; a failed run answers with its error code.
 */
export async function runAction(
  scope: RequestScope,
  actionId: string,
  event: Record<string, unknown>,
  path: 'router' | 'direct',
  ports: ExecutionPorts,
): Promise<Reply> {
  const caller = requireUser(scope.actor);
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
    scope,
  );
}

/**
 * `POST /action/python-128mb/inline-code`: code run once without creating an action, for callers
 * with an alias, billed like an action run. The same static check (400 listing every violation).
 */
export async function runInlineCode(
  scope: RequestScope,
  input: { code: string; event: Record<string, unknown>; timeout: number; memory: number },
  ports: ExecutionPorts,
): Promise<Reply> {
  const caller = requireAlias(scope.actor);
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
    scope,
  );
}

async function execute(run: Execution, ports: ExecutionPorts, scope: RequestScope): Promise<Reply> {
  const { lineage, signal } = scope;
  const reason = run.actionId === null ? 'inline code' : `action ${run.actionId}`;
  const timeoutSec = runtimeTimeoutSec(run.timeoutSec, run.path);
  const timeoutMs = timeoutSec * 1000;
  // The worst case is held before the run, so a run can never cost more than the balance held
  // (billing after the run let a balance of 3 buy 21 credits of compute); the keys are read
  // meanwhile (a KMS decrypt in the cloud). Keys that cannot be read give the hold back. The hold's
  // ledger line is written while the code runs, as for MCP calls and chats, and every answer waits
  // for it: a line that cannot be written fails the request (500), the run's record still written.
  const hold = actionCost(run.memoryMb, timeoutMs);
  const billed = await openBilledRun(
    {
      kind: 'action',
      // The caller pays, and auth read the caller's account: its grant month spares the grant's write.
      payer: run.caller.userId,
      upfront: { credits: hold, reason: `${reason}: held for up to ${timeoutSec} s`, seen: run.caller.account },
      refunds: {
        notRun: `${reason} refund: the platform could not run it`,
        notStarted: `${reason} refund: the run never started`,
        unused: `${reason}: unused part of the hold`,
      },
      refused: (error) => holdRefusedError(hold, error.available, run.memoryMb, timeoutSec),
      readKeys: () => (run.keysNeeded.length > 0 ? ports.keysReader.readKeys(run.caller, run.tenantId, run.keysNeeded) : Promise.resolve({})),
    },
    ports,
    scope,
  );
  const { keys } = billed;
  let outcome: Outcome;
  try {
    const invocation: ActionInvocation = {
      kind: 'action',
      source: run.source,
      requestId: lineage.requestId,
      functionName: run.functionName,
      timeoutMs,
      memoryMb: run.memoryMb,
      // Keys travel in the run's environment; the runtime puts them in `event.keys`.
      env: { SVC_KEYS_JSON: JSON.stringify(keys), AWS_REGION: ports.config.AWS_REGION, ...(run.actionId ? { SVC_ACTION_ID: run.actionId } : {}) },
      allowHosts: ACTION_ALLOW_HOSTS,
      event: run.event,
    };
    outcome = await collect(ports.compute.invoke(run.tenantId, invocation, signal));
  } catch (error) {
    // The port reports run failures as events; a throw means nothing ran: the hold goes back.
    await billed.abandon();
    throw error;
  }

  const failure = outcome.error === null ? null : failureOf(outcome.error, run, signal);
  // The run keeps what its time by the platform's clock costs, never more than the hold; the rest
  // goes back while the usage record is written, and the hold's line is awaited with them. A failed
  // record or line is reported only once the refund is through.
  const { creditsUsed, written } = await billed.finish(
    { started: outcome.started, kept: creditsForRun(run.memoryMb, timeoutMs, outcome) },
    {
      resourceId: run.actionId ?? 'inline-code',
      resourceType: 'action',
      requestType: run.path === 'inline' ? 'ACTION_INLINE' : run.path === 'direct' ? 'ACTION_DIRECT' : 'ACTION_RUN',
      status: failure === null ? 'success' : failure instanceof TimeoutError ? 'timeout' : 'error',
      request: run.loggedRequest,
      response: { ...(outcome.result ?? { result: null }), ...(outcome.logs.length > 0 ? { logs: outcome.logs } : {}) },
      durationMs: outcome.durationMs,
      memoryMb: run.memoryMb,
      ...(outcome.maxRssKb !== undefined ? { maxMemoryUsedMb: Math.round(outcome.maxRssKb / 1024) } : {}),
      ...(failure !== null ? { error: errorOf(failure) } : {}),
    },
  );
  throwFirstFailure(written);
  if (failure !== null) throw failure;
  // The keys are the owner's: a caller who is not the owner never sees them, even when the code
  // returns them. The owner gets the result as the code returned it.
  const result = run.caller.userId === run.tenantId ? outcome.result! : (scrubSecretValues(outcome.result!) as ActionResult);
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

/**
 * The error to answer with; a run cut by the route's deadline reports that deadline's own error.
 * The runtime's message is user code's text (an exception may carry a key), so it is scrubbed
 * whoever the caller is: error messages also reach logs, records and support threads.
 */
function failureOf(event: Extract<RuntimeEvent, { type: 'error' }>, run: Execution, signal: AbortSignal): PlatformError {
  if (signal.aborted && signal.reason instanceof PlatformError) return signal.reason;
  const scrubbed = {
    ...event,
    message: scrubSecrets(event.message),
    ...(event.violations ? { violations: event.violations.map((v) => ({ ...v, message: scrubSecrets(v.message) })) } : {}),
  };
  return toActionError(scrubbed, { path: run.path, timeoutSec: run.timeoutSec, memoryMb: run.memoryMb });
}

/** Gathers a run's events: its result or error, its printed lines, and what the platform observed. */
export async function collect(events: AsyncIterable<RuntimeEvent>): Promise<Outcome> {
  const startedAt = performance.now();
  let result: ActionResult | null = null;
  let error: Outcome['error'] = null;
  const logs: string[] = [];
  let end: Extract<RuntimeEvent, { type: 'end' }> | null = null;
  for await (const event of events) {
    if (event.type === 'result') result = { statusCode: event.statusCode, body: event.body, ...(event.headers ? { headers: event.headers } : {}) };
    else if (event.type === 'error' && error === null) error = event;
    else if (event.type === 'log' && logs.length < MAX_LOG_LINES) logs.push(event.data.slice(0, MAX_LOG_LINE_CHARS));
    else if (event.type === 'end') end = event;
  }
  if (error === null && result === null) error = { type: 'error', code: 'INVALID_HANDLER_RESULT', message: 'the handler returned no result' };
  // Without an `end` (a broken adapter) nothing says the code did not start: it is billed for the time waited.
  const durationMs = end?.durationMs ?? performance.now() - startedAt;
  return {
    result: error === null ? result : null,
    error,
    logs,
    started: end?.started ?? true,
    durationMs: Math.round(durationMs * 10) / 10,
    maxRssKb: end?.maxRssKb,
  };
}

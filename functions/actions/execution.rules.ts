/**
 * The rules of an action run that need no I/O: what it costs, what its event holds, which
 * parameters are missing, how long it may run on each path, and what a runtime failure is called.
 * `execution.service.ts` applies them around the Compute port.
 */
import { runTimeCredits } from '../core/credit-meter.ts';
import { CreditsRefusedError, roundCredits } from '../core/credits.ts';
import {
  ExecutionFailedError,
  RateLimitedError,
  ServiceUnavailableError,
  TimeoutError,
  UpstreamError,
  ValidationError,
  type PlatformError,
} from '../core/errors.ts';
import type { RuntimeEvent } from '../runtimes/compute.ts';
import { RESERVED_EVENT_FIELD } from './action-fields.ts';
import type { ActionParameter } from './action.schema.ts';

/** SPEC part 8: a run through the router (`/action/{actionId}`) is cut at 120 seconds with 504. */
export const GATEWAY_TIMEOUT_SEC = 120;
/** Route timeout of the direct and inline routes: the longest action timeout (300 s) plus time to log and bill. */
export const DIRECT_ROUTE_TIMEOUT_SEC = 310;

/** Which way a run came in: through the router, the direct runtime route, or as inline code. */
export type RunPath = 'router' | 'direct' | 'inline';

/** Credits are billed in steps of this many milliseconds of run time (rounded up). */
export const BILLING_STEP_MS = 100;

/**
 * What one run costs: `1 + memoryMb / 1024 × (seconds − 0.1)`, seconds being the run time rounded
 * up to the next 0.1 s (at least 0.1), kept to 4 decimals: the first credit covers the first 0.1 s.
 * E.g. 128 MB for 40 ms costs 1, 128 MB for 250 ms 1.025, 1024 MB for 30 s 30.9. With the run's
 * timeout as the duration it is the worst case, which is held before the run starts.
 */
export function actionCost(memoryMb: number, durationMs: number): number {
  const steps = Math.max(1, Math.ceil(Math.max(0, durationMs) / BILLING_STEP_MS));
  return roundCredits(1 + runTimeCredits(memoryMb, (steps - 1) * BILLING_STEP_MS));
}

/**
 * What a run is billed, from what the platform observed: nothing when its code never started,
 * else `actionCost` of its time by the platform's clock, never past its timeout (the hold's limit).
 * The run's error code plays no part: it travels on a stream user code shares.
 */
export function creditsForRun(memoryMb: number, timeoutMs: number, observed: { readonly started: boolean; readonly durationMs: number }): number {
  return observed.started ? actionCost(memoryMb, Math.min(observed.durationMs, timeoutMs)) : 0;
}

/** 402 naming the worst case a run needs held and what the balance was. */
export function holdRefusedError(hold: number, available: number, memoryMb: number, timeoutSec: number): CreditsRefusedError {
  return new CreditsRefusedError(
    hold,
    available,
    `This run needs up to ${hold} credits (${memoryMb} MB for up to ${timeoutSec} s); the balance is ${roundCredits(available)}.`,
  );
}

/** Legacy credentials may arrive in the query string; they never become parameters. */
const QUERY_CREDENTIALS = ['secretServiceKey', 'userId'] as const;

/**
 * The event of a GET run: the query string (every value a string). The caller's credentials, when
 * sent as `secretServiceKey` (and `userId`), are not parameters, and `keys` is reserved.
 */
export function eventFromQuery(query: Readonly<Record<string, string>>): Record<string, unknown> {
  const event: Record<string, unknown> = { ...query };
  if (query['secretServiceKey'] !== undefined) for (const name of QUERY_CREDENTIALS) delete event[name];
  delete event[RESERVED_EVENT_FIELD];
  return event;
}

/** The event of a POST run or an inline run: the JSON object as sent, without the reserved `keys`. */
export function eventFromBody(body: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const event: Record<string, unknown> = { ...body };
  delete event[RESERVED_EVENT_FIELD];
  return event;
}

/** Names of required parameters that are absent, null or an empty string, in declaration order. */
export function missingParameters(declared: readonly ActionParameter[], event: Readonly<Record<string, unknown>>): string[] {
  return declared.filter((p) => p.required && (event[p.name] === undefined || event[p.name] === null || event[p.name] === '')).map((p) => p.name);
}

/** 400 naming every missing required parameter; checked before anything runs or is billed. */
export function assertParametersPresent(declared: readonly ActionParameter[], event: Readonly<Record<string, unknown>>): void {
  const missing = missingParameters(declared, event);
  if (missing.length > 0)
    throw new ValidationError(
      'Missing required parameters',
      missing.map((name) => `${name}: is required`),
    );
}

/** The limit the runtime enforces: the action's own, and on the router path never past the gateway's 120 s. */
export function runtimeTimeoutSec(timeoutSec: number, path: RunPath): number {
  return path === 'router' ? Math.min(timeoutSec, GATEWAY_TIMEOUT_SEC) : timeoutSec;
}

type ErrorEvent = Extract<RuntimeEvent, { type: 'error' }>;

/**
 * Runtime failures that are the platform's, not the code's (no runtime, runtime lost, protocol
 * broken, at capacity): reported as 503 when no runtime could be had, 502 when one misbehaved
 * (429 for capacity). Billing never looks at these codes; it
 * follows whether the run started (`creditsForRun`).
 */
const PLATFORM_FAILURES = new Set(['RUNTIME_UNAVAILABLE', 'RUNTIME_CRASHED', 'RUNTIME_PROTOCOL_ERROR', 'SANDBOX_UNAVAILABLE', 'TOO_MANY_INVOCATIONS']);

export function isPlatformFailure(code: string): boolean {
  return PLATFORM_FAILURES.has(code);
}

/** How long to wait before retrying a run the runtime refused for capacity. */
const CAPACITY_RETRY_AFTER_SEC = 1;

/**
 * Runtime error codes as the actions API names them. The statuses come from the error kinds in
 * `core/http/error-response.ts`: execution failures 500, timeouts 504, refused source 400,
 * capacity 429, no runtime 503 (its message says what to install: a local platform without
 * Python), a runtime that failed 502.
 *
 * | runtime code            | action code               | status |
 * |-------------------------|---------------------------|--------|
 * | HANDLER_ERROR           | ACTION_EXECUTION_FAILED   | 500    |
 * | HANDLER_NOT_FOUND       | HANDLER_NOT_FOUND         | 500    |
 * | INVALID_HANDLER_RESULT  | INVALID_HANDLER_RESULT    | 500    |
 * | MEMORY_LIMIT_EXCEEDED   | MEMORY_LIMIT_EXCEEDED     | 500    |
 * | OUTPUT_LIMIT_EXCEEDED   | OUTPUT_LIMIT_EXCEEDED     | 500    |
 * | TIMEOUT, ABORTED        | TIMEOUT                   | 504    |
 * | SOURCE_REJECTED         | INVALID_PARAMETERS (inline) / ACTION_EXECUTION_FAILED | 400 / 500 |
 * | TOO_MANY_INVOCATIONS    | RATE_LIMITED              | 429    |
 * | RUNTIME_UNAVAILABLE     | RUNTIME_UNAVAILABLE       | 503    |
 * | other RUNTIME_*, SANDBOX_UNAVAILABLE | RUNTIME_UNAVAILABLE | 502 |
 * | anything else           | ACTION_EXECUTION_FAILED   | 500    |
 */
export function toActionError(event: ErrorEvent, context: { readonly path: RunPath; readonly timeoutSec: number; readonly memoryMb: number }): PlatformError {
  const where = event.line !== undefined ? ` (line ${event.line})` : '';
  switch (event.code) {
    case 'HANDLER_ERROR':
      return new ExecutionFailedError(`The handler raised ${event.message}${where}.`, 'ACTION_EXECUTION_FAILED');
    case 'HANDLER_NOT_FOUND':
      return new ExecutionFailedError('The source defines no handler(event, context) function.', 'HANDLER_NOT_FOUND');
    case 'INVALID_HANDLER_RESULT':
      return new ExecutionFailedError(
        `The handler's result is invalid (it must be an object with an integer statusCode and a JSON body): ${event.message}.`,
        'INVALID_HANDLER_RESULT',
      );
    case 'MEMORY_LIMIT_EXCEEDED':
      return new ExecutionFailedError(`The run exceeded its memory limit of ${context.memoryMb} MB.`, 'MEMORY_LIMIT_EXCEEDED');
    case 'OUTPUT_LIMIT_EXCEEDED':
      return new ExecutionFailedError(event.message, 'OUTPUT_LIMIT_EXCEEDED');
    case 'TIMEOUT':
    case 'ABORTED':
      return timeoutError(context.timeoutSec, context.path);
    case 'SOURCE_REJECTED': {
      const issues = (event.violations ?? []).map((v) => `${context.path === 'inline' ? 'code' : 'sourceCode'}: line ${v.line}: ${v.message}`);
      if (context.path === 'inline') return new ValidationError('Invalid request body', issues);
      return new ExecutionFailedError(`The runtime refused the action's source: ${issues.join('; ') || event.message}`, 'ACTION_EXECUTION_FAILED');
    }
    case 'TOO_MANY_INVOCATIONS':
      return new RateLimitedError(CAPACITY_RETRY_AFTER_SEC);
    case 'RUNTIME_UNAVAILABLE':
      // Written by the platform's own Compute adapter, never by user code: it names what is missing.
      return new ServiceUnavailableError(`The action runtime is unavailable: ${event.message}`, 'RUNTIME_UNAVAILABLE');
    default:
      if (isPlatformFailure(event.code)) return new UpstreamError('The action runtime is unavailable; retry shortly.', 'RUNTIME_UNAVAILABLE');
      return new ExecutionFailedError(event.message || 'The action failed.', 'ACTION_EXECUTION_FAILED');
  }
}

/** 504: the action's own limit, or on the router path the gateway's when the action's is longer. */
export function timeoutError(timeoutSec: number, path: RunPath): TimeoutError {
  const limit = runtimeTimeoutSec(timeoutSec, path);
  if (path === 'router' && limit < timeoutSec) {
    return new TimeoutError(
      `The action did not finish within the ${GATEWAY_TIMEOUT_SEC}-second gateway limit; call /action/python-128mb/{actionId} to use its own timeout of ${timeoutSec} seconds.`,
      'TIMEOUT',
    );
  }
  return new TimeoutError(
    `The ${path === 'inline' ? 'code' : 'action'} did not finish within its timeout of ${limit} second${limit === 1 ? '' : 's'}.`,
    'TIMEOUT',
  );
}

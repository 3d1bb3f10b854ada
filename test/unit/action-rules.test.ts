import { describe, expect, it } from 'vitest';
import { createActionBody, inlineCodeBody, listActionsQuery, updateActionBody } from '../../functions/actions/action.schema.ts';
import { filterExpression, isPubliclyListed } from '../../functions/actions/action.store.ts';
import {
  actionCost,
  assertParametersPresent,
  DIRECT_ROUTE_TIMEOUT_SEC,
  eventFromBody,
  eventFromQuery,
  GATEWAY_TIMEOUT_SEC,
  missingParameters,
  runtimeTimeoutSec,
  toActionError,
} from '../../functions/actions/execution.rules.ts';
import { ValidationError } from '../../functions/core/errors.ts';
import { toErrorResponse } from '../../functions/core/http/error-response.ts';
import { validate } from '../../functions/core/http/pipeline.ts';
import { routes } from '../../lib/manifest/index.ts';

const SOURCE = 'def handler(event, context):\n    return {"statusCode": 200, "body": "ok"}\n';
const minimal = { actionName: 'Weather', description: 'Says the weather', runtime: 'python3.12', sourceCode: SOURCE, category: 'utilities' };

describe('action credit formula', () => {
  it('costs 1 plus memoryMb/1024 per second past the first 0.1 s, seconds rounded up to 0.1, at 4 decimals', () => {
    expect(actionCost(128, 0)).toBe(1);
    expect(actionCost(128, 40)).toBe(1);
    expect(actionCost(1024, 100)).toBe(1);
    expect(actionCost(128, 101)).toBe(1.0125);
    expect(actionCost(128, 250)).toBe(1.025);
    expect(actionCost(256, 1000)).toBe(1.225);
    expect(actionCost(1024, 30_000)).toBe(30.9);
    expect(actionCost(512, 2_050)).toBe(2);
  });

  it('never goes below 1, whatever the duration says', () => {
    expect(actionCost(128, -5)).toBe(1);
  });
});

describe('action events', () => {
  it('takes GET parameters from the query string as strings, without legacy credentials or keys', () => {
    // Act
    const event = eventFromQuery({ city: 'Paris', days: '3', userId: 'u1', secretServiceKey: 'svc_sk_x', keys: '{"a":"b"}' });
    // Assess
    expect(event).toEqual({ city: 'Paris', days: '3' });
  });

  it('keeps a userId parameter when no secret key came with it', () => {
    expect(eventFromQuery({ userId: 'customer-7' })).toEqual({ userId: 'customer-7' });
  });

  it('takes POST parameters as sent, except the reserved keys field', () => {
    expect(eventFromBody({ city: 'Paris', days: 3, nested: { a: [1] }, keys: { openai: 'mine' } })).toEqual({ city: 'Paris', days: 3, nested: { a: [1] } });
  });

  it('names every missing required parameter, treating null and empty strings as missing', () => {
    // Prepare
    const declared = [
      { name: 'city', type: 'string', required: true },
      { name: 'days', type: 'number', required: true },
      { name: 'units', type: 'string', required: false },
      { name: 'lang', type: 'string', required: true },
    ];
    // Act
    const missing = missingParameters(declared, { city: '', days: 0, lang: null });
    // Assess
    expect(missing).toEqual(['city', 'lang']);
    expect(() => assertParametersPresent(declared, {})).toThrow(ValidationError);
    const failure = toErrorResponse(catchError(() => assertParametersPresent(declared, { days: 1 })));
    expect(failure).toMatchObject({ status: 400, code: 'INVALID_PARAMETERS', message: 'Missing required parameters: city: is required; lang: is required' });
  });
});

describe('action timeouts', () => {
  it("caps the router path at the 120-second gateway limit and lets the direct path use the action's own", () => {
    expect(runtimeTimeoutSec(30, 'router')).toBe(30);
    expect(runtimeTimeoutSec(300, 'router')).toBe(GATEWAY_TIMEOUT_SEC);
    expect(runtimeTimeoutSec(300, 'direct')).toBe(300);
    expect(runtimeTimeoutSec(300, 'inline')).toBe(300);
  });

  it('matches the manifest: router routes time out at 120 s, direct and inline routes after 300 s plus a margin', () => {
    // Prepare
    const actionRoutes = routes.filter((r) => r.area === 'actions');
    const timeoutOf = (method: string, path: string) => actionRoutes.find((r) => r.method === method && r.path === path)?.timeoutSec;
    // Assess
    expect(timeoutOf('GET', '/action/{actionId}')).toBe(GATEWAY_TIMEOUT_SEC);
    expect(timeoutOf('POST', '/action/{actionId}')).toBe(GATEWAY_TIMEOUT_SEC);
    expect(timeoutOf('GET', '/action/python-128mb/{actionId}')).toBe(DIRECT_ROUTE_TIMEOUT_SEC);
    expect(timeoutOf('POST', '/action/python-128mb/{actionId}')).toBe(DIRECT_ROUTE_TIMEOUT_SEC);
    expect(timeoutOf('POST', '/action/python-128mb/inline-code')).toBe(DIRECT_ROUTE_TIMEOUT_SEC);
    expect(DIRECT_ROUTE_TIMEOUT_SEC).toBeGreaterThan(300);
    expect(actionRoutes.every((r) => r.style === 'A')).toBe(true);
  });
});

describe('action error codes', () => {
  const context = { path: 'router' as const, timeoutSec: 30, memoryMb: 128 };
  const mapped = (code: string, extra: Record<string, unknown> = {}, ctx: Parameters<typeof toActionError>[1] = context) =>
    toErrorResponse(toActionError({ type: 'error', code, message: 'the message', ...extra }, ctx));

  it('maps each runtime failure to a clear code, the status coming from the one error table', () => {
    expect(mapped('HANDLER_ERROR', { message: "KeyError: 'city'", line: 2 })).toMatchObject({
      status: 500,
      code: 'ACTION_EXECUTION_FAILED',
      message: "The handler raised KeyError: 'city' (line 2).",
    });
    expect(mapped('HANDLER_NOT_FOUND')).toMatchObject({ status: 500, code: 'HANDLER_NOT_FOUND' });
    expect(mapped('INVALID_HANDLER_RESULT').message).toContain('statusCode');
    expect(mapped('INVALID_HANDLER_RESULT')).toMatchObject({ status: 500, code: 'INVALID_HANDLER_RESULT' });
    expect(mapped('MEMORY_LIMIT_EXCEEDED')).toMatchObject({
      status: 500,
      code: 'MEMORY_LIMIT_EXCEEDED',
      message: 'The run exceeded its memory limit of 128 MB.',
    });
    expect(mapped('OUTPUT_LIMIT_EXCEEDED')).toMatchObject({ status: 500, code: 'OUTPUT_LIMIT_EXCEEDED' });
    expect(mapped('TIMEOUT')).toMatchObject({ status: 504, code: 'TIMEOUT', message: 'The action did not finish within its timeout of 30 seconds.' });
    expect(mapped('ABORTED')).toMatchObject({ status: 504, code: 'TIMEOUT' });
    expect(mapped('TOO_MANY_INVOCATIONS')).toMatchObject({ status: 429, code: 'RATE_LIMITED', headers: { 'retry-after': '1' } });
    // No runtime at all is 503 and keeps the adapter's word on what to install; a runtime that failed is 502.
    expect(mapped('RUNTIME_UNAVAILABLE')).toMatchObject({
      status: 503,
      code: 'RUNTIME_UNAVAILABLE',
      message: 'The action runtime is unavailable: the message',
    });
    expect(mapped('RUNTIME_CRASHED')).toMatchObject({ status: 502, code: 'RUNTIME_UNAVAILABLE' });
    expect(mapped('SOMETHING_NEW')).toMatchObject({ status: 500, code: 'ACTION_EXECUTION_FAILED', message: 'the message' });
  });

  it("names the gateway limit when it, not the action's own timeout, cut a router run", () => {
    const failure = mapped('TIMEOUT', {}, { path: 'router', timeoutSec: 300, memoryMb: 128 });
    expect(failure).toMatchObject({ status: 504, code: 'TIMEOUT' });
    expect(failure.message).toContain('120-second gateway limit');
    expect(mapped('TIMEOUT', {}, { path: 'direct', timeoutSec: 300, memoryMb: 128 }).message).toBe(
      'The action did not finish within its timeout of 300 seconds.',
    );
  });

  it('reports refused inline code as a 400 listing the violations, a refused stored source as a failure', () => {
    const violations = [{ line: 1, col: 1, message: "import of 'os' is not allowed" }];
    expect(mapped('SOURCE_REJECTED', { violations }, { path: 'inline', timeoutSec: 30, memoryMb: 128 })).toMatchObject({
      status: 400,
      code: 'INVALID_PARAMETERS',
      message: "Invalid request body: code: line 1: import of 'os' is not allowed",
    });
    expect(mapped('SOURCE_REJECTED', { violations })).toMatchObject({ status: 500, code: 'ACTION_EXECUTION_FAILED' });
  });
});

describe('action request schemas', () => {
  it('fills the SPEC defaults on create', () => {
    expect(validate('request body', createActionBody, minimal)).toEqual({
      ...minimal,
      visibility: 'private',
      status: 'development',
      memoryMb: 128,
      timeoutSec: 30,
      tags: [],
      parameters: [],
      keysNeeded: [],
    });
  });

  it('names every missing required field', () => {
    const error = catchError(() => validate('request body', createActionBody, {}));
    expect(toErrorResponse(error).message).toBe(
      'Invalid request body: actionName: is required; description: is required; runtime: is required; sourceCode: is required; category: is required',
    );
  });

  it('refuses memory outside 128/256/512/1024, timeouts outside 1..300, ids without act-, and other runtimes', () => {
    const issues = (input: Record<string, unknown>) =>
      toErrorResponse(catchError(() => validate('request body', createActionBody, { ...minimal, ...input }))).message;
    expect(issues({ memoryMb: 200 })).toContain('memoryMb: must be one of 128, 256, 512, 1024');
    expect(issues({ timeoutSec: 0 })).toContain('timeoutSec');
    expect(issues({ timeoutSec: 301 })).toContain('timeoutSec');
    expect(issues({ actionId: 'weather' })).toContain('actionId: must be "act-"');
    expect(issues({ runtime: 'nodejs20' })).toContain('runtime: must be python3.12');
    expect(issues({ status: 'deleted' })).toContain('status');
    expect(validate('request body', createActionBody, { ...minimal, memoryMb: 1024, timeoutSec: 300, actionId: 'act-weather_1' })).toMatchObject({
      memoryMb: 1024,
      timeoutSec: 300,
      actionId: 'act-weather_1',
    });
  });

  it('checks parameters: identifiers, unique, not the reserved keys, with defaults', () => {
    const parsed = validate('request body', createActionBody, {
      ...minimal,
      parameters: [{ name: 'city', required: true }, { name: 'days' }],
      keysNeeded: ['OpenAI', 'openai'],
    });
    expect(parsed.parameters).toEqual([
      { name: 'city', type: 'string', required: true },
      { name: 'days', type: 'string', required: false },
    ]);
    expect(parsed.keysNeeded).toEqual(['openai']);
    const issues = (parameters: unknown) => toErrorResponse(catchError(() => validate('request body', createActionBody, { ...minimal, parameters }))).message;
    expect(issues([{ name: 'keys' }])).toContain('reserved');
    expect(issues([{ name: 'a' }, { name: 'a' }])).toContain('unique');
    expect(issues([{ name: 'not valid' }])).toContain('identifier');
  });

  it('takes only the supplied fields on update', () => {
    expect(validate('request body', updateActionBody, { actionId: 'act-1', status: 'active' })).toEqual({ actionId: 'act-1', status: 'active' });
  });

  it('defaults inline runs to 30 s and 128 MB, and refuses limits outside the allowed ones', () => {
    expect(validate('request body', inlineCodeBody, { code: SOURCE })).toEqual({ code: SOURCE, event: {}, timeout: 30, memory: 128 });
    const message = toErrorResponse(catchError(() => validate('request body', inlineCodeBody, { code: SOURCE, timeout: 301, memory: 64, event: [] }))).message;
    expect(message).toContain('timeout');
    expect(message).toContain('memory');
    expect(message).toContain('event');
  });

  it('reads list filters from the query string', () => {
    expect(validate('query parameters', listActionsQuery, { runtime: 'python', limit: '5' })).toEqual({ visibility: 'all', runtime: 'python', limit: 5 });
    expect(() => validate('query parameters', listActionsQuery, { runtime: 'ruby' })).toThrow(ValidationError);
  });
});

describe('action listing rules', () => {
  it('lists publicly only public actions out of development', () => {
    expect(isPubliclyListed({ visibility: 'public', status: 'active' })).toBe(true);
    expect(isPubliclyListed({ visibility: 'public', status: 'deprecated' })).toBe(true);
    expect(isPubliclyListed({ visibility: 'public', status: 'development' })).toBe(false);
    expect(isPubliclyListed({ visibility: 'private', status: 'active' })).toBe(false);
  });

  it('builds one DynamoDB filter from every given filter, none when there is none', () => {
    expect(filterExpression({})).toEqual({ values: {} });
    const expression = filterExpression({ status: 'active', category: 'weather', runtimePrefix: 'python', nameContains: 'WeaTher' });
    expect(expression.FilterExpression).toBe(
      '#status = :status AND #category = :category AND begins_with(#runtime, :runtime) AND contains(#nameLower, :nameLower)',
    );
    expect(expression.values).toEqual({ ':status': 'active', ':category': 'weather', ':runtime': 'python', ':nameLower': 'weather' });
  });
});

function catchError(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

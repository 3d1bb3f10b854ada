import { describe, expect, it } from 'vitest';
import type { ActionRecord } from '../../functions/actions/action.schema.ts';
import type { ActionStore } from '../../functions/actions/action.store.ts';
import { runAction, runInlineCode, type ExecutionPorts } from '../../functions/actions/execution.service.ts';
import type { UserActor } from '../../functions/core/auth/actor.ts';
import { parseConfig } from '../../functions/core/config.ts';
import type { Credits, LedgerEntry } from '../../functions/core/credits.ts';
import { InsufficientCreditsError, PlatformError, TimeoutError } from '../../functions/core/errors.ts';
import { toErrorResponse } from '../../functions/core/http/error-response.ts';
import type { Reply } from '../../functions/core/http/route.ts';
import type { UsageLogInput, UsageLogRecord } from '../../functions/core/usage-log.ts';
import type { UserStore } from '../../functions/users/user.store.ts';
import type { ActionInvocation, Compute, Invocation, RuntimeEvent } from '../../functions/runtimes/compute.ts';
import { deferred, settled } from '../support/deferred.ts';
import { scopeOf } from '../support/request-scope.ts';
import { areas } from '../../lib/manifest/areas.ts';

const SOURCE = 'def handler(event, context):\n    return {"statusCode": 200, "body": event}\n';

function user(userId: string, overrides: Partial<UserActor> = {}): UserActor {
  return { kind: 'user', userId, alias: userId, isAdmin: false, via: 'user-token', tokenId: null, scope: 'full', roleKeys: null, ...overrides };
}

function action(overrides: Partial<ActionRecord> = {}): ActionRecord {
  return {
    actionId: 'act-weather',
    ownerId: 'owner',
    actionName: 'Weather',
    nameLower: 'weather',
    description: 'd',
    runtime: 'python3.12',
    sourceCode: SOURCE,
    category: 'utilities',
    visibility: 'private',
    status: 'active',
    memoryMb: 256,
    timeoutSec: 30,
    tags: [],
    parameters: [{ name: 'city', type: 'string', required: true }],
    keysNeeded: ['openai'],
    createdAt: 1,
    updatedAt: 1,
    ...overrides,
  };
}

/** In-memory ports; `script` decides what each invocation yields. */
function setup(
  options: {
    actions?: ActionRecord[];
    balance?: number;
    script?: (invocation: ActionInvocation, signal?: AbortSignal) => AsyncIterable<RuntimeEvent>;
    keysFail?: boolean;
    /** When the hold's ledger line is written (or fails): at once unless given. */
    holdLine?: Promise<void>;
  } = {},
) {
  const actions = new Map((options.actions ?? [action()]).map((a) => [a.actionId, a]));
  let balance = options.balance ?? 100;
  const ledger: { amount: number; reason: string; startedWithRun?: boolean }[] = [];
  const invocations: { tenantId: string; invocation: Invocation; signal: AbortSignal | undefined }[] = [];
  const logs: UsageLogInput[] = [];
  const keyReads: { callerId: string; ownerId: string; names: readonly string[] }[] = [];
  const entry = (amount: number): LedgerEntry => ({ userId: 'x', entryId: 'e', amount, balanceAfter: balance, reason: '', requestId: null, createdAt: 0 });
  const credits: Credits = {
    monthlyGrant: 0,
    applyMonthlyGrant: async () => null,
    grantIsCurrent: () => true,
    recentEntries: async () => [],
    setTier: async () => undefined,
    grantPlanPeriod: async () => null,
    async debit(_userId, amount, change) {
      if (balance < amount) throw new InsufficientCreditsError(amount, balance);
      balance = Math.round((balance - amount) * 10_000) / 10_000;
      ledger.push({ amount: -amount, reason: change.reason });
      return entry(-amount);
    },
    async debitWithPendingLine(_userId, amount, change) {
      if (balance < amount) throw new InsufficientCreditsError(amount, balance);
      balance = Math.round((balance - amount) * 10_000) / 10_000;
      const line = (options.holdLine ?? Promise.resolve()).then(() => {
        ledger.push({ amount: -amount, reason: change.reason, startedWithRun: invocations.length > 0 });
        return entry(-amount);
      });
      line.catch(() => undefined);
      return { balanceAfter: balance, line };
    },
    async grant(_userId, amount, change) {
      balance += amount;
      ledger.push({ amount, reason: change.reason });
      return entry(amount);
    },
  };
  const compute: Compute = {
    check: async () => ({ ok: true, violations: [] }),
    invoke(tenantId, invocation, signal) {
      invocations.push({ tenantId, invocation, signal });
      return (options.script ?? succeed)(invocation as ActionInvocation, signal);
    },
  };
  const ports: ExecutionPorts = {
    actions: { get: async (id: string) => actions.get(id) ?? null } as unknown as ActionStore,
    users: {} as UserStore,
    compute,
    clock: { now: () => 1_800_000_000_000 },
    config: parseConfig({ TABLE_PREFIX: 't-', BUCKET_PREFIX: 'b-' }, areas),
    credits,
    keysReader: {
      async readKeys(caller, ownerId, names) {
        keyReads.push({ callerId: caller.userId, ownerId, names });
        if (options.keysFail) throw new Error('KMS unavailable');
        return { openai: 'sk-owner-secret' };
      },
      async readAllKeys() {
        throw new Error('an action receives only the keys it declares');
      },
    },
    usageLogs: {
      async write(input) {
        logs.push(input);
        return {} as UsageLogRecord;
      },
    },
  };
  return { ports, ledger, invocations, logs, keyReads, balance: () => balance };
}

async function* events(...list: RuntimeEvent[]): AsyncIterable<RuntimeEvent> {
  for (const event of list) yield event;
}

function succeed(invocation: ActionInvocation): AsyncIterable<RuntimeEvent> {
  return events(
    { type: 'log', stream: 'stdout', data: 'hello' },
    { type: 'result', statusCode: 200, body: invocation.event },
    { type: 'end', started: true, durationMs: 250, maxRssKb: 20480 },
  );
}

async function failureOf(work: Promise<unknown>) {
  try {
    await work;
  } catch (error) {
    return { error, response: toErrorResponse(error) };
  }
  throw new Error('expected the run to fail');
}

describe('running an action', () => {
  it("writes the hold's ledger line while the code runs, and answers (or fails) only once it is written", async () => {
    // Prepare: ledger lines written when the test says so, or never
    const [okLine, brokenLine] = [deferred(), deferred()];
    const ok = setup({ holdLine: okLine.promise });
    const broken = setup({ holdLine: brokenLine.promise });
    const run = (t: ReturnType<typeof setup>) => runAction(scopeOf(user('owner')), 'act-weather', { city: 'Paris' }, 'router', t.ports);
    // Act
    const answered = run(ok);
    const answeredBeforeLine = await settled(answered);
    const ranBeforeLine = ok.invocations.length;
    okLine.resolve();
    const reply = (await answered) as Reply;
    const lost = run(broken);
    await settled(lost);
    brokenLine.reject(new Error('ledger unavailable'));
    const failure = await failureOf(lost);
    // Assess: the run did not wait for the line, the answer did
    expect(ranBeforeLine).toBe(1);
    expect(answeredBeforeLine).toBe(false);
    expect(reply.meta).toMatchObject({ creditsUsed: 1.05 });
    expect(ok.ledger.map((l) => l.amount)).toEqual([7.425, -8.475]);
    // A hold whose line cannot be written fails the request (500); the run's record and the give-back stay.
    expect(failure.response.status).toBe(500);
    expect(broken.invocations).toHaveLength(1);
    expect(broken.logs[0]).toMatchObject({ status: 'success', creditsUsed: 1.05 });
    expect(broken.ledger.map((l) => l.amount)).toEqual([7.425]);
  });

  it("runs the owner's code for the owner's tenant with the owner's keys, bills the formula and logs without keys", async () => {
    // Prepare
    const t = setup();
    // Act
    const reply = (await runAction(scopeOf(user('owner')), 'act-weather', { city: 'Paris' }, 'router', t.ports)) as Reply;
    // Assess
    expect(reply.data).toEqual({ statusCode: 200, body: { city: 'Paris' } });
    expect(reply.meta).toEqual({ requestId: 'req-1', actionId: 'act-weather', executionTime: 250, memoryMb: 256, creditsUsed: 1.05 });
    const [call] = t.invocations;
    expect(call!.tenantId).toBe('owner');
    expect(call!.invocation).toMatchObject({
      kind: 'action',
      source: SOURCE,
      requestId: 'req-1',
      functionName: 'act-weather',
      timeoutMs: 30_000,
      memoryMb: 256,
      event: { city: 'Paris' },
    });
    expect(JSON.parse((call!.invocation as ActionInvocation).env['SVC_KEYS_JSON']!)).toEqual({ openai: 'sk-owner-secret' });
    expect(t.keyReads).toEqual([{ callerId: 'owner', ownerId: 'owner', names: ['openai'] }]);
    // The worst case (256 MB for 30 s) held, then all but the 1.05 used given back
    expect(t.ledger.map((l) => l.amount)).toEqual([-8.475, 7.425]);
    expect(t.logs).toHaveLength(1);
    expect(t.logs[0]).toMatchObject({
      userId: 'owner',
      resourceId: 'act-weather',
      resourceType: 'action',
      requestType: 'ACTION_RUN',
      status: 'success',
      request: { city: 'Paris' },
      response: { statusCode: 200, body: { city: 'Paris' }, logs: ['hello'] },
      durationMs: 250,
      memoryMb: 256,
      maxMemoryUsedMb: 20,
      creditsUsed: 1.05,
    });
    expect(JSON.stringify(t.logs)).not.toContain('sk-owner-secret');
  });

  it("lets the direct path use the action's own timeout and caps the router path at 120 s", async () => {
    // Prepare
    const t = setup({ actions: [action({ timeoutSec: 300 })] });
    // Act
    await runAction(scopeOf(user('owner')), 'act-weather', { city: 'x' }, 'router', t.ports);
    await runAction(scopeOf(user('owner')), 'act-weather', { city: 'x' }, 'direct', t.ports);
    // Assess
    expect(t.invocations.map((i) => i.invocation.timeoutMs)).toEqual([120_000, 300_000]);
    expect(t.logs.map((l) => l.requestType)).toEqual(['ACTION_RUN', 'ACTION_DIRECT']);
  });

  it('checks access, then required parameters, then credits, before anything runs', async () => {
    // Prepare
    const t = setup({
      actions: [
        action(),
        action({ actionId: 'act-public-dev', visibility: 'public', status: 'development' }),
        action({ actionId: 'act-public', visibility: 'public' }),
      ],
      balance: 0.5,
    });
    // Act
    const missing = await failureOf(runAction(scopeOf(user('owner')), 'act-weather', {}, 'router', t.ports));
    const unknown = await failureOf(runAction(scopeOf(user('owner')), 'act-nope', {}, 'router', t.ports));
    const foreignPrivate = await failureOf(runAction(scopeOf(user('other')), 'act-weather', { city: 'x' }, 'router', t.ports));
    const foreignDevelopment = await failureOf(runAction(scopeOf(user('other')), 'act-public-dev', { city: 'x' }, 'router', t.ports));
    const broke = await failureOf(runAction(scopeOf(user('other')), 'act-public', { city: 'x' }, 'router', t.ports));
    // Assess
    expect(missing.response).toMatchObject({ status: 400, message: 'Missing required parameters: city: is required' });
    expect(unknown.response).toMatchObject({ status: 404, code: 'ACTION_NOT_FOUND' });
    expect(foreignPrivate.response).toMatchObject({ status: 403, code: 'ACCESS_DENIED' });
    expect(foreignDevelopment.response).toMatchObject({ status: 403, code: 'ACCESS_DENIED' });
    expect(broke.response).toMatchObject({ status: 402, code: 'INSUFFICIENT_CREDITS' });
    expect(t.invocations).toHaveLength(0);
    expect(t.logs).toHaveLength(0);
  });

  it('runs a deprecated public action for others and says so in meta, billing the caller', async () => {
    // Prepare
    const t = setup({ actions: [action({ visibility: 'public', status: 'deprecated' })] });
    // Act
    const reply = (await runAction(scopeOf(user('other')), 'act-weather', { city: 'x' }, 'direct', t.ports)) as Reply;
    // Assess
    expect(reply.meta).toMatchObject({ deprecated: true, notice: expect.stringContaining('deprecated') });
    expect(t.logs[0]!.userId).toBe('other');
    expect(t.keyReads[0]).toMatchObject({ callerId: 'other', ownerId: 'owner' });
  });

  it('answers a raising handler with ACTION_EXECUTION_FAILED, still billing and logging the error', async () => {
    // Prepare
    const t = setup({
      script: () => events({ type: 'error', code: 'HANDLER_ERROR', message: "KeyError: 'city'", line: 2 }, { type: 'end', started: true, durationMs: 30 }),
    });
    // Act
    const failed = await failureOf(runAction(scopeOf(user('owner')), 'act-weather', { city: 'x' }, 'router', t.ports));
    // Assess
    expect(failed.response).toMatchObject({ status: 500, code: 'ACTION_EXECUTION_FAILED' });
    expect(t.logs[0]).toMatchObject({
      status: 'error',
      error: { code: 'ACTION_EXECUTION_FAILED', message: "The handler raised KeyError: 'city' (line 2)." },
      creditsUsed: 1,
    });
  });

  it('gives the hold back when the code never started', async () => {
    // Prepare
    const t = setup({
      script: () => events({ type: 'error', code: 'RUNTIME_UNAVAILABLE', message: 'python3 missing' }, { type: 'end', started: false, durationMs: 1 }),
    });
    // Act
    const failed = await failureOf(runAction(scopeOf(user('owner')), 'act-weather', { city: 'x' }, 'router', t.ports));
    // Assess
    expect(failed.response).toMatchObject({ status: 503, code: 'RUNTIME_UNAVAILABLE', message: 'The action runtime is unavailable: python3 missing' });
    expect(t.balance()).toBe(100);
    expect(t.logs[0]).toMatchObject({ status: 'error', creditsUsed: 0 });
  });

  it('gives the credit back and fails when the keys cannot be read', async () => {
    const t = setup({ keysFail: true });
    await expect(runAction(scopeOf(user('owner')), 'act-weather', { city: 'x' }, 'router', t.ports)).rejects.toThrow('KMS unavailable');
    expect(t.balance()).toBe(100);
    expect(t.invocations).toHaveLength(0);
  });

  it("hands the route's signal to the runtime; a run cut by the route deadline is logged as a timeout with that deadline's error", async () => {
    // Prepare: a run that only ends when aborted, as the Compute port promises, and says when it is under way
    const deadline = new AbortController();
    let markStarted: () => void = () => undefined;
    const runStarted = new Promise<void>((resolve) => (markStarted = resolve));
    const t = setup({
      script: (_invocation, signal) =>
        (async function* () {
          const aborted = new Promise((resolve) => signal!.addEventListener('abort', resolve, { once: true }));
          markStarted();
          await aborted;
          yield { type: 'error', code: 'ABORTED', message: 'aborted' } as RuntimeEvent;
          yield { type: 'end', started: true, durationMs: 120_000 } as RuntimeEvent;
        })(),
    });
    // Act
    const running = failureOf(runAction(scopeOf(user('owner'), { signal: deadline.signal }), 'act-weather', { city: 'x' }, 'router', t.ports));
    await runStarted;
    deadline.abort(new TimeoutError('The request did not complete within 120 seconds.'));
    const failed = await running;
    // Assess
    expect(t.invocations[0]!.signal).toBe(deadline.signal);
    expect(failed.error).toBeInstanceOf(PlatformError);
    expect(failed.response).toMatchObject({ status: 504, code: 'TIMEOUT' });
    expect(t.logs[0]).toMatchObject({ status: 'timeout', error: { code: 'TIMEOUT', message: 'The request did not complete within 120 seconds.' } });
  });

  it('treats a run that ended without result or error as an invalid result', async () => {
    const t = setup({ script: () => events({ type: 'end', started: true, durationMs: 5 }) });
    const failed = await failureOf(runAction(scopeOf(user('owner')), 'act-weather', { city: 'x' }, 'router', t.ports));
    expect(failed.response).toMatchObject({ status: 500, code: 'INVALID_HANDLER_RESULT' });
  });

  it('refuses a run whose worst case the balance cannot hold, before running it', async () => {
    // Prepare: enough for the run's likely cost, not for its 8.475 worst case
    const t = setup({ balance: 1.5 });
    // Act
    const refused = await failureOf(runAction(scopeOf(user('owner')), 'act-weather', { city: 'x' }, 'router', t.ports));
    // Assess
    expect(refused.response).toMatchObject({
      status: 402,
      code: 'INSUFFICIENT_CREDITS',
      message: 'This run needs up to 8.475 credits (256 MB for up to 30 s); the balance is 1.5.',
    });
    expect(t.invocations).toHaveLength(0);
    expect(t.balance()).toBe(1.5);
  });
});

describe('running inline code', () => {
  it('needs an alias, runs for the caller as tenant without keys, and logs the code and event', async () => {
    // Prepare
    const t = setup();
    // Act
    const aliasless = await failureOf(runInlineCode(scopeOf(user('u2', { alias: null })), { code: SOURCE, event: {}, timeout: 30, memory: 128 }, t.ports));
    const reply = (await runInlineCode(
      scopeOf(user('u1')),
      { code: SOURCE, event: { a: 1, keys: { forged: 'x' } }, timeout: 5, memory: 512 },
      t.ports,
    )) as Reply;
    // Assess
    expect(aliasless.response).toMatchObject({ status: 403, code: 'ALIAS_REQUIRED' });
    expect(reply.data).toEqual({ statusCode: 200, body: { a: 1 } });
    expect(reply.meta).toMatchObject({ actionId: null, memoryMb: 512, creditsUsed: 1.1 });
    expect(t.invocations[0]).toMatchObject({
      tenantId: 'u1',
      invocation: { functionName: 'inline-code', timeoutMs: 5000, memoryMb: 512, env: { SVC_KEYS_JSON: '{}' } },
    });
    expect(t.keyReads).toEqual([]);
    expect(t.logs[0]).toMatchObject({
      resourceId: 'inline-code',
      requestType: 'ACTION_INLINE',
      request: { code: SOURCE, event: { a: 1 }, timeout: 5, memory: 512 },
    });
  });

  it('refuses code the checker refuses with every violation and its line, before billing', async () => {
    // Prepare
    const t = setup();
    t.ports.compute.check = async () => ({
      ok: false,
      violations: [
        { line: 1, col: 1, message: "import of 'os' is not allowed" },
        { line: 3, col: 5, message: "'eval' is not allowed" },
      ],
    });
    // Act
    const failed = await failureOf(runInlineCode(scopeOf(user('u1')), { code: 'import os\n', event: {}, timeout: 30, memory: 128 }, t.ports));
    // Assess
    expect(failed.response).toMatchObject({
      status: 400,
      code: 'INVALID_PARAMETERS',
      message: "Invalid request body: code: line 1: import of 'os' is not allowed; code: line 3: 'eval' is not allowed",
    });
    expect(t.ledger).toEqual([]);
  });
});

/**
 * Billing follows what the platform observed (whether user code started, its own clock), never
 * what user code says: the runtime stream's `end`, actions, chat and MCP calls.
 */
import type { PublicUrls } from '../../functions/core/http/public-urls.ts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ActionRecord } from '../../functions/actions/action.schema.ts';
import type { ActionStore } from '../../functions/actions/action.store.ts';
import { runAction, type ExecutionPorts } from '../../functions/actions/execution.service.ts';
import type { AgentRecord } from '../../functions/agents/agent.schema.ts';
import { openChat, type ChatEvent, type ChatPorts } from '../../functions/agents/chat.service.ts';
import type { UserActor } from '../../functions/core/auth/actor.ts';
import { parseConfig } from '../../functions/core/config.ts';
import { roundCredits, type Credits, type LedgerEntry } from '../../functions/core/credits.ts';
import { InsufficientCreditsError } from '../../functions/core/errors.ts';
import { toErrorResponse } from '../../functions/core/http/error-response.ts';
import { lineageOf } from '../../functions/core/http/lineage.ts';
import { createLogger } from '../../functions/core/logger.ts';
import type { UsageLogInput, UsageLogRecord } from '../../functions/core/usage-log.ts';
import { callMcpServer, type McpEndpointPorts } from '../../functions/mcp/endpoint.service.ts';
import type { McpServerRecord } from '../../functions/mcp/mcp.schema.ts';
import type { Compute, Invocation, RuntimeEvent } from '../../functions/runtimes/compute.ts';
import type { McpHttpResponse } from '../../functions/runtimes/mcp-runtime.ts';
import { errorEvent, notStartedEnd, runtimeEvents, type EventStreamOptions } from '../../functions/runtimes/runtime-stream.ts';
import { manualTimers } from '../support/manual-timers.ts';
import { scopeOf } from '../support/request-scope.ts';
import { areas } from '../../lib/manifest/areas.ts';

const LOCAL_URLS: PublicUrls = {
  baseUrl: 'http://local',
  streamUrl: 'http://local',
  mcpUrl: 'http://local',
  voiceUrl: 'ws://local',
  cdnUrl: 'http://local',
  siteUrl: 'http://local',
  codeUrl: 'http://local',
};

const encoder = new TextEncoder();
const line = (o: unknown) => encoder.encode(JSON.stringify(o) + '\n');

function user(userId: string): UserActor {
  return { kind: 'user', userId, alias: userId, isAdmin: false, via: 'user-token', tokenId: null, scope: 'full', roleKeys: null };
}

/** A balance with conditional debits, as the real one, and its ledger. */
function wallet(initial: number) {
  const state = { balance: initial, ledger: [] as { amount: number; reason: string }[] };
  const entry = (amount: number): LedgerEntry => ({
    userId: 'x',
    entryId: 'e',
    amount,
    balanceAfter: state.balance,
    reason: '',
    requestId: null,
    createdAt: 0,
  });
  const credits: Credits = {
    monthlyGrant: 0,
    applyMonthlyGrant: async () => null,
    grantIsCurrent: () => true,
    recentEntries: async () => [],
    setTier: async () => undefined,
    grantPlanPeriod: async () => null,
    async debit(_userId, amount, change) {
      if (state.balance < amount) throw new InsufficientCreditsError(amount, state.balance);
      state.balance = roundCredits(state.balance - amount);
      state.ledger.push({ amount: -amount, reason: change.reason });
      return entry(-amount);
    },
    async debitWithPendingLine(userId, amount, change) {
      const line = await this.debit(userId, amount, change);
      return { balanceAfter: line.balanceAfter, line: Promise.resolve(line) };
    },
    async grant(_userId, amount, change) {
      state.balance = roundCredits(state.balance + amount);
      state.ledger.push({ amount, reason: change.reason });
      return entry(amount);
    },
  };
  return { state, credits };
}

function fakeCompute(script: (invocation: Invocation, signal?: AbortSignal) => AsyncIterable<RuntimeEvent>): Compute {
  return { check: async () => ({ ok: true, violations: [] }), invoke: (_tenantId, invocation, signal) => script(invocation, signal) };
}

async function* events(...list: RuntimeEvent[]): AsyncIterable<RuntimeEvent> {
  for (const event of list) yield event;
}

async function failureOf(work: Promise<unknown>) {
  try {
    await work;
  } catch (error) {
    return toErrorResponse(error);
  }
  throw new Error('expected a failure');
}

afterEach(() => {
  vi.useRealTimers();
});

describe("the runtime stream's end, as the platform observed it", () => {
  const options = (overrides: Partial<EventStreamOptions> = {}): EventStreamOptions => ({
    startedAt: Date.now(),
    classifyFailure: (error) => errorEvent('RUNTIME_CRASHED', String(error)),
    truncated: () => errorEvent('RUNTIME_CRASHED', 'cut short'),
    drainMs: 10,
    ...overrides,
  });

  async function all(source: AsyncIterable<Uint8Array>, opts: EventStreamOptions): Promise<RuntimeEvent[]> {
    const out: RuntimeEvent[] = [];
    for await (const event of runtimeEvents(source, opts)) out.push(event);
    return out;
  }

  it("says a run started once the runtime's start came, and times it by the platform's clock, whatever error the run claims", async () => {
    // Prepare: 8 s pass between the start and a forged "platform" error with a 3 ms runtime figure
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(1_000_000);
    const opts = options();
    const body = (async function* () {
      yield line({ type: 'start', requestId: 'r', pid: 7 });
      vi.setSystemTime(1_008_000);
      yield line({ type: 'error', code: 'RUNTIME_UNAVAILABLE', message: 'not my fault' });
      yield line({ type: 'end', durationMs: 3, maxRssKb: 2048, exitCode: 0 });
    })();
    // Act
    const got = await all(body, opts);
    // Assess
    expect(got).toEqual([
      { type: 'error', code: 'RUNTIME_UNAVAILABLE', message: 'not my fault' },
      { type: 'end', started: true, durationMs: 8000, runtimeDurationMs: 3, maxRssKb: 2048 },
    ]);
  });

  it('says a run refused before its start did not start, and a run cut after its start did', async () => {
    // Prepare
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(2_000_000);
    const refused = (async function* () {
      yield line({ type: 'error', code: 'SOURCE_REJECTED', message: 'no' });
      yield line({ type: 'end', durationMs: 0 });
    })();
    const cut = (async function* () {
      yield line({ type: 'start', pid: 9 });
      vi.setSystemTime(2_000_500);
      throw new Error('socket reset');
    })();
    // Act
    const [refusedEvents, cutEvents] = [await all(refused, options()), await all(cut, options())];
    // Assess
    expect(refusedEvents.at(-1)).toEqual({ type: 'end', started: false, durationMs: 0, runtimeDurationMs: 0 });
    expect(cutEvents.map((e) => e.type)).toEqual(['error', 'end']);
    expect(cutEvents.at(-1)).toEqual({ type: 'end', started: true, durationMs: 500 });
    expect(notStartedEnd(Date.now() - 40)).toEqual({ type: 'end', started: false, durationMs: 40 });
  });
});

function action(overrides: Partial<ActionRecord> = {}): ActionRecord {
  return {
    actionId: 'act-billing',
    ownerId: 'owner',
    actionName: 'Billing',
    nameLower: 'billing',
    description: 'd',
    runtime: 'python3.12',
    sourceCode: 'def handler(event, context):\n    return {"statusCode": 200, "body": 1}\n',
    category: 'c',
    visibility: 'public',
    status: 'active',
    memoryMb: 1024,
    timeoutSec: 30,
    tags: [],
    parameters: [],
    keysNeeded: [],
    createdAt: 1,
    updatedAt: 1,
    ...overrides,
  };
}

function actionPorts(balance: number, compute: Compute, record = action()) {
  const { state, credits } = wallet(balance);
  const logs: UsageLogInput[] = [];
  const invocations: Invocation[] = [];
  const ports: ExecutionPorts = {
    actions: { get: async (id: string) => (id === record.actionId ? record : null) } as unknown as ActionStore,
    users: {} as ExecutionPorts['users'],
    compute: { check: compute.check, invoke: (t, i, s) => (invocations.push(i), compute.invoke(t, i, s)) },
    clock: { now: () => 1_800_000_000_000 },
    config: parseConfig({ TABLE_PREFIX: 't-', BUCKET_PREFIX: 'b-' }, areas),
    credits,
    keysReader: { readKeys: async () => ({}), readAllKeys: async () => ({}) },
    usageLogs: {
      async write(input) {
        logs.push(input);
        return {} as UsageLogRecord;
      },
    },
  };
  return { ports, state, logs, invocations };
}

const lineage = lineageOf('req-1', undefined);

describe('actions: the worst case held, the time observed billed', () => {
  it('bills a run that started for its 8 s at 1024 MB although it ended claiming RUNTIME_UNAVAILABLE', async () => {
    // Prepare
    const t = actionPorts(
      100,
      fakeCompute(() => events(errorEvent('RUNTIME_UNAVAILABLE', 'forged by the child'), { type: 'end', started: true, durationMs: 8000 })),
    );
    // Act
    const failed = await failureOf(runAction(scopeOf(user('caller')), 'act-billing', {}, 'router', t.ports));
    // Assess: 1 + 1 × (8 s − 0.1 s) = 8.9, held 30.9 and 22 given back
    expect(failed.status).toBe(503);
    expect(t.logs[0]).toMatchObject({ status: 'error', creditsUsed: 8.9 });
    expect(t.state.balance).toBe(91.1);
    expect(t.state.ledger.map((l) => l.amount)).toEqual([-30.9, 22]);
  });

  it('bills nothing for a run whose code never started, and gives the whole hold back', async () => {
    // Prepare
    const t = actionPorts(
      100,
      fakeCompute(() => events(errorEvent('TOO_MANY_INVOCATIONS', 'at capacity'), { type: 'end', started: false, durationMs: 2 })),
    );
    // Act
    const failed = await failureOf(runAction(scopeOf(user('caller')), 'act-billing', {}, 'router', t.ports));
    // Assess
    expect(failed.status).toBe(429);
    expect(t.logs[0]).toMatchObject({ creditsUsed: 0 });
    expect(t.state.balance).toBe(100);
  });

  it('refuses a run whose worst case is above the balance with 402 naming it, before running and without touching the balance', async () => {
    // Prepare
    const t = actionPorts(
      3,
      fakeCompute(() => events({ type: 'result', statusCode: 200, body: 1 }, { type: 'end', started: true, durationMs: 10 })),
    );
    // Act
    const refused = await failureOf(runAction(scopeOf(user('caller')), 'act-billing', {}, 'router', t.ports));
    // Assess
    expect(refused).toMatchObject({
      status: 402,
      code: 'INSUFFICIENT_CREDITS',
      message: 'This run needs up to 30.9 credits (1024 MB for up to 30 s); the balance is 3.',
    });
    expect(t.invocations).toHaveLength(0);
    expect(t.state).toEqual({ balance: 3, ledger: [] });
  });

  it('holds the worst case of the path (the router caps at 120 s) and never bills past it', async () => {
    // Prepare: a 300 s action through the router; the run reports more time than its limit
    const t = actionPorts(
      200,
      fakeCompute(() => events(errorEvent('TIMEOUT', 'too long'), { type: 'end', started: true, durationMs: 125_000 })),
      action({ timeoutSec: 300, memoryMb: 128 }),
    );
    // Act
    await failureOf(runAction(scopeOf(user('caller')), 'act-billing', {}, 'router', t.ports));
    // Assess: 1 + 0.125 × 119.9
    expect(t.state.ledger.map((l) => l.amount)).toEqual([-15.9875]);
    expect(t.logs[0]).toMatchObject({ status: 'timeout', creditsUsed: 15.9875 });
    expect(t.state.balance).toBe(184.0125);
  });

  it('leaves the balance at exactly before − creditsUsed for a run that finishes', async () => {
    // Prepare
    const t = actionPorts(
      40,
      fakeCompute(() => events({ type: 'result', statusCode: 200, body: 'ok' }, { type: 'end', started: true, durationMs: 1234.5 })),
    );
    // Act
    const reply = await runAction(scopeOf(user('caller')), 'act-billing', {}, 'direct', t.ports);
    // Assess: 1 + 1 × 1.2 s
    expect(reply.meta).toMatchObject({ creditsUsed: 2.2, executionTime: 1234.5 });
    expect(t.state.balance).toBe(37.8);
  });
});

function agent(overrides: Partial<AgentRecord> = {}): AgentRecord {
  return {
    agentId: '00000000-0000-4000-8000-000000000001',
    ownerId: 'owner',
    agentName: 'metered',
    description: 'd',
    sourceCode: 'def create_agent():\n    return None, []\n',
    agentType: 'text',
    visibility: 'public',
    sourceVisibility: 'visible',
    status: 'active',
    runtime: 'python3.12',
    memoryMb: 1024,
    timeoutSec: 300,
    initialPrompt: null,
    invocationMonth: null,
    invocationsThisMonth: 0,
    createdAt: 1,
    updatedAt: 1,
    ...overrides,
  };
}

function chatPorts(balance: number, compute: Compute, tickSec = 0.5) {
  const { state, credits } = wallet(balance);
  const logs: UsageLogInput[] = [];
  const timers = manualTimers();
  const record = agent();
  const ports = {
    agents: { get: async () => record, countInvocation: async () => undefined },
    conversations: { get: async () => null, messagesOf: async () => [], save: async () => true },
    users: {},
    compute,
    clock: { now: () => 1_800_000_000_000 },
    config: parseConfig({ TABLE_PREFIX: 't-', BUCKET_PREFIX: 'b-', CHAT_BILLING_TICK_SEC: String(tickSec) }, areas),
    keys: { list: async () => [] },
    keysReader: { readKeys: async () => ({}), readAllKeys: async () => ({}) },
    credits,
    usageLogs: {
      async write(input: UsageLogInput) {
        logs.push(input);
        return {} as UsageLogRecord;
      },
    },
    log: createLogger('silent'),
    runTokens: { mint: async () => 'svc_run_token-for-the-test', verify: async () => null },
    meterTimers: timers.timers,
  } as unknown as ChatPorts;
  return { ports, state, logs, timers, agentId: record.agentId };
}

async function drain(run: AsyncGenerator<ChatEvent>): Promise<ChatEvent[]> {
  const out: ChatEvent[] = [];
  for await (const event of run) out.push(event);
  return out;
}

describe('chat: metered while it runs, charged only when it started', () => {
  it("writes the first credit's ledger line while the run starts, ends only once it is written, and logs a line that failed", async () => {
    // Prepare: ledger lines that are written when the test says so, or fail
    let finishLine: () => void = () => undefined;
    const pending = new Promise<void>((resolve) => (finishLine = resolve));
    const errors: string[] = [];
    const compute = fakeCompute(() => events({ type: 'text', data: 'hi' }, { type: 'end', started: true, durationMs: 10 } as RuntimeEvent));
    const withLine = (lineWrite: Promise<void>) => {
      const t = chatPorts(5, compute);
      const debit = t.ports.credits.debit.bind(t.ports.credits);
      const log = { error: (message: string) => void errors.push(message), warn: () => undefined, info: () => undefined, debug: () => undefined };
      const ports = {
        ...t.ports,
        credits: {
          ...t.ports.credits,
          debitWithPendingLine: async (...args: Parameters<typeof debit>) => {
            const entry = await debit(...args);
            return { balanceAfter: entry.balanceAfter, line: lineWrite.then(() => entry) };
          },
        },
      } as ChatPorts;
      return { ...t, ports, scope: scopeOf(user('caller'), { lineage: lineage, urls: LOCAL_URLS, log: { ...log, child: () => log } as never }) };
    };
    const slow = withLine(pending);
    const refused = Promise.reject(new Error('ledger unavailable'));
    refused.catch(() => undefined); // handled once the chat uses it
    const failing = withLine(refused);
    // Act
    const session = await openChat(slow.scope, slow.agentId, { prompt: 'x' }, slow.ports);
    const run = session.run();
    const first = await run.next();
    const rest = drain(run);
    let ended = false;
    void rest.then(() => (ended = true));
    await new Promise((resolve) => setImmediate(resolve));
    const endedBeforeLine = ended;
    finishLine();
    const got = await rest;
    const failed = await drain((await openChat(failing.scope, failing.agentId, { prompt: 'x' }, failing.ports)).run());
    // Assess: the run did not wait for the line, the end of the chat did
    expect(first.value).toEqual({ type: 'text', data: 'hi' });
    expect(endedBeforeLine).toBe(false);
    expect(got.at(-1)?.type).toBe('metrics');
    expect(slow.logs).toHaveLength(1);
    // A line that could not be written: logged; the chat, its bill and its record stand.
    expect(errors).toEqual(['chat ledger line not written']);
    expect(failed.map((e) => e.type)).toEqual(['text', 'metrics']);
    expect(failing.state.balance).toBe(4);
    expect(failing.logs[0]).toMatchObject({ status: 'success', creditsUsed: 1 });
  });

  it('stops a run when the balance cannot pay more run time, ends with INSUFFICIENT_CREDITS, and never goes below zero', async () => {
    // Prepare: a run that goes on until it is aborted, as the Compute port promises
    let elapsed = 0;
    const compute = fakeCompute((_invocation, signal) =>
      (async function* () {
        yield { type: 'text', data: 'working' } as RuntimeEvent;
        await new Promise((resolve) => signal!.addEventListener('abort', resolve, { once: true }));
        yield errorEvent('ABORTED', 'the invocation was aborted');
        yield { type: 'end', started: true, durationMs: elapsed } as RuntimeEvent;
      })(),
    );
    const t = chatPorts(2, compute);
    const session = await openChat(scopeOf(user('caller'), { lineage: lineage, urls: LOCAL_URLS }), t.agentId, { prompt: 'go on' }, t.ports);
    const run = session.run();
    const first = await run.next(); // the run is going: its meter has started
    // Act: 1 credit opens the chat (the first second); the other pays 0.5 s at 1 s and 1.5 s
    const running = drain(run);
    for (const at of [1000, 1500, 2000]) {
      elapsed = at;
      await t.timers.advanceTo(at);
    }
    const got = await running;
    // Assess
    expect(first.value).toEqual({ type: 'text', data: 'working' });
    const error = got.find((e) => e.type === 'error');
    expect(error && error.type === 'error' ? toErrorResponse(error.error) : null).toMatchObject({
      status: 402,
      code: 'INSUFFICIENT_CREDITS',
      message: expect.stringContaining('stopped after 2 s'),
    });
    expect(got.at(-1)?.type).toBe('metrics');
    expect(t.state.balance).toBe(0);
    expect(t.state.ledger.map((l) => l.amount)).toEqual([-1, -0.5, -0.5]);
    expect(t.logs[0]).toMatchObject({ status: 'error', creditsUsed: 2, error: { code: 'INSUFFICIENT_CREDITS' } });
  });

  it('charges a run that started whatever code it ended with, and nothing for one that never started', async () => {
    // Prepare
    const forged = chatPorts(
      10,
      fakeCompute(() => events(errorEvent('RUNTIME_UNAVAILABLE', 'not me'), { type: 'end', started: true, durationMs: 300 })),
    );
    const refused = chatPorts(
      10,
      fakeCompute(() => events(errorEvent('RUNTIME_UNAVAILABLE', 'no runtime'), { type: 'end', started: false, durationMs: 5 })),
    );
    // Act
    await drain((await openChat(scopeOf(user('caller'), { lineage: lineage, urls: LOCAL_URLS }), forged.agentId, { prompt: 'x' }, forged.ports)).run());
    await drain((await openChat(scopeOf(user('caller'), { lineage: lineage, urls: LOCAL_URLS }), refused.agentId, { prompt: 'x' }, refused.ports)).run());
    // Assess
    expect(forged.state.balance).toBe(9);
    expect(forged.logs[0]).toMatchObject({ creditsUsed: 1 });
    expect(refused.state.balance).toBe(10);
    expect(refused.logs[0]).toMatchObject({ creditsUsed: 0 });
  });

  it("gives the first credit back and runs nothing when the owner's keys cannot be read (they are read alongside the debit)", async () => {
    // Prepare
    let invoked = 0;
    const t = chatPorts(
      5,
      fakeCompute(() => {
        invoked++;
        return events({ type: 'end', started: true, durationMs: 1 });
      }),
    );
    const ports = {
      ...t.ports,
      keysReader: { readKeys: async () => ({}), readAllKeys: async () => Promise.reject(new Error('KMS unavailable')) },
    } as ChatPorts;
    // Act
    const opened = openChat(scopeOf(user('caller'), { lineage: lineage, urls: LOCAL_URLS }), t.agentId, { prompt: 'x' }, ports);
    // Assess
    await expect(opened).rejects.toThrow('KMS unavailable');
    expect(invoked).toBe(0);
    expect(t.state.balance).toBe(5);
    expect(t.state.ledger).toEqual([
      { amount: -1, reason: 'chat metered' },
      { amount: 1, reason: 'chat metered refund: the run never started' },
    ]);
  });
});

describe('MCP calls', () => {
  function mcpPorts(answer: McpHttpResponse) {
    const grants: number[] = [];
    const records: UsageLogInput[] = [];
    const server: McpServerRecord = {
      serverId: 'mcp-slow',
      ownerId: 'owner',
      serverName: 'slow',
      description: 'd',
      visibility: 'public',
      sourceVisibility: 'visible',
      authorPricing: null,
      latestVersion: 1,
      tools: ['wait'],
      sourceSha256: 'x',
      sourceSizeBytes: 1,
      createdAt: 1,
      updatedAt: 1,
    };
    let now = 1000;
    const ports = {
      config: parseConfig({ TABLE_PREFIX: 't-', BUCKET_PREFIX: 'b-' }, areas),
      clock: { now: () => now },
      log: createLogger('silent'),
      mcpServers: { get: async () => server, getVersion: async () => ({ serverId: 'mcp-slow', version: 1, sourceCode: 'src' }) },
      users: {},
      keys: { list: async () => [] },
      keysReader: { readKeys: async () => ({}), readAllKeys: async () => ({}) },
      credits: {
        debitWithPendingLine: async () => ({ balanceAfter: 0, line: Promise.resolve({}) }),
        grant: async (_u: string, amount: number) => void grants.push(amount),
      },
      usageLogs: { write: async (input: UsageLogInput) => void records.push(input) },
      mcpRuntime: {
        inspect: async () => ({ ok: true, tools: [] }),
        handle: async () => {
          now += 30_000;
          return answer;
        },
      },
    } as unknown as McpEndpointPorts;
    return { ports, grants, records };
  }

  it('bills a call that timed out in the runtime for the time it used, and never refunds it', async () => {
    // Prepare
    const t = mcpPorts({
      status: 504,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'did not answer within 30000 ms' } }),
    });
    const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'wait', arguments: {} } }));
    const request = {
      method: 'POST',
      path: '/mcp/mcp-slow',
      pathParams: {},
      query: {},
      headers: { 'content-type': 'application/json' },
      body,
      sourceIp: '127.0.0.1',
      requestId: 'r',
      baseUrl: 'http://local',
    };
    // Act
    const reply = await callMcpServer(scopeOf(user('caller')), { serverId: 'mcp-slow' }, undefined, request, t.ports);
    // Assess
    expect(reply.status).toBe(504);
    expect(t.grants).toEqual([]);
    expect(t.records[0]).toMatchObject({ status: 'timeout', creditsUsed: 1, durationMs: 30_000 });
  });
});

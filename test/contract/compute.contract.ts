/**
 * The Compute port's contract (functions/runtimes/compute.ts), one suite every adapter must pass:
 * what a run streams and in which order, how it ends (`end.started` and `end.durationMs` are what
 * billing trusts), errors, limits, abort, env delivery and tenant isolation. compute.test.ts runs it
 * against the local adapter and against the Lambda adapter in front of the loopback Lambda stand-in.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ActionInvocation, AgentInvocation, Compute, RuntimeEvent } from '../../functions/runtimes/compute.ts';

/** A working adapter, and what the suite needs to observe and disturb it from outside the port. */
export interface ComputeUnderTest {
  readonly compute: Compute;
  /** Ids of the live execution environments (processes) that hold `tenantId`'s runtime. */
  environmentsOf(tenantId: string): string[];
  /** Kills every process that runs `tenantId`'s code, as a crash of the runtime would. */
  crashEnvironmentsOf(tenantId: string): void;
  close(): Promise<void>;
}

export interface ComputeContractSetup {
  start(): Promise<ComputeUnderTest>;
  /** An adapter of the same kind that can get no runtime at all (no sandbox, no function). */
  startUnavailable(): Promise<{ readonly compute: Compute; close(): Promise<void> }>;
}

/**
 * Streams its prompt `"<delay> word word ..."` word by word, sleeping `delay` seconds after each;
 * a word `tool:<name>` is a tool start instead (repeated, as Strands repeats it while input streams).
 */
const WORDS_AGENT = `import time


class WordsAgent:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        words = prompt.split(" ")
        delay = float(words[0])
        for word in words[1:]:
            if word.startswith("tool:"):
                yield {"current_tool_use": {"toolUseId": "id-" + word[5:], "name": word[5:]}}
                yield {"current_tool_use": {"toolUseId": "id-" + word[5:], "name": word[5:]}}
            else:
                yield {"data": word}
            time.sleep(delay)
        yield {"result": {"metrics": {"cycle_count": 2, "accumulated_usage": {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}}}}


def create_agent():
    return WordsAgent(), []
`;

/** Says it started, then sleeps for the number of seconds in the prompt (a run that stays silent). */
export const SILENT_AGENT = `import time


class SilentAgent:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        yield {"data": "started"}
        time.sleep(float(prompt))
        yield {"data": "woke up"}


def create_agent():
    return SilentAgent(), []
`;

/** Prints a line, then answers with what the run was given. */
const ECHO_ACTION = `import json


def handler(event, context):
    print("got " + event["text"])
    return {
        "statusCode": 201,
        "headers": {"X-Echo": "yes"},
        "body": {
            "echo": event["text"],
            "functionName": context.function_name,
            "requestId": context.aws_request_id,
            "memoryMb": context.memory_limit_in_mb,
            "keys": event["keys"],
            "globalKeys": json.loads(SVC_KEYS_JSON),
        },
    }
`;

const SLEEPING_ACTION = `import time


def handler(event, context):
    time.sleep(event["seconds"])
    return {"statusCode": 200, "body": event.get("tag", "slept")}
`;

const RAISING_ACTION = `def handler(event, context):
    raise ValueError("the key is " + event["keys"]["svc"])
`;

const ALLOCATING_ACTION = `def handler(event, context):
    data = "x" * (event["mb"] * 1024 * 1024)
    return {"statusCode": 200, "body": len(data)}
`;

const REJECTED_SOURCE = 'import json\nimport os\n\n\ndef handler(event, context):\n    return {"statusCode": 200, "body": eval("1")}\n';

let sequence = 0;

function agentRun(prompt: string, overrides: Partial<AgentInvocation> = {}): AgentInvocation {
  sequence++;
  return {
    kind: 'agent',
    source: WORDS_AGENT,
    requestId: `req-agent-${sequence}`,
    functionName: 'contract-agent',
    timeoutMs: 20_000,
    memoryMb: 256,
    env: {},
    allowHosts: [],
    prompt,
    messages: [],
    ...overrides,
  };
}

function actionRun(source: string, event: Record<string, unknown>, overrides: Partial<ActionInvocation> = {}): ActionInvocation {
  sequence++;
  return {
    kind: 'action',
    source,
    requestId: `req-action-${sequence}`,
    functionName: 'contract-action',
    timeoutMs: 10_000,
    memoryMb: 128,
    env: {},
    allowHosts: [],
    event,
    ...overrides,
  };
}

interface Timed {
  readonly event: RuntimeEvent;
  /** performance.now() when the event arrived. */
  readonly at: number;
}

interface Run {
  readonly events: Timed[];
  /** performance.now() just before `invoke` was called. */
  readonly calledAt: number;
}

/** Every event with the time it arrived; `onEvent` may act mid-stream (abort, kill). */
async function collect(events: AsyncIterable<RuntimeEvent>, onEvent?: (event: RuntimeEvent) => void): Promise<Timed[]> {
  const out: Timed[] = [];
  for await (const event of events) {
    out.push({ event, at: performance.now() });
    onEvent?.(event);
  }
  return out;
}

async function run(
  compute: Compute,
  tenantId: string,
  invocation: AgentInvocation | ActionInvocation,
  options: { signal?: AbortSignal; onEvent?: (event: RuntimeEvent) => void } = {},
): Promise<Run> {
  const calledAt = performance.now();
  const events = await collect(compute.invoke(tenantId, invocation, options.signal), options.onEvent);
  return { events, calledAt };
}

const types = (r: Run) => r.events.map((t) => t.event.type);
const texts = (r: Run) => r.events.flatMap((t) => (t.event.type === 'text' ? [t.event.data] : []));
const ofType = <T extends RuntimeEvent['type']>(r: Run, type: T) =>
  r.events.map((t) => t.event).filter((e): e is Extract<RuntimeEvent, { type: T }> => e.type === type);
const errorOf = (r: Run) => ofType(r, 'error')[0];

/** The port's shape of every run: exactly one `end`, last, and at most one `error`. */
function endOf(r: Run): Extract<RuntimeEvent, { type: 'end' }> {
  expect(ofType(r, 'end')).toHaveLength(1);
  expect(ofType(r, 'error').length).toBeLessThanOrEqual(1);
  const last = r.events.at(-1)?.event;
  if (last?.type !== 'end') throw new Error(`the last event is ${last?.type ?? 'missing'}, not end`);
  return last;
}

/** Wall time of a run, from the call to its `end`. */
const wallMs = (r: Run) => r.events.at(-1)!.at - r.calledAt;

export function describeComputeContract(adapterName: string, setup: ComputeContractSetup): void {
  describe(`Compute contract: ${adapterName}`, () => {
    let under: ComputeUnderTest;
    let compute: Compute;

    beforeAll(async () => {
      under = await setup.start();
      compute = under.compute;
    });
    afterAll(async () => {
      await under?.close();
    });

    it("streams an agent's events in order, each as it happens: text and tools, metrics, messages, end", async () => {
      // Prepare: four items 0.15 s apart, one of them a tool start, and an earlier turn
      const history = [{ role: 'user' as const, content: [{ text: 'earlier' }] }];

      // Act
      const r = await run(compute, 'tenant-a', agentRun('0.15 one tool:weather two three', { messages: history }));

      // Assess: order and content
      endOf(r);
      expect(types(r)).toEqual(['text', 'tool', 'text', 'text', 'metrics', 'messages', 'end']);
      expect(texts(r)).toEqual(['one', 'two', 'three']);
      expect(ofType(r, 'tool')).toEqual([{ type: 'tool', name: 'weather', toolUseId: 'id-weather' }]);
      expect(ofType(r, 'metrics')[0]).toMatchObject({ totalCycles: 2, totalTokens: 7, inputTokens: 3, outputTokens: 4, toolsUsed: ['weather'] });
      expect(ofType(r, 'messages')[0]!.messages).toEqual([
        ...history,
        { role: 'user', content: [{ text: '0.15 one tool:weather two three' }] },
        { role: 'assistant', content: [{ text: 'onetwothree' }] },
      ]);
      // Assess: nothing was held back until the end. The agent sleeps 3 x 0.15 s between its first
      // text and its return, so the end cannot come sooner than that after the first text.
      const firstText = r.events[0]!.at;
      expect(r.events.at(-1)!.at - firstText).toBeGreaterThanOrEqual(3 * 150 * 0.9);
      for (let i = 1; i < 4; i++) expect(r.events[i]!.at).toBeGreaterThan(r.events[i - 1]!.at);
    });

    it('runs an action: printed lines as log events, then its result with status, headers and body; context from the invocation', async () => {
      // Act
      const r = await run(compute, 'tenant-a', actionRun(ECHO_ACTION, { text: 'hi' }, { functionName: 'echo-action', requestId: 'req-echo', memoryMb: 192 }));

      // Assess
      endOf(r);
      expect(types(r)).toEqual(['log', 'result', 'end']);
      expect(ofType(r, 'log')[0]).toEqual({ type: 'log', stream: 'stdout', data: 'got hi' });
      expect(ofType(r, 'result')[0]).toEqual({
        type: 'result',
        statusCode: 201,
        headers: { 'X-Echo': 'yes' },
        body: { echo: 'hi', functionName: 'echo-action', requestId: 'req-echo', memoryMb: 192, keys: {}, globalKeys: {} },
      });
    });

    it('leaves the cold start of a runtime out of the duration', async () => {
      // Prepare: tenant-b has no runtime yet (this test comes before the others that use it)
      expect(under.environmentsOf('tenant-b')).toEqual([]);

      // Act: the tenant's first run, which returns at once
      const r = await run(compute, 'tenant-b', actionRun(SLEEPING_ACTION, { seconds: 0 }));

      // Assess: starting a runtime takes hundreds of milliseconds; the run itself took a few
      const end = endOf(r);
      expect(end.started).toBe(true);
      expect(wallMs(r) - end.durationMs).toBeGreaterThanOrEqual(100);
    });

    it("delivers the run's env to its code only, and scrubs its values from what the run reports", async () => {
      // Prepare: two tenants' runs at once, each with its own keys
      const keysOf = (value: string) => ({ SVC_KEYS_JSON: JSON.stringify({ svc: value }) });

      // Act
      const [a, b] = await Promise.all([
        run(compute, 'tenant-a', actionRun(ECHO_ACTION, { text: 'a' }, { env: keysOf('key-of-a-0123456789') })),
        run(compute, 'tenant-b', actionRun(ECHO_ACTION, { text: 'b' }, { env: keysOf('key-of-b-0123456789') })),
      ]);
      const raised = await run(compute, 'tenant-a', actionRun(RAISING_ACTION, {}, { env: keysOf('leaky-secret-0123456789') }));

      // Assess: each run saw its own keys, as the global and as event.keys
      expect(ofType(a, 'result')[0]?.body).toMatchObject({ keys: { svc: 'key-of-a-0123456789' }, globalKeys: { svc: 'key-of-a-0123456789' } });
      expect(ofType(b, 'result')[0]?.body).toMatchObject({ keys: { svc: 'key-of-b-0123456789' }, globalKeys: { svc: 'key-of-b-0123456789' } });
      // Assess: the raised value is replaced, wherever the error goes next
      expect(endOf(raised).started).toBe(true);
      expect(errorOf(raised)).toMatchObject({ code: 'HANDLER_ERROR', errorType: 'ValueError', line: 2, message: 'ValueError: the key is [REDACTED]' });
      expect(JSON.stringify(raised.events)).not.toContain('leaky-secret-0123456789');
    });

    it("ends a run that started with started: true and its duration from the runtime's start, by this side's clock", async () => {
      // Prepare: a warm runtime
      await run(compute, 'tenant-a', actionRun(SLEEPING_ACTION, { seconds: 0 }));

      // Act: a run of 0.3 s
      const r = await run(compute, 'tenant-a', actionRun(SLEEPING_ACTION, { seconds: 0.3 }));

      // Assess
      const end = endOf(r);
      expect(types(r)).toEqual(['result', 'end']);
      expect(end.started).toBe(true);
      expect(end.durationMs).toBeGreaterThanOrEqual(300 * 0.9);
      expect(end.durationMs).toBeLessThanOrEqual(wallMs(r) + 1);
      expect(end.runtimeDurationMs).toEqual(expect.any(Number));
    });

    it('reports a rejected source as SOURCE_REJECTED with every violation, a run that never started', async () => {
      // Act
      const r = await run(compute, 'tenant-a', actionRun(REJECTED_SOURCE, {}));

      // Assess
      const end = endOf(r);
      expect(types(r)).toEqual(['error', 'end']);
      expect(errorOf(r)).toMatchObject({ code: 'SOURCE_REJECTED', violations: [{ line: 2 }, { line: 6 }] });
      expect(end.started).toBe(false);
      expect(end.durationMs).toBeLessThanOrEqual(wallMs(r) + 1);
    });

    it("refuses an invocation outside the protocol's limits with INVALID_PARAMETERS, before anything starts", async () => {
      // Act: 8 MB is below the smallest memory budget (16 MB)
      const r = await run(compute, 'tenant-a', actionRun(SLEEPING_ACTION, { seconds: 0 }, { memoryMb: 8 }));

      // Assess
      expect(types(r)).toEqual(['error', 'end']);
      expect(errorOf(r)).toMatchObject({ code: 'INVALID_PARAMETERS', message: expect.stringContaining('memoryMb') });
      expect(endOf(r).started).toBe(false);
    });

    it('stops a run at its timeout with TIMEOUT, billed as started for the time it ran', async () => {
      // Act: a 0.8 s limit on a run of 10 s
      const r = await run(compute, 'tenant-a', actionRun(SLEEPING_ACTION, { seconds: 10 }, { timeoutMs: 800 }));

      // Assess
      const end = endOf(r);
      expect(types(r)).toEqual(['error', 'end']);
      expect(errorOf(r)).toMatchObject({ code: 'TIMEOUT' });
      expect(end.started).toBe(true);
      // Stopped at its timeout, not before: the deadline runs from the request's arrival, billing
      // from the run's start, so a start made late by a busy machine (a fork at user code's lower
      // priority) comes off the billed time; the two together cover the timeout.
      expect(wallMs(r)).toBeGreaterThanOrEqual(800 * 0.9);
      expect(end.durationMs).toBeGreaterThan(0);
      expect(end.durationMs).toBeLessThanOrEqual(wallMs(r) + 1);
      expect(wallMs(r)).toBeLessThan(5000);
    });

    it('enforces the memory budget with MEMORY_LIMIT_EXCEEDED, and lets a run within it finish', async () => {
      // Act: 1 GB and 160 MB against a budget of 256 MB (more than an action's default of 128 MB)
      const over = await run(compute, 'tenant-a', actionRun(ALLOCATING_ACTION, { mb: 1024 }, { memoryMb: 256 }));
      const within = await run(compute, 'tenant-a', actionRun(ALLOCATING_ACTION, { mb: 160 }, { memoryMb: 256 }));

      // Assess
      expect(types(over)).toEqual(['error', 'end']);
      expect(errorOf(over)).toMatchObject({ code: 'MEMORY_LIMIT_EXCEEDED' });
      expect(endOf(over).started).toBe(true);
      expect(ofType(within, 'result')[0]).toMatchObject({ statusCode: 200, body: 160 * 1024 * 1024 });
    });

    it('checks sources and reports every violation with its line', async () => {
      // Act
      const [rejected, accepted] = await Promise.all([compute.check('import json\nimport os\n\nx = eval("1")\n'), compute.check(WORDS_AGENT)]);

      // Assess
      expect(rejected.ok).toBe(false);
      expect(rejected.violations.map((v) => v.line)).toEqual([2, 4]);
      expect(rejected.violations[0]).toMatchObject({ line: 2, col: 1, message: expect.stringContaining('os') });
      expect(accepted).toEqual({ ok: true, violations: [] });
    });

    it("runs a tenant's concurrent calls independently: the fast one does not wait for the slow one", async () => {
      // Prepare: two runs at once first, so that an adapter that scales out has two warm environments
      await Promise.all([run(compute, 'tenant-a', agentRun('0 warm')), run(compute, 'tenant-a', agentRun('0 warm'))]);

      // Act
      const [slow, fast] = await Promise.all([
        run(compute, 'tenant-a', agentRun('0.3 slow1 slow2 slow3')),
        run(compute, 'tenant-a', agentRun('0 fast1 fast2')),
      ]);

      // Assess
      expect(texts(slow)).toEqual(['slow1', 'slow2', 'slow3']);
      expect(texts(fast)).toEqual(['fast1', 'fast2']);
      expect(fast.events.at(-1)!.at).toBeLessThan(slow.events.at(-1)!.at);
    });

    it("runs different tenants' code in different execution environments", async () => {
      // Act
      await Promise.all([run(compute, 'tenant-a', agentRun('0 a')), run(compute, 'tenant-b', agentRun('0 b'))]);

      // Assess
      const a = under.environmentsOf('tenant-a');
      const b = under.environmentsOf('tenant-b');
      expect(a.length).toBeGreaterThan(0);
      expect(b.length).toBeGreaterThan(0);
      expect(a.filter((id) => b.includes(id))).toEqual([]);
    });

    it('ends the stream at once with ABORTED when the caller aborts a run that started', async () => {
      // Prepare: a run that says one thing, then stays silent for 5 s
      const controller = new AbortController();
      let abortedAt = 0;

      // Act
      const r = await run(compute, 'tenant-a', agentRun('5', { source: SILENT_AGENT, timeoutMs: 30_000 }), {
        signal: controller.signal,
        onEvent: (event) => {
          if (event.type !== 'text') return;
          abortedAt = performance.now();
          controller.abort();
        },
      });

      // Assess
      const end = endOf(r);
      expect(types(r)).toEqual(['text', 'error', 'end']);
      expect(errorOf(r)).toMatchObject({ code: 'ABORTED' });
      expect(end.started).toBe(true);
      expect(r.events.at(-1)!.at - abortedAt).toBeLessThan(2000);
    });

    it('does not start a run whose signal is already aborted', async () => {
      // Act
      const r = await run(compute, 'tenant-a', actionRun(SLEEPING_ACTION, { seconds: 0 }), { signal: AbortSignal.abort() });

      // Assess
      expect(types(r)).toEqual(['error', 'end']);
      expect(errorOf(r)).toMatchObject({ code: 'ABORTED' });
      expect(endOf(r).started).toBe(false);
    });

    it('lets the consumer stop reading early without waiting for the run', async () => {
      // Act: read the first event of a run that would then stay silent for 5 s, and leave
      let brokeAt = Number.POSITIVE_INFINITY;
      for await (const event of compute.invoke('tenant-a', agentRun('5', { source: SILENT_AGENT, timeoutMs: 30_000 }))) {
        if (event.type !== 'text') continue;
        brokeAt = performance.now();
        break;
      }
      const leftAt = performance.now();
      const next = await run(compute, 'tenant-a', actionRun(SLEEPING_ACTION, { seconds: 0, tag: 'next' }));

      // Assess
      expect(leftAt - brokeAt).toBeLessThan(2000);
      expect(ofType(next, 'result')[0]).toMatchObject({ body: 'next' });
    });

    it('ends a run whose runtime dies with RUNTIME_CRASHED, and serves the next run', async () => {
      // Act: kill the runtime while a run streams
      const r = await run(compute, 'tenant-b', agentRun('10', { source: SILENT_AGENT, timeoutMs: 30_000 }), {
        onEvent: (event) => {
          if (event.type === 'text') under.crashEnvironmentsOf('tenant-b');
        },
      });
      const next = await run(compute, 'tenant-b', agentRun('0 again'));

      // Assess
      const end = endOf(r);
      expect(types(r)).toEqual(['text', 'error', 'end']);
      expect(errorOf(r)).toMatchObject({ code: 'RUNTIME_CRASHED' });
      expect(end.started).toBe(true);
      expect(texts(next)).toEqual(['again']);
    });

    it('answers RUNTIME_UNAVAILABLE, never a throw, when no runtime can be had; such a run never started', async () => {
      // Prepare
      const unavailable = await setup.startUnavailable();
      try {
        // Act
        const r = await run(unavailable.compute, 'tenant-none', actionRun(SLEEPING_ACTION, { seconds: 0 }));

        // Assess
        expect(types(r)).toEqual(['error', 'end']);
        expect(errorOf(r)).toMatchObject({ code: 'RUNTIME_UNAVAILABLE' });
        expect(endOf(r).started).toBe(false);
      } finally {
        await unavailable.close();
      }
    });
  });
}

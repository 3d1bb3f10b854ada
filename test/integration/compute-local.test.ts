/**
 * What only the local Compute adapter does, against real Python runtime processes
 * (python-runtime/): the processes it supervises (one per tenant, a checker of its own, idle stop,
 * LRU cap, close), their environment, and that an aborted or abandoned run is really killed in
 * the runtime. What every Compute adapter promises (events, outcomes, limits, billing fields,
 * abort, isolation) is the contract in test/contract/compute.contract.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentInvocation, BidiEvent, BidiSession, BidiSessionSpec, RuntimeEvent } from '../../functions/runtimes/compute.ts';
import { createEgressProxy } from '../../functions/runtimes/egress-proxy.ts';
import { createLocalCompute, type LocalCompute, type RuntimeProcessExit } from '../../functions/adapters/compute/local.ts';
import { SILENT_AGENT } from '../contract/compute.contract.ts';
import { liveGroupMembers } from '../support/processes.ts';
import { voiceAgentSource } from '../support/voice-agents.ts';

const hasProc = existsSync('/proc/self/stat');

/** Yields each word of the prompt as a text chunk, sleeping `delay` seconds after each one. */
const WORDS_AGENT = `import time


class WordsAgent:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        words = prompt.split(" ")
        delay = float(words[0])
        for word in words[1:]:
            yield {"data": word}
            time.sleep(delay)


def create_agent():
    return WordsAgent(), []
`;

function agentRun(prompt: string, source = WORDS_AGENT, timeoutMs = 20_000): AgentInvocation {
  return {
    kind: 'agent',
    source,
    requestId: `req-${prompt.length}-${Math.random()}`,
    functionName: 'test-agent',
    timeoutMs,
    memoryMb: 256,
    env: {},
    allowHosts: [],
    prompt,
    messages: [],
  };
}

interface Timed {
  readonly event: RuntimeEvent;
  readonly at: number;
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

const types = (timed: readonly Timed[]) => timed.map((t) => t.event.type);
const texts = (timed: readonly Timed[]) => timed.flatMap((t) => (t.event.type === 'text' ? [t.event.data] : []));
const errorOf = (timed: readonly Timed[]) => timed.map((t) => t.event).find((e) => e.type === 'error');

/** Resolves with the next exit of a process matching `match` (subscribe before causing it). */
function nextExit(compute: LocalCompute, match: (exit: RuntimeProcessExit) => boolean): Promise<RuntimeProcessExit> {
  return new Promise((resolve) => {
    const off = compute.onProcessExit((exit) => {
      if (!match(exit)) return;
      off();
      resolve(exit);
    });
  });
}

/**
 * The runtime's own count of running invocations (GET /health), polled until it is 0 or 5 s have
 * passed: far less than the 20 s the silent agent would run if nobody stopped it.
 */
async function runtimeActiveRunsSettled(compute: LocalCompute, tenantId: string): Promise<number> {
  let active = -1;
  for (const deadline = Date.now() + 5000; Date.now() < deadline;) {
    active = ((await compute.health(tenantId)) as { active: number }).active;
    if (active === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return active;
}

function tenantPid(compute: LocalCompute, tenantId: string): number | undefined {
  return compute.stats().processes.find((p) => p.role === 'tenant' && p.tenantId === tenantId)?.pid;
}

describe('local compute: one warm runtime process per tenant', () => {
  const SECRET_NAME = 'PLATFORM_COMPUTE_TEST_SECRET';
  let compute: LocalCompute;

  beforeAll(() => {
    // Prepare: a platform variable that must never reach a runtime process.
    process.env[SECRET_NAME] = 'do-not-leak';
    compute = createLocalCompute();
  });
  afterAll(async () => {
    delete process.env[SECRET_NAME];
    await compute.close();
  });

  it.skipIf(!hasProc)("starts runtime processes without the platform's environment", async () => {
    // Prepare: the tenant's process
    await collect(compute.invoke('tenant-a', agentRun('0 hello')));

    // Assess: the server's whole environment, as the kernel holds it. Wrappers such as pyenv's
    // shim add their own variables, so the check is that none of ours got through unasked.
    const allowed = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'PYENV_ROOT', 'PYENV_VERSION', 'PYTHONUNBUFFERED', 'PYTHONDONTWRITEBYTECODE'];
    // The pool's pid is the sandbox's (bubblewrap); the server is a member of its process group.
    const sandboxPid = tenantPid(compute, 'tenant-a')!;
    const pid = liveGroupMembers(sandboxPid).find((member) => {
      const argv = readFileSync(`/proc/${member}/cmdline`, 'utf8').split('\0');
      return !argv[0]!.endsWith('bwrap') && argv.includes('platform_runtime.server');
    })!;
    expect(pid).toBeDefined();
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
    const inherited = Object.entries(process.env).filter(([name, value]) => !allowed.includes(name) && environ.includes(`${name}=${value}`));
    expect(environ.some((entry) => entry.startsWith(`${SECRET_NAME}=`))).toBe(false);
    expect(inherited).toEqual([]);
    expect(environ).toEqual(expect.arrayContaining(['PYTHONUNBUFFERED=1', 'PYTHONDONTWRITEBYTECODE=1']));
  });

  it("runs a tenant's concurrent calls in its one process", async () => {
    // Act: two runs of the same tenant at the same time
    const [slow, fast] = await Promise.all([
      collect(compute.invoke('tenant-a', agentRun('0.2 slow1 slow2'))),
      collect(compute.invoke('tenant-a', agentRun('0 fast1'))),
    ]);

    // Assess
    expect(texts(slow)).toEqual(['slow1', 'slow2']);
    expect(texts(fast)).toEqual(['fast1']);
    expect(compute.stats().processes.filter((p) => p.tenantId === 'tenant-a')).toHaveLength(1);
  });

  it('takes a burst of first calls to a cold tenant without refusing connections', async () => {
    // Prepare: a tenant with no runtime yet; its server listens on a Unix socket, which refuses a
    // connect outright (EAGAIN) once the listen backlog is full
    const calls = 30;

    // Act
    const runs = await Promise.all(Array.from({ length: calls }, (_, n) => collect(compute.invoke('tenant-burst', agentRun(`0 b${n}`)))));

    // Assess
    expect(runs.map(errorOf).filter((e) => e !== undefined)).toEqual([]);
    expect(runs.every((events) => types(events).at(-1) === 'end')).toBe(true);
  });

  it('kills the run in the runtime when the caller aborts', async () => {
    // Prepare: a run that says one thing, then stays silent for 20 s
    const controller = new AbortController();

    // Act
    const events = await collect(compute.invoke('tenant-a', agentRun('20', SILENT_AGENT, 30_000), controller.signal), (event) => {
      if (event.type === 'text') controller.abort();
    });

    // Assess: the runtime no longer runs it (the ABORTED event itself is the contract's)
    expect(errorOf(events)).toMatchObject({ code: 'ABORTED' });
    expect(await runtimeActiveRunsSettled(compute, 'tenant-a')).toBe(0);
  });

  it('kills the run in the runtime when the consumer stops reading early', async () => {
    // Act: read the first event of a run that would then stay silent for 20 s, and leave
    for await (const event of compute.invoke('tenant-a', agentRun('20', SILENT_AGENT, 30_000))) if (event.type === 'text') break;

    // Assess
    expect(await runtimeActiveRunsSettled(compute, 'tenant-a')).toBe(0);
    expect(compute.stats().processes.find((p) => p.tenantId === 'tenant-a')?.activeRuns).toBe(0);
  });

  it('reports a process that dies as crashed, leaves nothing of its group, and starts a new process for the next call', async () => {
    // Prepare
    const oldPid = tenantPid(compute, 'tenant-a')!;
    const exited = nextExit(compute, (exit) => exit.pid === oldPid);

    // Act: kill the server while a run streams
    const events = await collect(compute.invoke('tenant-a', agentRun('20', SILENT_AGENT, 30_000)), (event) => {
      if (event.type === 'text') process.kill(oldPid, 'SIGKILL');
    });
    const exit = await exited;
    const next = await collect(compute.invoke('tenant-a', agentRun('0 again')));

    // Assess (the RUNTIME_CRASHED event itself is the contract's)
    expect(errorOf(events)).toMatchObject({ code: 'RUNTIME_CRASHED' });
    expect(exit).toMatchObject({ reason: 'crashed', tenantId: 'tenant-a', signal: 'SIGKILL' });
    if (hasProc) expect(liveGroupMembers(oldPid)).toEqual([]);
    expect(texts(next)).toEqual(['again']);
    expect(tenantPid(compute, 'tenant-a')).not.toBe(oldPid);
  });

  it("answers checks from a checker process of its own, never a tenant's", async () => {
    // Act
    const [rejected, accepted] = await Promise.all([compute.check('import os\n'), compute.check(WORDS_AGENT)]);

    // Assess (what a check answers is the contract's)
    expect([rejected.ok, accepted.ok]).toEqual([false, true]);
    expect(compute.stats().processes.filter((p) => p.role === 'checker')).toHaveLength(1);
    expect(compute.stats().processes.filter((p) => p.role === 'checker' && p.tenantId !== null)).toEqual([]);
  });

  it('close() stops every process and leaves nothing behind', async () => {
    // Prepare
    const pids = compute.stats().processes.map((p) => p.pid);
    expect(pids.length).toBeGreaterThanOrEqual(2); // tenant-a, checker

    // Act
    await compute.close();
    const after = await collect(compute.invoke('tenant-a', agentRun('0 late')));

    // Assess
    expect(compute.stats().processes).toEqual([]);
    if (hasProc) for (const pid of pids) expect(liveGroupMembers(pid)).toEqual([]);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    expect(types(after)).toEqual(['error', 'end']);
    expect(errorOf(after)).toMatchObject({ code: 'RUNTIME_UNAVAILABLE' });
  });
});

describe('local compute: limits', () => {
  it('stops a process after its idle time', async () => {
    // Prepare
    const compute = createLocalCompute({ idleTimeoutMs: 200 });
    const exited = nextExit(compute, (exit) => exit.tenantId === 'idle-tenant');
    try {
      // Act
      await collect(compute.invoke('idle-tenant', agentRun('0 hello')));
      const pid = tenantPid(compute, 'idle-tenant')!;
      const exit = await exited;

      // Assess
      expect(exit).toMatchObject({ reason: 'idle', pid });
      expect(compute.stats().processes).toEqual([]);
      if (hasProc) expect(liveGroupMembers(pid)).toEqual([]);
    } finally {
      await compute.close();
    }
  });

  it('stops the least recently used idle process to stay within maxProcesses', async () => {
    // Prepare
    // Every idle process may make room at once here (the 10 s default is process-pool.ts's).
    const compute = createLocalCompute({ maxProcesses: 2, minIdleMs: 0 });
    const evicted = nextExit(compute, (exit) => exit.reason === 'evicted');
    try {
      // Act
      await collect(compute.invoke('t1', agentRun('0 one')));
      await collect(compute.invoke('t2', agentRun('0 two')));
      await collect(compute.invoke('t1', agentRun('0 one again'))); // t2 is now the least recently used
      await collect(compute.invoke('t3', agentRun('0 three')));

      // Assess
      expect(await evicted).toMatchObject({ tenantId: 't2' });
      expect(
        compute
          .stats()
          .processes.map((p) => p.tenantId)
          .sort(),
      ).toEqual(['t1', 't3']);
    } finally {
      await compute.close();
    }
  });

  it('refuses a new tenant when every process is busy', async () => {
    // Prepare: one slot, held by a silent run
    const compute = createLocalCompute({ maxProcesses: 1, slotWaitMs: 0 });
    const controller = new AbortController();
    try {
      const busy = compute.invoke('holder', agentRun('20', SILENT_AGENT, 30_000), controller.signal)[Symbol.asyncIterator]();
      await busy.next(); // its first text: the process is running the call

      // Act
      const refused = await collect(compute.invoke('newcomer', agentRun('0 hi')));
      controller.abort();
      await collect({ [Symbol.asyncIterator]: () => busy });

      // Assess
      expect(types(refused)).toEqual(['error', 'end']);
      expect(errorOf(refused)).toMatchObject({ code: 'RUNTIME_UNAVAILABLE', message: expect.stringContaining('busy') });
    } finally {
      await compute.close();
    }
  });

  it('explains a missing Python instead of failing obscurely', async () => {
    // Prepare
    const compute = createLocalCompute({ python: 'python3-that-does-not-exist' });
    try {
      // Act
      const events = await collect(compute.invoke('tenant', agentRun('0 hi')));

      // Assess
      expect(types(events)).toEqual(['error', 'end']);
      expect(errorOf(events)).toMatchObject({ code: 'RUNTIME_UNAVAILABLE', message: expect.stringContaining('was not found') });
      await expect(compute.check('x = 1')).rejects.toThrow(/was not found/);
    } finally {
      await compute.close();
    }
  });
});

/** One request through an egress listener's socket, as a sandboxed run would send it: the proxy's status code. */
function throughEgress(socketPath: string, credential: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      socketPath,
      method: 'GET',
      path: 'http://not-allowed.example/',
      headers: { host: 'not-allowed.example', 'proxy-authorization': `Basic ${Buffer.from(`run:${credential}`).toString('base64')}` },
    });
    request.once('error', reject);
    request.once('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.end();
  });
}

const sparePids = (compute: LocalCompute) =>
  compute
    .stats()
    .processes.filter((p) => p.role === 'spare')
    .map((p) => p.pid);

describe('local compute: spares started ahead of need', () => {
  it("gives a tenant's first run the spare, binds it to that tenant alone, and starts a new spare", async () => {
    // Prepare: a spare, and the egress proxy whose listener says whose runs a process carries
    const egress = createEgressProxy();
    const compute = createLocalCompute({ spares: 1, egress });
    try {
      await compute.warm();
      const [spare] = sparePids(compute);
      expect(spare).toBeDefined();
      const spareSocket = compute.stats().processes.find((p) => p.pid === spare)!.socketPath;
      // A spare carries nobody's runs: nothing listens behind its forwarder yet.
      expect(existsSync(join(dirname(spareSocket), 'egress.sock'))).toBe(false);

      // Act
      const events = await collect(compute.invoke('first-tenant', agentRun('0 hello')));
      await compute.warm();

      // Assess: the run ran in the spare, now the tenant's, and a different spare waits
      expect(texts(events)).toEqual(['hello']);
      expect(tenantPid(compute, 'first-tenant')).toBe(spare);
      const next = sparePids(compute);
      expect(next).toHaveLength(1);
      expect(next[0]).not.toBe(spare);
      // Its egress listener takes the tenant's run credentials and no other tenant's.
      const own = egress.openRun(`tenant:first-tenant`, { allowHosts: [] });
      const other = egress.openRun(`tenant:other-tenant`, { allowHosts: [] });
      const listener = join(dirname(spareSocket), 'egress.sock');
      expect(await throughEgress(listener, own.credential)).toBe(403); // authenticated, host not allowed
      expect(await throughEgress(listener, other.credential)).toBe(407);
      own.release();
      other.release();
    } finally {
      await compute.close();
      await egress.close();
    }
  });

  it('never gives two tenants one process, nor the checker a spare', async () => {
    // Prepare
    const compute = createLocalCompute({ spares: 1 });
    try {
      await compute.warm();
      const [spare] = sparePids(compute);

      // Act: two new tenants at once (one takes the spare, the other its replacement or a new
      // process), then a check
      const runs = await Promise.all(['t-one', 't-two'].map((tenant) => collect(compute.invoke(tenant, agentRun(`0 ${tenant}`)))));
      await compute.check('x = 1\n');

      // Assess
      expect(runs.map(texts)).toEqual([['t-one'], ['t-two']]);
      const one = tenantPid(compute, 't-one');
      const two = tenantPid(compute, 't-two');
      expect(new Set([one, two, spare]).size).toBe(2); // one of them is the old spare
      expect(one).not.toBe(two);
      const checker = compute.stats().processes.find((p) => p.role === 'checker')!;
      expect([one, two, ...sparePids(compute)]).not.toContain(checker.pid);
      expect(checker.tenantId).toBeNull();
    } finally {
      await compute.close();
    }
  });

  it('keeps spares within maxProcesses and never evicts a tenant for one', async () => {
    // Prepare: two processes at most, one of them a spare while there is room
    const compute = createLocalCompute({ maxProcesses: 2, spares: 1, minIdleMs: 0 });
    const exits: RuntimeProcessExit[] = [];
    compute.onProcessExit((exit) => exits.push(exit));
    const total = () => compute.stats().processes.length + compute.stats().starting;
    try {
      await compute.warm();
      const sizes = [total()];

      // Act
      await collect(compute.invoke('t1', agentRun('0 one'))); // takes the spare; a new one starts
      await compute.warm();
      sizes.push(total());
      await collect(compute.invoke('t2', agentRun('0 two'))); // takes that one; no room for another
      await compute.warm();
      sizes.push(total());
      const evicted = nextExit(compute, (exit) => exit.reason === 'evicted');
      await collect(compute.invoke('t3', agentRun('0 three'))); // no spare: the least recently used goes
      await compute.warm();
      sizes.push(total());

      // Assess
      expect(sizes).toEqual([1, 2, 2, 2]);
      expect(await evicted).toMatchObject({ tenantId: 't1', role: 'tenant' });
      expect(sparePids(compute)).toEqual([]);
      expect(exits.filter((exit) => exit.role === 'tenant' && exit.tenantId !== 't1')).toEqual([]);
    } finally {
      await compute.close();
    }
  });

  it('close() stops the spares and leaves nothing behind', async () => {
    // Prepare
    const compute = createLocalCompute({ spares: 2 });
    await compute.warm();
    const spares = sparePids(compute);
    expect(spares).toHaveLength(2);
    const exits: RuntimeProcessExit[] = [];
    compute.onProcessExit((exit) => exits.push(exit));

    // Act
    await compute.close();
    await compute.warm();

    // Assess
    expect(compute.stats()).toEqual({ processes: [], starting: 0 });
    expect(exits.map((exit) => [exit.pid, exit.role, exit.reason]).sort()).toEqual(spares.map((pid) => [pid, 'spare', 'closed']).sort());
    if (hasProc) for (const pid of spares) expect(liveGroupMembers(pid)).toEqual([]);
  });
});

/** A voice agent with Strands' bidi interface that answers text with `echo: <text>`. */
const VOICE_ECHO = voiceAgentSource({
  send: `await self.events.put({"type": "bidi_transcript_stream", "role": "assistant", "text": "echo: " + message, "is_final": True})`,
});

function voiceSpec(source = VOICE_ECHO): BidiSessionSpec {
  return { source, requestId: 'req-voice', env: {}, allowHosts: [], memoryMb: 512, maxSeconds: 60, voice: 'voice_1', initialPrompt: null };
}

/**
 * The session's next events up to and including the first that matches (all that are left, if none
 * does), without ending the stream as leaving a `for await` would.
 */
async function eventsUntil(session: BidiSession, match: (event: BidiEvent) => boolean): Promise<BidiEvent[]> {
  const events = session.events[Symbol.asyncIterator]();
  const seen: BidiEvent[] = [];
  for (let next = await events.next(); !next.done; next = await events.next()) {
    seen.push(next.value);
    if (match(next.value)) break;
  }
  return seen;
}

const voicePids = (compute: LocalCompute, role: 'spare' | 'session') =>
  compute
    .voiceProcesses()
    .filter((p) => p.role === role)
    .map((p) => p.pid);

describe('local compute: voice session processes started ahead of need', () => {
  it("gives a call the waiting spare, for that tenant's session alone, and starts another", async () => {
    // Prepare
    const compute = createLocalCompute({ voiceSpares: 1 });
    try {
      await compute.warm();
      const [spare] = voicePids(compute, 'spare');
      expect(spare).toBeDefined();

      // Act
      const session = await compute.openBidiSession('voice-tenant', voiceSpec());
      const started = await eventsUntil(session, (event) => event.type === 'started');
      session.sendText('hello');
      const answered = await eventsUntil(session, (event) => event.type === 'transcript');
      await compute.warm();
      const during = compute.voiceProcesses();
      session.end();
      await eventsUntil(session, (event) => event.type === 'end');
      await session.exited;

      // Assess
      expect(started.map((event) => event.type)).toEqual(['started']);
      expect(answered).toEqual([{ type: 'transcript', text: 'echo: hello', role: 'assistant', isFinal: true }]);
      expect(during).toContainEqual({ pid: spare, role: 'session', tenantId: 'voice-tenant' });
      const next = during.filter((p) => p.role === 'spare');
      expect(next).toHaveLength(1);
      expect(next[0]).toMatchObject({ tenantId: null });
      expect(next[0]!.pid).not.toBe(spare);
      expect(voicePids(compute, 'session')).toEqual([]);
      if (hasProc) expect(liveGroupMembers(spare!)).toEqual([]);
    } finally {
      await compute.close();
    }
  });

  it('replaces a spare that died, and never hands it out', async () => {
    // Prepare
    const compute = createLocalCompute({ voiceSpares: 1 });
    try {
      await compute.warm();
      const [dead] = voicePids(compute, 'spare');

      // Act: the spare is killed; once the platform has seen it go, a call comes
      process.kill(-dead!, 'SIGKILL');
      while (voicePids(compute, 'spare').includes(dead!) || voicePids(compute, 'spare').length === 0) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      const [replacement] = voicePids(compute, 'spare');
      const session = await compute.openBidiSession('voice-tenant', voiceSpec());
      await eventsUntil(session, (event) => event.type === 'started');
      session.sendText('still there');
      const answered = await eventsUntil(session, (event) => event.type === 'transcript' || event.type === 'end');
      session.end();
      await session.exited;

      // Assess
      expect(replacement).not.toBe(dead);
      expect(answered.at(-1)).toMatchObject({ type: 'transcript', text: 'echo: still there' });
    } finally {
      await compute.close();
    }
  });

  it('close() stops the spares and the sessions and leaves nothing behind', async () => {
    // Prepare: a spare, and a session in progress
    const compute = createLocalCompute({ voiceSpares: 1 });
    await compute.warm();
    const session = await compute.openBidiSession('voice-tenant', voiceSpec());
    await eventsUntil(session, (event) => event.type === 'started');
    await compute.warm();
    const pids = compute.voiceProcesses().map((p) => p.pid);
    expect(pids).toHaveLength(2);

    // Act
    await compute.close();
    const rest = await eventsUntil(session, (event) => event.type === 'end');

    // Assess
    expect(rest.at(-1)).toEqual({ type: 'end' });
    expect(compute.voiceProcesses()).toEqual([]);
    if (hasProc) for (const pid of pids) expect(liveGroupMembers(pid)).toEqual([]);
    await expect(compute.openBidiSession('voice-tenant', voiceSpec())).rejects.toThrow(/shutting down/);
  });
});

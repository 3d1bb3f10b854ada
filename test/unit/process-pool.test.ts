/**
 * The runtime pool's policy (functions/runtimes/process-pool.ts): which process makes room for a
 * new key, how large the pool is by default, and that round-robin load over more keys than fit
 * does not turn into a cold start per call. The policy is read with an injected clock; the pool
 * itself runs real (tiny) processes in their own groups, so its stops are real stops.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import {
  createProcessPool,
  defaultMaxProcesses,
  launch,
  memorySizedPool,
  roomFor,
  type ExitStatus,
  type PoolExitReason,
  type PoolProcess,
  type RoomCandidate,
} from '../../functions/runtimes/process-pool.ts';

interface Proc extends RoomCandidate {
  readonly key: string;
}

const proc = (key: string, fields: Partial<Proc> = {}): Proc => ({ key, active: 0, lastUsedAt: 0, spare: false, stoppable: true, ...fields });

describe('roomFor', () => {
  it('starts a new process while fewer than the limit are counted', () => {
    // Prepare
    const processes = [proc('a', { active: 1 })];

    // Act
    const decision = roomFor(processes, 1, 2, 0, 10_000);

    // Assess
    expect(decision).toEqual({ kind: 'room' });
  });

  it('stops a spare before any key’s process', () => {
    // Prepare
    const processes = [proc('a', { lastUsedAt: 0 }), proc('spare', { spare: true, lastUsedAt: 90_000 })];

    // Act
    const decision = roomFor(processes, 2, 2, 100_000, 10_000);

    // Assess
    expect(decision).toEqual({ kind: 'stop', victim: processes[1] });
  });

  it('stops the least recently used of the processes idle for at least minIdleMs', () => {
    // Prepare
    const processes = [proc('recent', { lastUsedAt: 95_000 }), proc('older', { lastUsedAt: 50_000 }), proc('oldest', { lastUsedAt: 10_000 })];

    // Act
    const decision = roomFor(processes, 3, 3, 100_000, 10_000);

    // Assess
    expect(decision).toEqual({ kind: 'stop', victim: processes[2] });
  });

  it('never stops a process used within minIdleMs, one in use, or one already stopping', () => {
    // Prepare
    const processes = [
      proc('a moment ago', { lastUsedAt: 97_000 }),
      proc('in use', { lastUsedAt: 0, active: 1 }),
      proc('stopping', { lastUsedAt: 0, stoppable: false }),
    ];

    // Act
    const decision = roomFor(processes, 3, 3, 100_000, 10_000);

    // Assess: the process used at 97 s may go at 107 s, 7 s from now.
    expect(decision).toEqual({ kind: 'wait', retryInMs: 7_000 });
  });

  it('waits with no retry time when every process is in use', () => {
    // Prepare
    const processes = [proc('a', { active: 2 }), proc('b', { active: 1 })];

    // Act
    const decision = roomFor(processes, 2, 2, 100_000, 10_000);

    // Assess
    expect(decision).toEqual({ kind: 'wait', retryInMs: null });
  });
});

/**
 * Round-robin calls over `keys` keys through a pool of `max` places, one call every `stepMs` on
 * the injected clock, each call holding its process for `holdMs`; returns the starts per key and
 * the calls refused. `policy` decides as the pool does (`roomFor`) or as a plain LRU would.
 */
function roundRobin(keys: number, max: number, calls: number, policy: 'roomFor' | 'lru'): { starts: Map<string, number>; refused: number } {
  const stepMs = 5;
  const holdMs = 40;
  const minIdleMs = 10_000;
  const live = new Map<string, { lastUsedAt: number; busyUntil: number }>();
  const starts = new Map<string, number>();
  let refused = 0;
  for (let call = 0; call < calls; call++) {
    const now = call * stepMs;
    const key = `k${call % keys}`;
    const found = live.get(key);
    if (found) {
      found.lastUsedAt = now;
      found.busyUntil = now + holdMs;
      continue;
    }
    const processes = [...live].map(([name, p]) => ({
      ...proc(name, { lastUsedAt: p.lastUsedAt, active: p.busyUntil > now ? 1 : 0 }),
    }));
    const decision =
      policy === 'roomFor'
        ? roomFor(processes, live.size, max, now, minIdleMs)
        : live.size < max
          ? ({ kind: 'room' } as const)
          : ({ kind: 'stop', victim: processes.filter((p) => p.active === 0).sort((x, y) => x.lastUsedAt - y.lastUsedAt)[0]! } as const);
    if (decision.kind === 'wait') {
      refused++;
      continue;
    }
    if (decision.kind === 'stop') live.delete(decision.victim.key);
    live.set(key, { lastUsedAt: now, busyUntil: now + holdMs });
    starts.set(key, (starts.get(key) ?? 0) + 1);
  }
  return { starts, refused };
}

describe('round-robin load over more keys than fit', () => {
  it('starts each key at most once per idle period, where evicting the least recently used starts one per call', () => {
    // Prepare: 60 keys, 50 places, 1,200 calls in 6 s of the clock (well within one idle period).
    const keys = 60;
    const calls = 1_200;

    // Act
    const pooled = roundRobin(keys, 50, calls, 'roomFor');
    const lru = roundRobin(keys, 50, calls, 'lru');

    // Assess
    expect(Math.max(...pooled.starts.values())).toBe(1);
    expect(pooled.starts.size).toBe(50);
    expect(pooled.refused).toBe(calls - (calls / keys) * 50);
    expect(Math.min(...lru.starts.values())).toBe(calls / keys);
  });

  it('starts every key once and refuses nothing when they all fit', () => {
    // Prepare
    const keys = 50;

    // Act
    const pooled = roundRobin(keys, 50, 1_000, 'roomFor');

    // Assess
    expect([...pooled.starts.values()]).toEqual(Array.from({ length: keys }, () => 1));
    expect(pooled.refused).toBe(0);
  });
});

describe('defaultMaxProcesses', () => {
  const GB = 1024 ** 3;
  const MB = 1024 ** 2;

  it('fits processes in the share of memory, between floor and cap', () => {
    // Prepare
    const sizing = { processBytes: 100 * MB, share: 0.5, cap: 256, floor: 8 };

    // Act
    const small = defaultMaxProcesses({ ...sizing, totalMemoryBytes: 1 * GB });
    const medium = defaultMaxProcesses({ ...sizing, totalMemoryBytes: 16 * GB });
    const huge = defaultMaxProcesses({ ...sizing, totalMemoryBytes: 1024 * GB });

    // Assess
    expect(small).toBe(8);
    expect(medium).toBe(81);
    expect(huge).toBe(256);
  });

  it('gives the local runtimes half of the machine at their measured sizes', () => {
    // Act
    const python = memorySizedPool(72 * MB, 24 * GB);

    // Assess
    expect(python).toBe(170);
  });
});

/** A process that announces a port and then waits to be stopped, in a group of its own. */
async function startIdleProcess(): Promise<PoolProcess> {
  const child = spawn(process.execPath, ['-e', 'console.log(JSON.stringify({ event: "listening", port: 1 })); setInterval(() => {}, 60_000);'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: true,
  });
  const launched = await launch(child, {
    name: 'the test process',
    startTimeoutMs: 10_000,
    spawnFailed: (error) => error.message,
    unavailable: (message) => new Error(message),
  });
  return { ...launched, dispose: () => child.stdin?.destroy() };
}

function testPool(clock: { now: number }, options: { slotWaitMs: number }) {
  const exits: { key: string | null; reason: PoolExitReason }[] = [];
  const pool = createProcessPool<PoolProcess, never, string | null, { key: string | null; reason: PoolExitReason } & ExitStatus>({
    start: () => startIdleProcess(),
    idleTimeoutMs: 600_000,
    maxProcesses: 2,
    minIdleMs: 10_000,
    slotWaitMs: options.slotWaitMs,
    now: () => clock.now,
    unavailable: (message) => new Error(message),
    describe: (p) => p.key,
    describeExit: ({ key, reason, code, signal }) => ({ key, reason, code, signal }),
    messages: { closed: 'closed', busy: 'busy', stopped: 'stopped' },
  });
  pool.onProcessExit((exit) => exits.push(exit));
  return { pool, exits };
}

describe('the pool at its limit', () => {
  it('makes a new key wait for a place, then gives it the process idle for minIdleMs', async () => {
    // Prepare: two places, both taken; "a" idle since 0, "b" in use.
    const clock = { now: 0 };
    const { pool, exits } = testPool(clock, { slotWaitMs: 600_000 });
    try {
      const a = await pool.acquire('a');
      const b = await pool.acquire('b');
      pool.release(a);
      clock.now = 3_000;

      // Act: "c" cannot take a's place yet; once a has been idle 10 s, the next release lets it.
      const c = pool.acquire('c');
      let cStarted = false;
      void c.then(() => (cStarted = true));
      await new Promise((resolve) => setImmediate(resolve));
      const startedEarly = cStarted;
      clock.now = 10_000;
      pool.release(b);
      const got = await c;
      await a.gone;

      // Assess
      expect(startedEarly).toBe(false);
      expect(got.key).toBe('c');
      expect(exits).toEqual([{ key: 'a', reason: 'evicted', code: null, signal: 'SIGTERM' }]);
      expect([...pool.stats().processes].sort()).toEqual(['b', 'c']);
      pool.release(got);
    } finally {
      await pool.close();
    }
  });

  it('refuses a new key once slotWaitMs has passed without a place, and stops nobody', async () => {
    // Prepare: both places used a moment ago.
    const clock = { now: 0 };
    const { pool, exits } = testPool(clock, { slotWaitMs: 2_000 });
    try {
      pool.release(await pool.acquire('a'));
      pool.release(await pool.acquire('b'));
      clock.now = 1_000;

      // Act: the clock passes the wait's end; a release makes the pool look again.
      const c = pool.acquire('c');
      const outcome = c.then(
        () => 'started',
        (error: Error) => error.message,
      );
      clock.now = 3_001;
      pool.release(await pool.acquire('a'));

      // Assess
      expect(await outcome).toBe('busy');
      expect(exits).toEqual([]);
      expect([...pool.stats().processes].sort()).toEqual(['a', 'b']);
    } finally {
      await pool.close();
    }
  });
});

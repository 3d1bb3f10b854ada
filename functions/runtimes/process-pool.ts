/**
 * The supervisor both local runtimes share (adapters/compute/local.ts: Python runtime servers;
 * adapters/mcp-runtime/local.ts: MCP hosts): one process per key (a tenant), started on first use with
 * concurrent first calls sharing one start, kept warm, restarted after it dies, stopped when idle,
 * and at most `maxProcesses` at once (see `defaultMaxProcesses` for the default, from the machine's
 * memory). A new key beyond that takes the place of the least recently used process that has
 * been idle for at least `minIdleMs`; when none has, it waits up to `slotWaitMs` for one and is
 * then refused. A process used a moment ago is never stopped to make room: round-robin traffic
 * over more keys than fit is refused in part rather than turned into a cold start per call. Each process
 * runs in its own process group (see process-group.ts) and announces where it listens with a
 * `{"event":"listening","port":N}` or `{"event":"listening","socket":PATH}` line on stdout; `launch`
 * reads that line. What a process runs and what it is asked stay with the adapters.
 *
 * Spares (optional): processes started ahead of need and bound to no key, so that a new key's
 * first call does not wait for an interpreter to start. A new key takes a spare (a ready one, else
 * one still starting) and the adapter binds it to the key before its first use; a spare is never
 * handed back, so a process only ever serves the one key it was bound to. Spares count towards
 * `maxProcesses`, are replaced as soon as one is taken (only while there is room: a spare never
 * evicts a key's process), are not stopped when idle, and are stopped by `close()`.
 */
import type { ChildProcess } from 'node:child_process';
import http from 'node:http';
import { totalmem } from 'node:os';
import { createInterface, type Interface } from 'node:readline';
import { signalGroup, waitForGroupGone } from './process-group.ts';

/** How a process ended, as its `exit` event said. */
export interface ExitStatus {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** Why a pooled process stopped: idle, to make room, by `close()`, or on its own. */
export type PoolExitReason = 'idle' | 'evicted' | 'closed' | 'crashed';

/**
 * Where a process listens, and the keep-alive connections to it: a Unix socket (sandboxed
 * processes, whose sockets only the platform can reach) or a loopback port.
 */
export interface LoopbackServer {
  /** The socket's path on the platform's side; set for processes that listen on a Unix socket. */
  readonly socketPath?: string;
  /** The loopback port; 0 for a process that listens on a Unix socket. */
  readonly port: number;
  readonly agent: http.Agent;
}

/** What an adapter's `start` returns for a running, listening process (adapters add their own fields). */
export interface PoolProcess extends LoopbackServer {
  /** The process's pid, which is also its process group id. */
  readonly pid: number;
  /** Resolves once the process has exited (its group may outlive it briefly). */
  readonly exited: Promise<ExitStatus>;
  /** Releases what else the adapter holds for the process (pipes, its uid); called once it and its group are gone. */
  dispose?(): void;
}

/** A process in the pool. The pool keeps these fields; adapters only read them. */
export interface PooledProcess<H extends PoolProcess, R extends string = never> {
  /** The key it serves; null for a spare not yet bound to one (see `spares`). */
  readonly key: string | null;
  /** What `start` returned. */
  readonly handle: H;
  readonly startedAt: number;
  readonly lastUsedAt: number;
  /** Callers that acquired the process and have not released it yet. */
  readonly active: number;
  /** Why it is being stopped; null while it is in service. */
  readonly stopReason: PoolExitReason | R | null;
  /** Set once the process has exited. */
  readonly exit: ExitStatus | null;
  /** Resolves once the process has exited, its group is gone and the exit listeners were told. */
  readonly gone: Promise<void>;
}

/** A process that has gone with its group, as `describeExit` receives it. */
export interface PoolExit<H extends PoolProcess, R extends string = never> extends ExitStatus {
  /** Null for a spare that was never bound. */
  readonly key: string | null;
  readonly handle: H;
  readonly reason: PoolExitReason | R;
}

/**
 * What an adapter tells its pool. `H` is the adapter's handle of a process, `R` its own stop
 * reasons, `Info` and `Exit` the shapes its `stats()` and `onProcessExit` speak in.
 */
export interface ProcessPoolOptions<H extends PoolProcess, R extends string, Info, Exit> {
  /**
   * Starts the process for `key` and resolves once it listens (see `launch`); rejects with the
   * error callers of `acquire` should see, after cleaning up.
   */
  readonly start: (key: string) => Promise<H>;
  /** A process nobody has acquired for this long is stopped. */
  readonly idleTimeoutMs: number;
  /** Most processes alive or starting at once, exempt ones aside. */
  readonly maxProcesses: number;
  /**
   * How long a process must have been idle before a new key may take its place (default the
   * smaller of 10 s and `idleTimeoutMs`).
   */
  readonly minIdleMs?: number;
  /** Longest wait of a new key for a place when every process was used within `minIdleMs` (default 2 s). */
  readonly slotWaitMs?: number;
  /** The clock idle times are read from (default `Date.now`); tests pass their own. */
  readonly now?: () => number;
  /** Keys whose process neither counts towards `maxProcesses` nor is ever evicted (default none). */
  readonly exempt?: (key: string) => boolean;
  /** Makes the error the pool refuses a caller with: the adapter's own "unavailable" error. */
  readonly unavailable: (message: string) => Error;
  /** A process as the adapter's `stats()` shows it. */
  readonly describe: (proc: PooledProcess<H, R>) => Info;
  /** An exit as the adapter reports it to `onProcessExit` listeners. */
  readonly describeExit: (exit: PoolExit<H, R>) => Exit;
  /**
   * Processes kept started ahead of need, bound to no key (default none). Exempt keys never take
   * one. Only for processes whose start involves nothing of the key: whatever is the key's is
   * given to the process by `bind`, before its first use.
   */
  readonly spares?: SpareOptions<H>;
  /** The refusals, in the adapter's words. */
  readonly messages: {
    /** After `close()`. */
    readonly closed: string;
    /** A new key while `maxProcesses` are running and none has been idle for `minIdleMs` within `slotWaitMs`. */
    readonly busy: string;
    /** The process died or was stopped twice between its start and its use. */
    readonly stopped: string;
  };
}

/** How a pool keeps spares. */
export interface SpareOptions<H extends PoolProcess> {
  /** How many to keep (0: none). */
  readonly count: number;
  /** Starts a process bound to no key; resolves once it listens, like `start`. */
  readonly start: () => Promise<H>;
  /**
   * Binds a spare that never served anyone to `key`, before its first use, and returns the handle
   * callers of `acquire` get. On rejection the spare is stopped and the caller gets the error.
   */
  readonly bind: (spare: H, key: string) => Promise<H>;
  /** Told when a spare fails to start; no new spare is started until the next new key arrives. */
  readonly onStartFailed?: (error: unknown) => void;
}

/** What a local runtime adapter offers its owner and its tests besides its port; a pool provides it. */
export interface SupervisedProcesses<Info, Exit> {
  /** The live processes (starting ones are only counted). */
  stats(): { readonly processes: readonly Info[]; readonly starting: number };
  /** Calls `listener` after each process exit; returns a function that removes the listener. */
  onProcessExit(listener: (exit: Exit) => void): () => void;
  /**
   * Stops every process, including ones still starting, and waits until their process groups are
   * gone. Later calls fail cleanly.
   */
  close(): Promise<void>;
}

/** What an adapter with spares offers besides that. */
export interface WarmProcesses {
  /**
   * Starts the spares that are missing, in the background (the platform calls it while it starts,
   * so that the first call after start finds one). Resolves once every spare being started has
   * started or failed; failures go to `onStartFailed` and never reject it.
   */
  warm(): Promise<void>;
}

/** Per-key processes with shared starts, idle stops, an LRU cap, spares and exit reports. */
export interface ProcessPool<H extends PoolProcess, R extends string, Info, Exit> extends SupervisedProcesses<Info, Exit>, WarmProcesses {
  /**
   * The running process for `key`, started if there is none; counts as in use until `release`.
   * Rejects with the start's error, or when the pool is closed or full of busy processes.
   */
  acquire(key: string): Promise<PooledProcess<H, R>>;
  /** Ends one use; the idle timer starts when the last use ends. */
  release(proc: PooledProcess<H, R>): void;
  /**
   * Stops a process: `signal` (default SIGTERM) to its group, SIGKILL after 3 s. Resolves once it
   * is gone; stopping a process that is already stopping or gone only waits.
   */
  stop(proc: PooledProcess<H, R>, reason: PoolExitReason | R, signal?: NodeJS.Signals): Promise<void>;
}

/** What `roomFor` reads of a process. */
export interface RoomCandidate {
  readonly active: number;
  readonly lastUsedAt: number;
  /** Spares are stopped before any key's process. */
  readonly spare: boolean;
  /** Ready to be stopped (started, in service); a process still starting is never chosen. */
  readonly stoppable: boolean;
}

/** What a new key does when the pool may be full. */
export type RoomDecision<P> =
  | { readonly kind: 'room' }
  | { readonly kind: 'stop'; readonly victim: P }
  /** Nothing may go yet; the earliest a process becomes eligible is `retryInMs` from now (null: only a release or an exit can help). */
  | { readonly kind: 'wait'; readonly retryInMs: number | null };

/**
 * The eviction policy, on its own so that it can be tested with any clock: room when fewer than
 * `max` are counted; else a ready spare; else the least recently used idle process that has been
 * idle for at least `minIdleMs`; else wait. Under round-robin load over more keys than fit, every
 * process is used again before it has been idle long, so nothing is stopped and the excess waits
 * (and is refused): each key has at most one cold start per idle period instead of one per call.
 */
export function roomFor<P extends RoomCandidate>(processes: readonly P[], counted: number, max: number, now: number, minIdleMs: number): RoomDecision<P> {
  if (counted < max) return { kind: 'room' };
  const spare = processes.find((p) => p.spare && p.stoppable);
  if (spare) return { kind: 'stop', victim: spare };
  let victim: P | null = null;
  let soonest: number | null = null;
  for (const p of processes) {
    if (p.spare || !p.stoppable || p.active > 0) continue;
    const idleFor = now - p.lastUsedAt;
    if (idleFor >= minIdleMs) {
      if (victim === null || p.lastUsedAt < victim.lastUsedAt) victim = p;
    } else {
      const eligibleIn = minIdleMs - idleFor;
      soonest = soonest === null ? eligibleIn : Math.min(soonest, eligibleIn);
    }
  }
  return victim !== null ? { kind: 'stop', victim } : { kind: 'wait', retryInMs: soonest };
}

/** How `defaultMaxProcesses` sizes a pool. */
export interface PoolSizing {
  /** The machine's memory (`os.totalmem()`). */
  readonly totalMemoryBytes: number;
  /** What one idle process holds, as measured (resident set of its whole process group). */
  readonly processBytes: number;
  /** The share of the machine's memory the pool's processes may hold, 0 to 1. */
  readonly share: number;
  /** Never more than this many, however large the machine. */
  readonly cap: number;
  /** Never fewer than this many, however small the machine. */
  readonly floor: number;
}

/** The processes of `processBytes` each that fit in `share` of the machine's memory, between `floor` and `cap`. */
export function defaultMaxProcesses({ totalMemoryBytes, processBytes, share, cap, floor }: PoolSizing): number {
  const fit = Math.floor((totalMemoryBytes * share) / processBytes);
  return Math.max(floor, Math.min(cap, Number.isFinite(fit) ? fit : floor));
}

/**
 * The default `maxProcesses` of a local runtime pool: as many processes of `processBytes` (an idle
 * one's resident set, measured) as fit in half of the machine's memory, at least 8 and at most 256.
 * A resident set counts the interpreter's shared pages in every process, about twice what a process
 * adds (proportional sets measured: 43 of 68 MB for a Python runtime, 35 of 78 MB for an MCP host),
 * so the two pools together hold about half of the machine at their defaults. The cap keeps the
 * tenants' process limits (SANDBOX_MAX_PROCESSES each) well below `kernel.pid_max`.
 */
export function memorySizedPool(processBytes: number, totalMemoryBytes = totalmem()): number {
  return defaultMaxProcesses({ totalMemoryBytes, processBytes, share: 0.5, cap: 256, floor: 8 });
}

interface Entry<H extends PoolProcess, R extends string> extends PooledProcess<H, R> {
  key: string | null;
  handle: H;
  lastUsedAt: number;
  active: number;
  stopReason: PoolExitReason | R | null;
  exit: ExitStatus | null;
  idleTimer: NodeJS.Timeout | null;
}

interface Slot<H extends PoolProcess, R extends string> {
  /** Set once, right after the slot is made (the slot must exist before its start begins). */
  starting: Promise<Entry<H, R>>;
  /** Null while the process is starting. */
  process: Entry<H, R> | null;
  /** True while the key waits for room: it holds no place yet, so it is not counted. */
  waitingForRoom?: boolean;
}

export function createProcessPool<H extends PoolProcess, R extends string, Info, Exit>(
  options: ProcessPoolOptions<H, R, Info, Exit>,
): ProcessPool<H, R, Info, Exit> {
  const slots = new Map<string, Slot<H, R>>();
  /** Spares, ready or starting, oldest first; a taken spare leaves this list at once. */
  const spares: Slot<H, R>[] = [];
  const exitListeners = new Set<(exit: Exit) => void>();
  const exempt = options.exempt ?? (() => false);
  const spareCount = options.spares?.count ?? 0;
  const now = options.now ?? Date.now;
  const minIdleMs = options.minIdleMs ?? Math.min(10_000, options.idleTimeoutMs);
  const slotWaitMs = options.slotWaitMs ?? 2_000;
  /** New keys waiting for room, woken whenever a process is released, stops or exits. */
  const roomWaiters = new Set<() => void>();
  let closed = false;

  function wakeRoomWaiters(): void {
    for (const wake of [...roomWaiters]) wake();
  }

  function notifyExit(exit: Exit): void {
    for (const listener of exitListeners) {
      try {
        listener(exit);
      } catch {
        // a listener's failure must not disturb the supervisor
      }
    }
  }

  function forget(entry: Entry<H, R>): void {
    if (entry.key === null) {
      const index = spares.findIndex((slot) => slot.process === entry);
      if (index >= 0) spares.splice(index, 1);
      return;
    }
    const slot = slots.get(entry.key);
    if (slot?.process === entry) slots.delete(entry.key);
    wakeRoomWaiters();
  }

  function clearIdleTimer(entry: Entry<H, R>): void {
    if (entry.idleTimer !== null) clearTimeout(entry.idleTimer);
    entry.idleTimer = null;
  }

  function armIdleTimer(entry: Entry<H, R>): void {
    clearIdleTimer(entry);
    entry.idleTimer = setTimeout(() => {
      if (entry.active === 0) void stop(entry, 'idle');
    }, options.idleTimeoutMs);
    entry.idleTimer.unref();
  }

  function stop(entry: Entry<H, R>, reason: PoolExitReason | R, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    if (entry.exit !== null || entry.stopReason !== null) return entry.gone;
    entry.stopReason = reason;
    clearIdleTimer(entry);
    forget(entry);
    signalGroup(entry.handle.pid, signal);
    const escalate = setTimeout(() => signalGroup(entry.handle.pid, 'SIGKILL'), 3000);
    escalate.unref();
    return entry.gone.finally(() => clearTimeout(escalate));
  }

  /** Processes that count towards `maxProcesses`: keys' (exempt ones and waiting ones aside) and spares, started or starting. */
  function counted(): number {
    let count = spares.length;
    for (const [key, slot] of slots) if (!exempt(key) && slot.waitingForRoom !== true) count++;
    return count;
  }

  /** What `roomFor` weighs: spares and keys' processes, exempt ones aside. */
  function candidates(): (RoomCandidate & { readonly entry: Entry<H, R> })[] {
    const list: (RoomCandidate & { readonly entry: Entry<H, R> })[] = [];
    const add = (entry: Entry<H, R> | null, spare: boolean) => {
      if (entry === null) return;
      list.push({ entry, spare, active: entry.active, lastUsedAt: entry.lastUsedAt, stoppable: entry.exit === null && entry.stopReason === null });
    };
    for (const slot of spares) add(slot.process, true);
    for (const [key, slot] of slots) if (!exempt(key)) add(slot.process, false);
    return list;
  }

  /**
   * Takes a place for one more process if there is one, stopping a process to free it when
   * `roomFor` says so; otherwise says how long until one may be free.
   */
  function takeRoom(): { readonly taken: true } | { readonly taken: false; readonly retryInMs: number | null } {
    const decision = roomFor(candidates(), counted(), options.maxProcesses, now(), minIdleMs);
    if (decision.kind === 'wait') return { taken: false, retryInMs: decision.retryInMs };
    // Forgotten at once, so the place is free now; the process goes in the background.
    if (decision.kind === 'stop') void stop(decision.victim.entry, 'evicted');
    return { taken: true };
  }

  /**
   * Waits up to `slotWaitMs` for a place for `slot`'s key (see `roomFor`), re-checking after each
   * release, stop or exit; rejects with the "busy" error after that. The place is the slot's from
   * the moment it is taken (it counts again), so no other key or spare can take it meanwhile.
   */
  async function waitForRoom(slot: Slot<H, R>, firstRetryInMs: number | null): Promise<void> {
    const deadline = now() + slotWaitMs;
    for (let retryInMs = firstRetryInMs; ;) {
      const left = deadline - now();
      if (left <= 0) throw options.unavailable(options.messages.busy);
      await roomChange(Math.min(left, retryInMs ?? left));
      if (closed) throw options.unavailable(options.messages.closed);
      const room = takeRoom();
      if (room.taken) {
        slot.waitingForRoom = false;
        return;
      }
      retryInMs = room.retryInMs;
    }
  }

  /** Resolves on the next release, stop or exit, or after `ms`. */
  function roomChange(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        roomWaiters.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, Math.max(1, ms));
      roomWaiters.add(wake);
    });
  }

  async function start(key: string | null, run: () => Promise<H>): Promise<Entry<H, R>> {
    const handle = await run();
    const startedAt = now();
    const entry: Entry<H, R> = {
      key,
      handle,
      startedAt,
      lastUsedAt: startedAt,
      active: 0,
      stopReason: null,
      exit: null,
      idleTimer: null,
      gone: handle.exited.then((exit) => afterExit(entry, exit)),
    };
    return entry;
  }

  /** Cleans up after a process exited, however it happened, and tells the listeners. */
  async function afterExit(entry: Entry<H, R>, exit: ExitStatus): Promise<void> {
    entry.exit = exit;
    clearIdleTimer(entry);
    forget(entry);
    entry.handle.agent.destroy();
    // The process is gone; make sure whatever it started follows at once. Only then is what the
    // adapter holds for it released: its sandbox's uid must not serve anyone else while any
    // process of the group still counts against its limit.
    await reapGroup(entry.handle.pid);
    entry.handle.dispose?.();
    notifyExit(options.describeExit({ key: entry.key, handle: entry.handle, reason: entry.stopReason ?? 'crashed', code: exit.code, signal: exit.signal }));
    // A key's process that went (idle, evicted) may leave room for a spare. A spare that went
    // is not replaced here: one that keeps dying would otherwise be restarted in a loop.
    if (entry.key !== null && !exempt(entry.key)) refill();
  }

  /** Starts spares until there are `count` of them, while there is room; never evicts for one. */
  function refill(): void {
    if (options.spares === undefined) return;
    const { start: startSpare, onStartFailed } = options.spares;
    // Keys waiting for room come first: a spare never takes the place one of them waits for.
    while (!closed && roomWaiters.size === 0 && spares.length < spareCount && counted() < options.maxProcesses) {
      const slot: Slot<H, R> = {
        starting: start(null, startSpare).then(
          (entry) => {
            slot.process = entry;
            if (closed) void stop(entry, 'closed');
            return entry;
          },
          (error: unknown) => {
            const index = spares.indexOf(slot);
            if (index >= 0) spares.splice(index, 1);
            onStartFailed?.(error);
            throw error;
          },
        ),
        process: null,
      };
      // Reported through onStartFailed; a caller that took the spare sees the failure itself.
      slot.starting.catch(() => undefined);
      spares.push(slot);
    }
  }

  /** Takes a spare for a new key: a ready one if any, else the one that started first. */
  function takeSpare(): Slot<H, R> | null {
    const index = Math.max(
      0,
      spares.findIndex((slot) => slot.process !== null && slot.process.exit === null && slot.process.stopReason === null),
    );
    const [taken] = spares.splice(index, 1);
    return taken ?? null;
  }

  /**
   * A taken spare bound to `key`. A spare that failed to start or died meanwhile is replaced by a
   * process started for the key; the spare had counted towards the limit, so there is room.
   */
  async function adopt(spare: Slot<H, R>, key: string): Promise<Entry<H, R>> {
    const entry = await spare.starting.catch(() => null);
    if (entry === null || entry.exit !== null || entry.stopReason !== null) return start(key, () => options.start(key));
    entry.key = key;
    try {
      entry.handle = await options.spares!.bind(entry.handle, key);
    } catch (error) {
      await stop(entry, 'evicted');
      throw error;
    }
    return entry;
  }

  async function acquire(key: string): Promise<Entry<H, R>> {
    for (let attempt = 0; ; attempt++) {
      if (closed) throw options.unavailable(options.messages.closed);
      let slot = slots.get(key);
      if (!slot) {
        const spare = exempt(key) ? null : takeSpare();
        const room = spare === null && !exempt(key) ? takeRoom() : ({ taken: true } as const);
        // Set now: concurrent first calls share one wait and one start. A key waiting for room
        // holds no place yet, so it is not counted.
        const created: Slot<H, R> = { starting: Promise.resolve(null as never), process: null, waitingForRoom: !room.taken };
        slots.set(key, created);
        created.starting = (room.taken ? Promise.resolve() : waitForRoom(created, room.retryInMs))
          .then(() => (spare === null ? start(key, () => options.start(key)) : adopt(spare, key)))
          .then(
            (entry) => {
              created.process = entry;
              if (closed) void stop(entry, 'closed');
              return entry;
            },
            (error: unknown) => {
              if (slots.get(key) === created) slots.delete(key);
              throw error;
            },
          );
        slot = created;
        // The next new key finds a spare again.
        if (!exempt(key)) refill();
      }
      const entry = await slot.starting;
      if (entry.exit === null && entry.stopReason === null) {
        entry.active++;
        entry.lastUsedAt = now();
        clearIdleTimer(entry);
        return entry;
      }
      // It died or is being stopped between start and use: take a fresh one (once).
      if (attempt >= 1) throw options.unavailable(options.messages.stopped);
      forget(entry);
    }
  }

  function release(entry: Entry<H, R>): void {
    entry.active--;
    entry.lastUsedAt = now();
    if (entry.active === 0 && entry.exit === null && entry.stopReason === null) armIdleTimer(entry);
    wakeRoomWaiters();
  }

  function stats() {
    const processes: Info[] = [];
    let starting = 0;
    for (const slot of [...slots.values(), ...spares]) {
      if (slot.process === null) starting++;
      else processes.push(options.describe(slot.process));
    }
    return { processes, starting };
  }

  async function close(): Promise<void> {
    closed = true;
    wakeRoomWaiters();
    const pending = [...slots.values(), ...spares].map(async (slot) => {
      try {
        await stop(await slot.starting, 'closed');
      } catch {
        // a process that failed to start has already been cleaned up
      }
    });
    await Promise.all(pending);
  }

  return {
    acquire,
    // Every PooledProcess an adapter holds came from acquire(), so it is one of this pool's entries.
    release: (proc) => release(proc as Entry<H, R>),
    stop: (proc, reason, signal) => stop(proc as Entry<H, R>, reason, signal),
    stats,
    close,
    async warm() {
      refill();
      await Promise.all(spares.map((slot) => slot.starting.catch(() => undefined)));
    },
    onProcessExit(listener) {
      exitListeners.add(listener);
      return () => exitListeners.delete(listener);
    },
  };
}

/** How `launch` words and reports a failed start. */
export interface LaunchOptions {
  /** The process as failure messages name it, e.g. `the MCP host`. */
  readonly name: string;
  /** Where the process runs, named when it exits during start (a wrong directory is a likely cause). */
  readonly location?: string;
  /** Longest wait for the `listening` line. */
  readonly startTimeoutMs: number;
  /** The message for a process that could not be spawned at all (e.g. its binary is missing). */
  readonly spawnFailed: (error: NodeJS.ErrnoException) => string;
  /** Makes the error a failed start rejects with: the adapter's own "unavailable" error. */
  readonly unavailable: (message: string) => Error;
  /** Receives the process's stderr lines; the last few also go into start failure messages. */
  readonly onStderr?: (line: string) => void;
  /**
   * Maps the socket path a process announces (as it names it, inside its sandbox) to the path the
   * platform connects to; a process that announces a socket without this option fails to start.
   */
  readonly socketOnHost?: (announced: string) => string;
}

/** A process that has announced where it listens. */
export interface Launched extends PoolProcess {
  /** The process's stdout lines after the `listening` line. */
  readonly stdout: Interface;
  /** The whole `listening` line, for fields an adapter's process adds (e.g. `egressPort`). */
  readonly announced: Readonly<Record<string, unknown>>;
}

/**
 * Watches a just-spawned, detached child until it prints its `listening` line. Call it right
 * after `spawn` (before any await) so that no early output or spawn error is missed. On failure
 * the child's group is killed and gone before the promise rejects, with a message a user can act on.
 */
export async function launch(child: ChildProcess, options: LaunchOptions): Promise<Launched> {
  if (child.pid !== undefined) trackGroup(child.pid);
  const stderrTail: string[] = [];
  createInterface({ input: child.stderr! }).on('line', (line) => {
    stderrTail.push(line);
    if (stderrTail.length > 20) stderrTail.shift();
    options.onStderr?.(line);
  });
  const exited = new Promise<ExitStatus>((resolve) => {
    child.once('exit', (code, signal) => resolve({ code, signal }));
    // A spawn failure emits 'error' and no 'exit'; later errors (a failed kill) change nothing.
    child.on('error', () => resolve({ code: null, signal: null }));
  });
  const stdout = createInterface({ input: child.stdout! });
  try {
    const announced = await waitForListening(child, stdout, exited, stderrTail, options);
    const agent = new http.Agent({ keepAlive: true, maxFreeSockets: 8 });
    const where = typeof announced.socket === 'string' ? { socketPath: options.socketOnHost!(announced.socket), port: 0 } : { port: announced.port as number };
    return { pid: child.pid!, ...where, agent, exited, stdout, announced };
  } catch (error) {
    if (child.pid !== undefined) {
      signalGroup(child.pid, 'SIGKILL');
      await exited;
      await reapGroup(child.pid);
    }
    child.stdin?.destroy();
    throw error;
  }
}

/** Resolves with the `listening` line; rejects with a message a user can act on. */
function waitForListening(
  child: ChildProcess,
  lines: Interface,
  exited: Promise<ExitStatus>,
  stderrTail: readonly string[],
  options: LaunchOptions,
): Promise<Record<string, unknown>> {
  const { name, startTimeoutMs, unavailable } = options;
  return new Promise<Record<string, unknown>>((resolve, reject) => {
    const tail = () => (stderrTail.length > 0 ? `: ${stderrTail.slice(-5).join(' | ')}` : '');
    const timer = setTimeout(() => finish(unavailable(`${name} did not start within ${startTimeoutMs} ms${tail()}`)), startTimeoutMs);
    const finish = (outcome: Record<string, unknown> | Error) => {
      clearTimeout(timer);
      lines.removeAllListeners('line');
      // Later stdout output is not part of the handshake; keep the pipe drained.
      child.stdout?.resume();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    lines.once('line', (line) => finish(listening(line, options) ?? unavailable(`${name} printed an unexpected first line: ${line.slice(0, 200)}`)));
    child.once('error', (error: NodeJS.ErrnoException) => finish(unavailable(options.spawnFailed(error))));
    void exited.then(({ code, signal }) => {
      const where = options.location === undefined ? '' : ` in ${options.location}`;
      // Give the stderr reader a moment to take in the last lines, which usually say why.
      setTimeout(() => finish(unavailable(`${name}${where} exited during start (${signal ?? `code ${code}`})${tail()}`)), 50);
    });
  });
}

/** The parsed `listening` line, or null when the line is not one this adapter can use. */
function listening(line: string, options: LaunchOptions): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null) return null;
    const fields = parsed as Record<string, unknown>;
    if (fields.event !== 'listening') return null;
    if (typeof fields.socket === 'string') return options.socketOnHost ? fields : null;
    return typeof fields.port === 'number' ? fields : null;
  } catch {
    return null;
  }
}

/**
 * The start of a pooled process's environment: `names` as `parent` has them (set and not empty),
 * and a UTF-8 locale. Nothing else, so that the platform's own variables never reach user code.
 */
export function inheritedEnv(parent: NodeJS.ProcessEnv, names: readonly string[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of names) {
    const value = parent[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  env.LANG ??= 'C.UTF-8';
  return env;
}

/** Every process group `launch` started and not yet reaped, including ones still starting. */
const liveGroups = new Set<number>();
let exitHookInstalled = false;

function trackGroup(pgid: number): void {
  if (!exitHookInstalled) {
    // Last resort when the platform exits without closing its pools (an uncaught error): no
    // runtime process outlives it. One listener serves every pool.
    process.on('exit', () => {
      for (const live of liveGroups) signalGroup(live, 'SIGKILL');
    });
    exitHookInstalled = true;
  }
  liveGroups.add(pgid);
}

/** Kills what is left of the group of an exited process and waits until it is gone. */
async function reapGroup(pgid: number): Promise<void> {
  signalGroup(pgid, 'SIGKILL');
  await waitForGroupGone(pgid);
  liveGroups.delete(pgid);
}

/** Sends one POST to a pooled process and resolves once the response headers are in. */
export function post(
  server: LoopbackServer,
  path: string,
  body: string,
  signal: AbortSignal,
  headers: Readonly<Record<string, string>> = {},
): Promise<{ request: http.ClientRequest; response: http.IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      agent: server.agent,
      ...(server.socketPath !== undefined ? { socketPath: server.socketPath } : { host: '127.0.0.1', port: server.port }),
      method: 'POST',
      path,
      headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      signal,
    });
    // Errors after the response began surface through the response stream; this keeps them handled.
    request.on('error', reject);
    request.once('response', (response) => resolve({ request, response }));
    request.end(body);
  });
}

/** One authorized GET to a pooled process (`/health`); resolves once the response headers are in. */
export function get(server: LoopbackServer, path: string, authorization: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      agent: server.agent,
      ...(server.socketPath !== undefined ? { socketPath: server.socketPath } : { host: '127.0.0.1', port: server.port }),
      method: 'GET',
      path,
      headers: { authorization },
      signal: AbortSignal.timeout(10_000),
    });
    request.on('error', reject);
    request.once('response', resolve);
    request.end();
  });
}

/** A whole response body, up to `maxBytes`: error answers, check results, MCP answers. */
export async function readBody(response: http.IncomingMessage, maxBytes = 1024 * 1024): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of response as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      response.destroy();
      throw new Error(`the runtime's answer exceeded ${maxBytes} bytes`);
    }
    parts.push(chunk);
  }
  return Buffer.concat(parts).toString('utf8');
}

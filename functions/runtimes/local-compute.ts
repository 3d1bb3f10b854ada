/**
 * The local Compute adapter (`npm start`): one Python runtime server per tenant, started on first
 * use, kept warm, restarted after it dies, stopped when idle, and at most `maxProcesses` at once.
 * Each process gets its own process group so that stopping it also stops its fork server and any
 * run it has in flight. The server's protocol is in `python-runtime/README.md`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../core/logger.ts';
import type { Compute, Invocation, RuntimeEvent, SourceViolation } from './compute.ts';
import {
  COMPUTE_ERROR,
  errorEvent,
  invocationBody,
  parseCheckResult,
  RuntimeHttpError,
  runtimeEvents,
  type ErrorEvent,
} from './runtime-stream.ts';

const DEFAULT_RUNTIME_DIR = fileURLToPath(new URL('../../python-runtime/', import.meta.url));

/** Variables the runtime server may inherit; everything else in the platform's environment stays out. */
const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'PYENV_ROOT', 'PYENV_VERSION'] as const;

export interface LocalComputeOptions {
  /** Directory that holds `platform_runtime/` (default: the repository's `python-runtime/`). */
  readonly runtimeDir?: string;
  /** Python interpreter, a path or a name looked up on PATH (default `python3`). */
  readonly python?: string;
  /** Extra arguments for the runtime server, e.g. `['--require-seccomp']`. */
  readonly serverArgs?: readonly string[];
  /** A process without runs for this long is stopped (default 10 minutes). */
  readonly idleTimeoutMs?: number;
  /** Most tenant processes alive at once (default 32); the checker process is not counted. */
  readonly maxProcesses?: number;
  /** Longest wait for a new process's `listening` line (default 30 s: the fork server preloads libraries). */
  readonly startTimeoutMs?: number;
  /** Time beyond an invocation's `timeoutMs` after which this side stops waiting for the runtime (default 30 s). */
  readonly watchdogGraceMs?: number;
  /**
   * Extra directories on the runtime's Python path, where frameworks user code may import are
   * installed (e.g. a site directory holding `strands`), or a test's stand-in MCP client.
   */
  readonly pythonPath?: readonly string[];
  /** Receives the runtime servers' own stderr lines (user code output arrives as `log` events instead). */
  readonly logger?: Logger;
}

/** One runtime process, as `stats()` shows it. */
export interface RuntimeProcessInfo {
  /** `tenant`: runs one tenant's code; `checker`: answers `/check` only and never runs code. */
  readonly role: 'tenant' | 'checker';
  readonly tenantId: string | null;
  /** The server's pid, which is also its process group id. */
  readonly pid: number;
  readonly port: number;
  readonly activeRuns: number;
  readonly startedAt: number;
  readonly lastUsedAt: number;
}

export type ProcessExitReason = 'idle' | 'evicted' | 'closed' | 'crashed';

/** Reported to `onProcessExit` listeners once a runtime process (and its group) has gone. */
export interface RuntimeProcessExit {
  readonly role: 'tenant' | 'checker';
  readonly tenantId: string | null;
  readonly pid: number;
  /** Why: stopped when idle, stopped to make room, stopped by `close()`, or died on its own. */
  readonly reason: ProcessExitReason;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** The local adapter: the Compute port plus what its owner and its tests need. */
export interface LocalCompute extends Compute {
  /** The live processes (starting ones are only counted). */
  stats(): { readonly processes: readonly RuntimeProcessInfo[]; readonly starting: number };
  /** Calls `listener` after each process exit; returns a function that removes the listener. */
  onProcessExit(listener: (exit: RuntimeProcessExit) => void): () => void;
  /** Stops every process and waits until their process groups are gone. Later calls fail cleanly. */
  close(): Promise<void>;
}

interface RuntimeProcess {
  readonly key: string;
  readonly role: 'tenant' | 'checker';
  readonly tenantId: string | null;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  readonly agent: http.Agent;
  readonly startedAt: number;
  lastUsedAt: number;
  activeRuns: number;
  idleTimer: NodeJS.Timeout | null;
  stopReason: ProcessExitReason | null;
  exited: boolean;
  /** Resolves once the server has exited and its process group is gone. */
  readonly gone: Promise<void>;
}

interface Slot {
  starting: Promise<RuntimeProcess>;
  process: RuntimeProcess | null;
}

/** A failure to provide a runtime process; reported as RUNTIME_UNAVAILABLE. */
class RuntimeUnavailableError extends Error {}

const CHECKER_KEY = 'checker';
const tenantKey = (tenantId: string) => `tenant:${tenantId}`;

export function createLocalCompute(options: LocalComputeOptions = {}): LocalCompute {
  const settings = {
    runtimeDir: options.runtimeDir ?? DEFAULT_RUNTIME_DIR,
    python: options.python ?? 'python3',
    serverArgs: options.serverArgs ?? [],
    idleTimeoutMs: options.idleTimeoutMs ?? 10 * 60_000,
    maxProcesses: options.maxProcesses ?? 32,
    startTimeoutMs: options.startTimeoutMs ?? 30_000,
    watchdogGraceMs: options.watchdogGraceMs ?? 30_000,
  };
  const slots = new Map<string, Slot>();
  /** Every server spawned and not yet gone, including ones still starting. */
  const livePids = new Set<number>();
  const exitListeners = new Set<(exit: RuntimeProcessExit) => void>();
  let closed = false;

  // Last resort when the platform exits without close() (an uncaught error): no runtime outlives it.
  const killAllOnExit = () => {
    for (const pid of livePids) signalGroup(pid, 'SIGKILL');
  };
  process.on('exit', killAllOnExit);

  function notifyExit(exit: RuntimeProcessExit): void {
    for (const listener of exitListeners) {
      try {
        listener(exit);
      } catch {
        // a listener's failure must not disturb the supervisor
      }
    }
  }

  function forget(proc: RuntimeProcess): void {
    const slot = slots.get(proc.key);
    if (slot?.process === proc) slots.delete(proc.key);
  }

  function armIdleTimer(proc: RuntimeProcess): void {
    clearIdleTimer(proc);
    proc.idleTimer = setTimeout(() => {
      if (proc.activeRuns === 0) void stopProcess(proc, 'idle');
    }, settings.idleTimeoutMs);
    proc.idleTimer.unref();
  }

  /** Stops a process: SIGTERM to its group, SIGKILL if it is still there after 3 s. */
  function stopProcess(proc: RuntimeProcess, reason: ProcessExitReason): Promise<void> {
    if (proc.exited || proc.stopReason !== null) return proc.gone;
    proc.stopReason = reason;
    clearIdleTimer(proc);
    forget(proc);
    signalGroup(proc.pid, 'SIGTERM');
    const escalate = setTimeout(() => signalGroup(proc.pid, 'SIGKILL'), 3000);
    escalate.unref();
    return proc.gone.finally(() => clearTimeout(escalate));
  }

  /** Makes room for one more tenant process by stopping the least recently used idle one. */
  function makeRoom(): void {
    const tenantSlots = [...slots.entries()].filter(([key]) => key !== CHECKER_KEY);
    if (tenantSlots.length < settings.maxProcesses) return;
    let victim: RuntimeProcess | null = null;
    for (const [, slot] of tenantSlots) {
      const proc = slot.process;
      if (proc && proc.activeRuns === 0 && proc.stopReason === null && (victim === null || proc.lastUsedAt < victim.lastUsedAt)) victim = proc;
    }
    if (victim === null) {
      throw new RuntimeUnavailableError(`all ${settings.maxProcesses} runtime processes are busy; try again when a run has finished`);
    }
    void stopProcess(victim, 'evicted');
  }

  async function startProcess(key: string, role: 'tenant' | 'checker', tenantId: string | null): Promise<RuntimeProcess> {
    const child = spawn(settings.python, ['-m', 'platform_runtime.server', '--host', '127.0.0.1', '--port', '0', '--quiet', ...settings.serverArgs], {
      cwd: settings.runtimeDir,
      env: { ...runtimeEnv(process.env), ...(options.pythonPath?.length ? { PYTHONPATH: options.pythonPath.join(':') } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: stopping the group also stops the fork server and running children.
      detached: true,
    });
    if (child.pid !== undefined) livePids.add(child.pid);
    const stderrTail: string[] = [];
    createInterface({ input: child.stderr! }).on('line', (line) => {
      stderrTail.push(line);
      if (stderrTail.length > 20) stderrTail.shift();
      options.logger?.warn('python runtime stderr', { tenantId, pid: child.pid, line });
    });
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      // A spawn failure emits 'error' and no 'exit'; later errors (a failed kill) change nothing.
      child.on('error', () => resolve({ code: null, signal: null }));
    });
    let port: number;
    try {
      port = await waitForListening(child, exited, stderrTail, settings);
    } catch (error) {
      if (child.pid !== undefined) {
        signalGroup(child.pid, 'SIGKILL');
        await exited;
        await waitForGroupGone(child.pid);
        livePids.delete(child.pid);
      }
      throw error;
    }
    const pid = child.pid!;
    const now = Date.now();
    const proc: RuntimeProcess = {
      key,
      role,
      tenantId,
      child,
      pid,
      port,
      agent: new http.Agent({ keepAlive: true, maxFreeSockets: 8 }),
      startedAt: now,
      lastUsedAt: now,
      activeRuns: 0,
      idleTimer: null,
      stopReason: null,
      exited: false,
      gone: exited.then(({ code, signal }) => afterExit(proc, code, signal)),
    };
    return proc;
  }

  /** Cleans up after a server exited, however it happened, and tells the listeners. */
  async function afterExit(proc: RuntimeProcess, code: number | null, signal: NodeJS.Signals | null): Promise<void> {
    proc.exited = true;
    clearIdleTimer(proc);
    forget(proc);
    proc.agent.destroy();
    // The server is gone; make sure its fork server and children follow at once.
    signalGroup(proc.pid, 'SIGKILL');
    await waitForGroupGone(proc.pid);
    livePids.delete(proc.pid);
    notifyExit({ role: proc.role, tenantId: proc.tenantId, pid: proc.pid, reason: proc.stopReason ?? 'crashed', code, signal });
  }

  /** The running process for `key`, started (once, however many callers wait) if there is none. */
  async function acquire(key: string, role: 'tenant' | 'checker', tenantId: string | null): Promise<RuntimeProcess> {
    for (let attempt = 0; ; attempt++) {
      if (closed) throw new RuntimeUnavailableError('the local runtime supervisor is closed');
      let slot = slots.get(key);
      if (!slot) {
        if (role === 'tenant') makeRoom();
        const starting = startProcess(key, role, tenantId).then(
          (proc) => {
            created.process = proc;
            if (closed) void stopProcess(proc, 'closed');
            return proc;
          },
          (error: unknown) => {
            if (slots.get(key) === created) slots.delete(key);
            throw error;
          },
        );
        const created: Slot = { starting, process: null };
        slots.set(key, created);
        slot = created;
      }
      const proc = await slot.starting;
      if (!proc.exited && proc.stopReason === null) {
        proc.activeRuns++;
        proc.lastUsedAt = Date.now();
        clearIdleTimer(proc);
        return proc;
      }
      // It died or is being stopped between start and use: take a fresh one (once).
      if (attempt >= 1) throw new RuntimeUnavailableError('the runtime process stopped before it could be used');
      forget(proc);
    }
  }

  function release(proc: RuntimeProcess): void {
    proc.activeRuns--;
    proc.lastUsedAt = Date.now();
    if (proc.activeRuns === 0 && !proc.exited && proc.stopReason === null) armIdleTimer(proc);
  }

  async function* invoke(tenantId: string, invocation: Invocation, signal?: AbortSignal): AsyncGenerator<RuntimeEvent, void, undefined> {
    const startedAt = Date.now();
    const body = invocationBody(invocation);
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) {
        yield* failed(errorEvent(COMPUTE_ERROR.aborted, 'the invocation was aborted'), startedAt);
        return;
      }
      let proc: RuntimeProcess;
      try {
        proc = await acquire(tenantKey(tenantId), 'tenant', tenantId);
      } catch (error) {
        yield* failed(errorEvent(COMPUTE_ERROR.unavailable, messageOf(error)), startedAt);
        return;
      }
      try {
        const outcome = yield* runOn(proc, body, invocation.timeoutMs, signal, startedAt);
        // Refused before the run began because the process had just died: once more on a new one.
        if (outcome === 'retry' && attempt === 0) continue;
        if (outcome === 'retry') yield* failed(errorEvent(COMPUTE_ERROR.unavailable, 'the runtime process could not be reached'), startedAt);
        return;
      } finally {
        release(proc);
      }
    }
  }

  /** One `/invoke` exchange. Returns `retry` when the process was found dead before the run began. */
  async function* runOn(
    proc: RuntimeProcess,
    body: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    startedAt: number,
  ): AsyncGenerator<RuntimeEvent, 'done' | 'retry', undefined> {
    const watchdog = new AbortController();
    const watchdogTimer = setTimeout(() => watchdog.abort(), timeoutMs + settings.watchdogGraceMs);
    watchdogTimer.unref();
    const cancel = new AbortController(); // the consumer stopped iterating
    const combined = AbortSignal.any([watchdog.signal, cancel.signal, ...(signal ? [signal] : [])]);
    let childPid: number | null = null;
    let runtimeEnded = false;
    let request: http.ClientRequest | null = null;
    try {
      let response: http.IncomingMessage;
      try {
        ({ request, response } = await openRequest(proc, '/invoke', body, combined));
      } catch (error) {
        if (!combined.aborted && (await diedMeanwhile(proc))) return 'retry';
        yield* failed(classify(error), startedAt);
        return 'done';
      }
      if (response.statusCode !== 200) {
        yield* failed(classify(RuntimeHttpError.fromBody(response.statusCode ?? 0, await readBody(response))), startedAt);
        return 'done';
      }
      yield* runtimeEvents(response, {
        startedAt,
        onStart: (pid) => (childPid = pid),
        onRuntimeEnd: () => (runtimeEnded = true),
        classifyFailure: classify,
        truncated: () =>
          combined.aborted ? classify(new Error('the request was cancelled')) : errorEvent(COMPUTE_ERROR.protocol, 'the runtime ended the stream without an end event'),
      });
      return 'done';
    } finally {
      clearTimeout(watchdogTimer);
      if (!runtimeEnded) {
        cancel.abort();
        request?.destroy();
        // The runtime notices a closed connection only when the run next writes an event; a run
        // that is silent (sleeping, waiting on a model) would go on until its timeout.
        if (childPid !== null) killRunChild(proc.pid, childPid);
      }
    }

    function classify(error: unknown): ErrorEvent {
      if (error instanceof RuntimeHttpError) return errorEvent(error.code, error.message);
      if (signal?.aborted) return errorEvent(COMPUTE_ERROR.aborted, 'the invocation was aborted');
      if (watchdog.signal.aborted) return errorEvent('TIMEOUT', `the runtime did not end the invocation within its timeout of ${timeoutMs} ms`);
      if (proc.stopReason === 'closed') return errorEvent(COMPUTE_ERROR.unavailable, 'the runtime was stopped because the platform is shutting down');
      if (request !== null) return errorEvent(COMPUTE_ERROR.crashed, `the runtime process stopped during the invocation (${messageOf(error)})`);
      return errorEvent(COMPUTE_ERROR.unavailable, `the runtime process could not be reached (${messageOf(error)})`);
    }
  }

  async function check(source: string): Promise<{ ok: boolean; violations: SourceViolation[] }> {
    const proc = await acquire(CHECKER_KEY, 'checker', null);
    try {
      const { response } = await openRequest(proc, '/check', JSON.stringify({ source }), AbortSignal.timeout(30_000));
      const body = await readBody(response);
      if (response.statusCode !== 200) throw RuntimeHttpError.fromBody(response.statusCode ?? 0, body);
      return parseCheckResult(body);
    } finally {
      release(proc);
    }
  }

  function stats() {
    const processes: RuntimeProcessInfo[] = [];
    let starting = 0;
    for (const slot of slots.values()) {
      const proc = slot.process;
      if (proc === null) starting++;
      else {
        processes.push({
          role: proc.role,
          tenantId: proc.tenantId,
          pid: proc.pid,
          port: proc.port,
          activeRuns: proc.activeRuns,
          startedAt: proc.startedAt,
          lastUsedAt: proc.lastUsedAt,
        });
      }
    }
    return { processes, starting };
  }

  async function close(): Promise<void> {
    closed = true;
    const pending = [...slots.values()].map(async (slot) => {
      try {
        await stopProcess(await slot.starting, 'closed');
      } catch {
        // a process that failed to start has already been cleaned up
      }
    });
    await Promise.all(pending);
    process.off('exit', killAllOnExit);
  }

  return {
    check,
    invoke,
    stats,
    close,
    onProcessExit(listener) {
      exitListeners.add(listener);
      return () => exitListeners.delete(listener);
    },
  };
}

/** The runtime server's whole environment: a few basics, never the platform's own variables. */
export function runtimeEnv(parent: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = parent[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  env.LANG ??= 'C.UTF-8';
  env.PYTHONDONTWRITEBYTECODE = '1';
  env.PYTHONUNBUFFERED = '1';
  return env;
}

/** Resolves with the port from the server's `listening` line; rejects with a message a user can act on. */
function waitForListening(
  child: ChildProcess,
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>,
  stderrTail: readonly string[],
  settings: { python: string; runtimeDir: string; startTimeoutMs: number },
): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    const timer = setTimeout(() => finish(new RuntimeUnavailableError(`the Python runtime did not start within ${settings.startTimeoutMs} ms${tail()}`)), settings.startTimeoutMs);
    const tail = () => (stderrTail.length > 0 ? `: ${stderrTail.slice(-5).join(' | ')}` : '');
    const finish = (outcome: number | Error) => {
      clearTimeout(timer);
      lines.removeAllListeners('line');
      // Later stdout output is not part of the protocol; keep the pipe drained.
      child.stdout?.resume();
      if (typeof outcome === 'number') resolve(outcome);
      else reject(outcome);
    };
    lines.once('line', (line) => {
      const port = listeningPort(line);
      if (port === null) finish(new RuntimeUnavailableError(`the Python runtime printed an unexpected first line: ${line.slice(0, 200)}`));
      else finish(port);
    });
    child.once('error', (error: NodeJS.ErrnoException) => {
      finish(
        new RuntimeUnavailableError(
          error.code === 'ENOENT'
            ? `${settings.python} was not found; install Python 3.11 or newer (or set the python option) to run agents and actions locally`
            : `the Python runtime could not be started (${error.message})`,
        ),
      );
    });
    void exited.then(({ code, signal }) => {
      // Give the stderr reader a moment to take in the last lines, which usually say why.
      setTimeout(() => finish(new RuntimeUnavailableError(`the Python runtime in ${settings.runtimeDir} exited during start (${signal ?? `code ${code}`})${tail()}`)), 50);
    });
  });
}

function listeningPort(line: string): number | null {
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null) return null;
    const { event, port } = parsed as { event?: unknown; port?: unknown };
    return event === 'listening' && typeof port === 'number' ? port : null;
  } catch {
    return null;
  }
}

/** Sends one POST and resolves once the response headers are in. */
function openRequest(
  proc: RuntimeProcess,
  path: '/invoke' | '/check',
  body: string,
  signal: AbortSignal,
): Promise<{ request: http.ClientRequest; response: http.IncomingMessage }> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      agent: proc.agent,
      host: '127.0.0.1',
      port: proc.port,
      method: 'POST',
      path,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      signal,
    });
    // Errors after the response began surface through the response stream; this keeps them handled.
    request.on('error', reject);
    request.once('response', (response) => resolve({ request, response }));
    request.end(body);
  });
}

/** A whole (small) response body: the runtime's error answers and `/check` results. */
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

/** True when the process turns out to be dead (its exit may trail the refused connection briefly). */
async function diedMeanwhile(proc: RuntimeProcess): Promise<boolean> {
  if (proc.exited) return true;
  let timer: NodeJS.Timeout | undefined;
  const result = await Promise.race([
    proc.gone.then(() => true),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(false), 1000);
    }),
  ]);
  clearTimeout(timer);
  return result;
}

function* failed(error: ErrorEvent, startedAt: number): Generator<RuntimeEvent, void, undefined> {
  yield error;
  yield { type: 'end', durationMs: Math.max(0, Date.now() - startedAt) };
}

function clearIdleTimer(proc: RuntimeProcess): void {
  if (proc.idleTimer !== null) clearTimeout(proc.idleTimer);
  proc.idleTimer = null;
}

/** Signals a whole process group; a group that is already gone is fine. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: nothing left in the group
  }
}

/**
 * Waits (briefly, bounded) until no live process of the group is left, so callers can rely on
 * "gone". Zombies count as gone: an orphaned fork server is reaped by init, which may take its time.
 */
export async function waitForGroupGone(pgid: number, maxMs = 2000): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline && groupHasLiveMembers(pgid)) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function groupHasLiveMembers(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  return !existsSync('/proc/self/stat') || liveGroupMembers(pgid).length > 0;
}

/** Non-zombie processes of a process group, from /proc (Linux). */
export function liveGroupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = procStatFields(Number(entry));
    if (fields && Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(entry));
  }
  return members;
}

/** The fields of /proc/<pid>/stat after "pid (comm)": state, ppid, pgrp, ...; null if unreadable. */
function procStatFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm may contain spaces and parentheses, so split after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}

/** The parent pid from /proc (Linux); null where there is no /proc or the process is gone. */
function parentPid(pid: number): number | null {
  const ppid = Number(procStatFields(pid)?.[1]);
  return Number.isInteger(ppid) && ppid > 0 ? ppid : null;
}

/**
 * Kills the child that runs an abandoned invocation, but only after checking it is still a child
 * of this server's fork server (pid -> zygote -> server), so a recycled pid is never hit.
 */
function killRunChild(serverPid: number, childPid: number): void {
  const zygotePid = parentPid(childPid);
  if (zygotePid === null || parentPid(zygotePid) !== serverPid) return;
  try {
    process.kill(childPid, 'SIGKILL');
  } catch {
    // it has just finished on its own
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

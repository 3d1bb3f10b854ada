/**
 * The local Compute adapter (`npm start`): one Python runtime server per tenant, started on first
 * use, kept warm, restarted after it dies, stopped when idle, and at most `maxProcesses` at once
 * (the supervision is process-pool.ts's, shared with the MCP hosts). Each process gets its own
 * process group so that stopping it also stops its fork server and any run it has in flight.
 * The server's protocol is in `python-runtime/README.md`.
 */
import { spawn } from 'node:child_process';
import type http from 'node:http';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../core/logger.ts';
import type { Compute, Invocation, RuntimeEvent, SourceViolation } from './compute.ts';
import { parentPid } from './process-group.ts';
import { createProcessPool, inheritedEnv, launch, post, readBody } from './process-pool.ts';
import type { ExitStatus, PoolExitReason, PooledProcess, PoolProcess, SupervisedProcesses } from './process-pool.ts';
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

export type ProcessExitReason = PoolExitReason;

/** Reported to `onProcessExit` listeners once a runtime process (and its group) has gone. */
export interface RuntimeProcessExit extends ExitStatus {
  readonly role: 'tenant' | 'checker';
  readonly tenantId: string | null;
  readonly pid: number;
  /** Why: stopped when idle, stopped to make room, stopped by `close()`, or died on its own. */
  readonly reason: ProcessExitReason;
}

/** The local adapter: the Compute port plus what its owner and its tests need. */
export interface LocalCompute extends Compute, SupervisedProcesses<RuntimeProcessInfo, RuntimeProcessExit> {}

/** A runtime server as the pool holds it. */
interface RuntimeServer extends PoolProcess {
  readonly role: 'tenant' | 'checker';
  readonly tenantId: string | null;
}

type RuntimeProcess = PooledProcess<RuntimeServer>;

/** A failure to provide a runtime process; reported as RUNTIME_UNAVAILABLE. */
class RuntimeUnavailableError extends Error {}

// Tenant keys carry a prefix so that no tenant id can name the checker's slot.
const CHECKER_KEY = 'checker';
const TENANT_PREFIX = 'tenant:';

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
  const unavailable = (message: string) => new RuntimeUnavailableError(message);
  const pool = createProcessPool<RuntimeServer, never, RuntimeProcessInfo, RuntimeProcessExit>({
    start: (key) => (key === CHECKER_KEY ? startServer('checker', null) : startServer('tenant', key.slice(TENANT_PREFIX.length))),
    idleTimeoutMs: settings.idleTimeoutMs,
    maxProcesses: settings.maxProcesses,
    // /check never runs tenant code, and checks must not wait for (or evict) tenants' processes.
    exempt: (key) => key === CHECKER_KEY,
    unavailable,
    describe: ({ handle: { role, tenantId, pid, port }, active, startedAt, lastUsedAt }) => ({ role, tenantId, pid, port, activeRuns: active, startedAt, lastUsedAt }),
    describeExit: ({ handle: { role, tenantId, pid }, reason, code, signal }) => ({ role, tenantId, pid, reason, code, signal }),
    messages: {
      closed: 'the local runtime supervisor is closed',
      busy: `all ${settings.maxProcesses} runtime processes are busy; try again when a run has finished`,
      stopped: 'the runtime process stopped before it could be used',
    },
  });

  async function startServer(role: 'tenant' | 'checker', tenantId: string | null): Promise<RuntimeServer> {
    const child = spawn(settings.python, ['-m', 'platform_runtime.server', '--host', '127.0.0.1', '--port', '0', '--quiet', ...settings.serverArgs], {
      cwd: settings.runtimeDir,
      env: { ...runtimeEnv(process.env), ...(options.pythonPath?.length ? { PYTHONPATH: options.pythonPath.join(':') } : {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group: stopping the group also stops the fork server and running children.
      detached: true,
    });
    const { pid, port, agent, exited } = await launch(child, {
      name: 'the Python runtime',
      location: settings.runtimeDir,
      startTimeoutMs: settings.startTimeoutMs,
      spawnFailed: (error) =>
        error.code === 'ENOENT'
          ? `${settings.python} was not found; install Python 3.11 or newer (or set the python option) to run agents and actions locally`
          : `the Python runtime could not be started (${error.message})`,
      unavailable,
      onStderr: (line) => options.logger?.warn('python runtime stderr', { tenantId, pid: child.pid, line }),
    });
    return { role, tenantId, pid, port, agent, exited };
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
        proc = await pool.acquire(`${TENANT_PREFIX}${tenantId}`);
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
        pool.release(proc);
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
        ({ request, response } = await post(proc.handle, '/invoke', body, combined));
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
        if (childPid !== null) killRunChild(proc.handle.pid, childPid);
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
    const proc = await pool.acquire(CHECKER_KEY);
    try {
      const { response } = await post(proc.handle, '/check', JSON.stringify({ source }), AbortSignal.timeout(30_000));
      const body = await readBody(response);
      if (response.statusCode !== 200) throw RuntimeHttpError.fromBody(response.statusCode ?? 0, body);
      return parseCheckResult(body);
    } finally {
      pool.release(proc);
    }
  }

  return { check, invoke, stats: pool.stats, onProcessExit: pool.onProcessExit, close: pool.close };
}

/** The runtime server's whole environment: a few basics, never the platform's own variables. */
export function runtimeEnv(parent: NodeJS.ProcessEnv): Record<string, string> {
  return { ...inheritedEnv(parent, INHERITED_ENV), PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' };
}

/** True when the process turns out to be dead (its exit may trail the refused connection briefly). */
async function diedMeanwhile(proc: RuntimeProcess): Promise<boolean> {
  if (proc.exit !== null) return true;
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

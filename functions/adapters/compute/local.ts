/**
 * The local Compute adapter (`npm start`): one Python runtime server per tenant, started on first
 * use, kept warm, restarted after it dies, stopped when idle, and at most `maxProcesses` at once
 * (the supervision is process-pool.ts's, shared with the MCP hosts). Each process gets its own
 * process group so that stopping it also stops its fork server and any run it has in flight.
 * The server's protocol is in `python-runtime/README.md`.
 *
 * Every server runs inside the OS sandbox (os-sandbox.ts): no network, no view of the platform's
 * files or processes. The platform reaches it only through a Unix socket in a directory that no
 * other sandbox can see, and every request carries a secret the server read from its stdin, so
 * not even the tenant's own code, which can see that socket, can start runs. A run's outbound
 * HTTP goes through the platform's egress proxy with a per-run credential (egress-proxy.ts), which
 * also adds the run's platform credentials outside the sandbox.
 *
 * Spares (`spares`, one in the platform): a server started ahead of need, so that a tenant's
 * first run does not wait for an interpreter and the fork server's preloads. Nothing in a
 * server's start is the tenant's: the sandbox (binds, environment, limits) is the same for every
 * tenant, and the control directory, socket, secret and uid are the process's own (a spare's uid,
 * with its process limit, is nobody else's: see `OsSandbox.user`). The one thing that is the
 * tenant's, the egress proxy's listener that identifies whose runs it carries, is added when a
 * spare is bound, before its first run. A spare has run no code, and it serves the tenant it was
 * bound to until it stops: it is never handed to anyone else.
 */
import { randomBytes } from 'node:crypto';
import type http from 'node:http';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../core/logger.ts';
import { SecretSet } from '../../core/secret-scope.ts';
import {
  ComputeUnavailableError,
  PUBLIC_RUN_ENV,
  type BidiCompute,
  type BidiSession,
  type BidiSessionSpec,
  type Compute,
  type Invocation,
  type RuntimeEvent,
  type SourceViolation,
} from '../../runtimes/compute.ts';
import { createBidiSessions, type BidiSessions } from '../../runtimes/bidi-local.ts';
import { createEgressProxy, type EgressListener, type EgressProxy } from '../../runtimes/egress-proxy.ts';
import { prepareOsSandbox, unreadableBy, type OsSandbox } from '../../runtimes/os-sandbox.ts';
import { exitWithin, launchSandboxed, leaseSandbox } from '../../runtimes/sandboxed-process.ts';
import { createProcessPool, get, memorySizedPool, post, readBody } from '../../runtimes/process-pool.ts';
import { missingRequirementHint, probePython, type PythonInterpreter } from '../../runtimes/python-interpreter.ts';
import type { ExitStatus, PoolExitReason, PooledProcess, PoolProcess, SupervisedProcesses, WarmProcesses } from '../../runtimes/process-pool.ts';
import {
  COMPUTE_ERROR,
  errorEvent,
  invocationBody,
  parseCheckResult,
  RuntimeHttpError,
  runtimeEvents,
  type ErrorEvent,
} from '../../runtimes/runtime-stream.ts';

const DEFAULT_RUNTIME_DIR = fileURLToPath(new URL('../../../python-runtime/', import.meta.url));

/**
 * An idle runtime's resident set, its whole process group (two bubblewrap processes, the server,
 * the fork server with its preloads): 68 MB measured with Python 3.12; a run's own child comes and
 * goes with the run. Sizes the default pool (`memorySizedPool`).
 */
export const RUNTIME_PROCESS_BYTES = 72 * 1024 * 1024;

/** Size of each sandbox's private /tmp. */
const SANDBOX_TMP_BYTES = 256 * 1024 * 1024;

export interface LocalComputeOptions {
  /** Directory that holds `platform_runtime/` (default: the repository's `python-runtime/`). */
  readonly runtimeDir?: string;
  /** Python interpreter, a path or a name looked up on PATH (default `python3`); see python-interpreter.ts for what is accepted. */
  readonly python?: string;
  /** Extra arguments for the runtime server, e.g. `['--require-seccomp']`. */
  readonly serverArgs?: readonly string[];
  /** A process without runs for this long is stopped (default 10 minutes). */
  readonly idleTimeoutMs?: number;
  /**
   * Most tenant processes alive at once, spares included; the checker process is not counted
   * (default from the machine's memory: see `memorySizedPool` and `RUNTIME_PROCESS_BYTES`).
   */
  readonly maxProcesses?: number;
  /**
   * Servers kept started for tenants that have none yet (default 0; the platform keeps one).
   * Each costs a server's memory while it waits; `warm()` starts them.
   */
  readonly spares?: number;
  /** A process must have been idle this long before a new tenant may take its place (default 10 s; see process-pool.ts). */
  readonly minIdleMs?: number;
  /** Longest wait of a new tenant for a place when every process was used more recently (default 2 s). */
  readonly slotWaitMs?: number;
  /**
   * Voice session processes kept started, with the voice framework imported, for the next calls
   * (default 0; the platform keeps one): a call then waits for no interpreter start and no
   * import of Strands. Each costs a process's memory while it waits; `warm()` starts them.
   */
  readonly voiceSpares?: number;
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
  /**
   * The OS sandbox every server runs in (default: bubblewrap, checked when the first server starts).
   * When it cannot be set up, runs fail with RUNTIME_UNAVAILABLE and a message saying why.
   */
  readonly sandbox?: Promise<OsSandbox>;
  /** The platform's egress proxy (default: one of this adapter's own, closed with it). */
  readonly egress?: EgressProxy;
}

/**
 * What a runtime process is for. `tenant`: runs one tenant's code; `checker`: answers `/check`
 * only and never runs code; `spare`: started ahead of need, bound to no tenant yet.
 */
export type RuntimeRole = 'tenant' | 'checker' | 'spare';

/** One runtime process, as `stats()` shows it. */
export interface RuntimeProcessInfo {
  readonly role: RuntimeRole;
  readonly tenantId: string | null;
  /** The pid of the process the platform started (the sandbox), which is also the process group id. */
  readonly pid: number;
  /** The server's control socket, as the platform reaches it. */
  readonly socketPath: string;
  readonly activeRuns: number;
  readonly startedAt: number;
  readonly lastUsedAt: number;
}

export type ProcessExitReason = PoolExitReason;

/** Reported to `onProcessExit` listeners once a runtime process (and its group) has gone. */
export interface RuntimeProcessExit extends ExitStatus {
  readonly role: RuntimeRole;
  readonly tenantId: string | null;
  readonly pid: number;
  /** Why: stopped when idle, stopped to make room, stopped by `close()`, or died on its own. */
  readonly reason: ProcessExitReason;
}

/** The local adapter: the Compute port plus what its owner and its tests need. */
export interface LocalCompute extends Compute, BidiCompute, SupervisedProcesses<RuntimeProcessInfo, RuntimeProcessExit>, WarmProcesses {
  /** The `/health` answer of a tenant's running server (its fork server, active runs), or null when none runs. */
  health(tenantId: string): Promise<unknown>;
  /**
   * The interpreter runtime servers start with, found and judged once (the same lookup the servers
   * use, so the preflight never costs a second subprocess). Rejects with a PythonUnavailableError
   * naming what to install; a failed lookup is tried again on the next call.
   */
  interpreter(): Promise<PythonInterpreter>;
  /** The voice session processes alive: spares waiting for a call, and calls (see bidi-local.ts). */
  voiceProcesses(): ReturnType<BidiSessions['processes']>;
}

/** A runtime server as the pool holds it. */
interface RuntimeServer extends PoolProcess {
  readonly role: RuntimeRole;
  readonly tenantId: string | null;
  /** `Bearer <secret>`: the server refuses requests without it. */
  readonly authorization: string;
  /** The port, inside the sandbox, of the server's forwarder to the egress proxy. */
  readonly egressPort: number | null;
  /** Every secret handed to this process, scrubbed from its own output. */
  readonly secrets: SecretSet;
  /**
   * Gives a spare to `tenantId`: opens the egress listener that names the tenant's runs (the
   * spare's forwarder has been pointing at its path since start). Once, before the first run.
   */
  readonly bindTo: (tenantId: string) => Promise<void>;
}

type RuntimeProcess = PooledProcess<RuntimeServer>;

/** A failure to provide a runtime process; reported as RUNTIME_UNAVAILABLE. */
class RuntimeUnavailableError extends Error {}
/** No usable interpreter: reported once by whoever asks `interpreter()` (the platform's preflight), not per spare. */
class InterpreterUnavailableError extends RuntimeUnavailableError {}

// Tenant keys carry a prefix so that no tenant id can name the checker's slot.
const CHECKER_KEY = 'checker';
const TENANT_PREFIX = 'tenant:';

export function createLocalCompute(options: LocalComputeOptions = {}): LocalCompute {
  const settings = {
    runtimeDir: options.runtimeDir ?? DEFAULT_RUNTIME_DIR,
    python: options.python ?? 'python3',
    serverArgs: options.serverArgs ?? [],
    idleTimeoutMs: options.idleTimeoutMs ?? 10 * 60_000,
    maxProcesses: options.maxProcesses ?? memorySizedPool(RUNTIME_PROCESS_BYTES),
    spares: options.spares ?? 0,
    startTimeoutMs: options.startTimeoutMs ?? 30_000,
    watchdogGraceMs: options.watchdogGraceMs ?? 30_000,
  };
  const unavailable = (message: string) => new RuntimeUnavailableError(message);
  const sandboxReady = options.sandbox ?? prepareOsSandbox(options.logger ? { logger: options.logger } : {});
  // Reported when a server is needed, not as an unhandled rejection at construction.
  sandboxReady.catch(() => undefined);
  const egress = options.egress ?? createEgressProxy(options.logger ? { logger: options.logger } : {});
  let interpreter: Promise<PythonInterpreter> | null = null;
  /** The interpreter's path once known, for hints in runs' errors. */
  let knownExecutable: string | null = null;
  const findInterpreter = (): Promise<PythonInterpreter> => {
    const lookup = (interpreter ??= probePython(settings.python, options.pythonPath ? { pythonPath: options.pythonPath } : {}));
    // A failed lookup (no python) is retried on the next call rather than remembered.
    lookup.then(
      (found) => (knownExecutable = found.executable),
      () => {
        if (interpreter === lookup) interpreter = null;
      },
    );
    return lookup;
  };
  const pool = createProcessPool<RuntimeServer, never, RuntimeProcessInfo, RuntimeProcessExit>({
    start: (key) => (key === CHECKER_KEY ? startServer('checker', null) : startServer('tenant', key.slice(TENANT_PREFIX.length))),
    spares: {
      count: settings.spares,
      start: () => startServer('spare', null),
      bind: async (spare, key) => {
        const tenantId = key.slice(TENANT_PREFIX.length);
        await spare.bindTo(tenantId);
        return { ...spare, role: 'tenant', tenantId };
      },
      onStartFailed: (error) =>
        error instanceof InterpreterUnavailableError
          ? undefined
          : options.logger?.warn('a spare Python runtime could not be started', { reason: messageOf(error) }),
    },
    idleTimeoutMs: settings.idleTimeoutMs,
    maxProcesses: settings.maxProcesses,
    ...(options.minIdleMs !== undefined ? { minIdleMs: options.minIdleMs } : {}),
    ...(options.slotWaitMs !== undefined ? { slotWaitMs: options.slotWaitMs } : {}),
    // /check never runs tenant code, and checks must not wait for (or evict) tenants' processes.
    exempt: (key) => key === CHECKER_KEY,
    unavailable,
    describe: ({ handle: { role, tenantId, pid, socketPath }, active, startedAt, lastUsedAt }) => ({
      role,
      tenantId,
      pid,
      socketPath: socketPath ?? '',
      activeRuns: active,
      startedAt,
      lastUsedAt,
    }),
    describeExit: ({ handle: { role, tenantId, pid }, reason, code, signal }) => ({ role, tenantId, pid, reason, code, signal }),
    messages: {
      closed: 'the local runtime supervisor is closed',
      busy: `all ${settings.maxProcesses} runtime processes are busy with tenants active in the last seconds; try again shortly`,
      stopped: 'the runtime process stopped before it could be used',
    },
  });

  async function startServer(role: RuntimeRole, tenantId: string | null): Promise<RuntimeServer> {
    // Asked while the sandbox check runs: both are process starts on the first server's path.
    const lookup = findInterpreter();
    // A tenant's server runs as the tenant's uid, under the tenant's process limit; a spare or the
    // checker as a uid of its own.
    const lease = await leaseSandbox(sandboxReady, role === 'tenant' ? tenantId : null, unavailable);
    const { sandbox, dir } = lease;
    // Who the server's runs are, for logs; a spare's is set when it is bound.
    const owner = { tenantId };
    // The checker only parses sources: it gets no way out at all. A spare gets its forwarder now
    // and the listener behind it once bound: the listener is what says whose runs these are.
    const withEgress = role !== 'checker';
    let egressSocket: EgressListener | null = null;
    lease.onRelease(() => egressSocket?.close());
    const bindTo = async (boundTo: string): Promise<void> => {
      if (lease.released || egressSocket !== null) throw unavailable('the runtime process cannot be given to a tenant now');
      const listener = await egress.listen(dir.onHost(EGRESS_SOCKET), `${TENANT_PREFIX}${boundTo}`);
      // The process went while the listener opened: nothing else will close it.
      if (lease.released) await listener.close().catch(() => undefined);
      else egressSocket = listener;
      owner.tenantId = boundTo;
    };
    try {
      const python = await lookup.catch((error: unknown) => {
        throw new InterpreterUnavailableError(messageOf(error));
      });
      if (role === 'tenant') await bindTo(tenantId!);
      const plan = sandbox.plan(
        python.executable,
        [
          '-m',
          'platform_runtime.server',
          '--socket',
          dir.inside(CONTROL_SOCKET),
          '--control-secret-stdin',
          ...(withEgress ? ['--egress-socket', dir.inside(EGRESS_SOCKET)] : []),
          '--quiet',
          ...settings.serverArgs,
        ],
        {
          readOnly: [settings.runtimeDir, ...python.roots, ...(options.pythonPath ?? [])],
          controlDir: dir.hostPath,
          cwd: settings.runtimeDir,
          env: { ...runtimeEnv(), ...(options.pythonPath?.length ? { PYTHONPATH: options.pythonPath.join(':') } : {}) },
          tmpfsBytes: SANDBOX_TMP_BYTES,
          user: lease.user,
        },
      );
      for (const [what, path] of [
        ['the Python interpreter', python.executable],
        ["the runtime's code", settings.runtimeDir],
      ] as const) {
        const blocked = await unreadableBy(path, plan.uid);
        if (blocked !== null) {
          throw unavailable(
            `the sandbox's user (uid ${plan.uid}) cannot reach ${what} ${path}: ${blocked}. Put it where other users can read it (e.g. /usr/bin/python3, /opt), or allow traversal of that directory (chmod o+x).`,
          );
        }
      }
      const secret = randomBytes(32).toString('base64url');
      const secrets = new SecretSet();
      // Its own process group: stopping the group also stops the fork server and running children.
      const launched = await launchSandboxed(lease, plan, {
        stdinLines: [secret],
        name: 'the Python runtime',
        location: settings.runtimeDir,
        startTimeoutMs: settings.startTimeoutMs,
        spawnFailed: (error) =>
          error.code === 'ENOENT'
            ? `${plan.command} was not found (${sandbox.kind === 'bubblewrap' ? 'install bubblewrap' : 'check the python option'})`
            : `the Python runtime could not be started (${error.message})`,
        unavailable,
        onStderr: (line, pid) => options.logger?.warn('python runtime stderr', { tenantId: owner.tenantId, pid, line: secrets.scrub(line) }),
      });
      const { pid, port, socketPath, agent, exited, announced, dispose } = launched;
      const egressPort = typeof announced.egressPort === 'number' ? announced.egressPort : null;
      return {
        role,
        tenantId,
        pid,
        port,
        ...(socketPath !== undefined ? { socketPath } : {}),
        agent,
        exited,
        authorization: `Bearer ${secret}`,
        egressPort,
        secrets,
        bindTo,
        dispose,
      };
    } catch (error) {
      await lease.release();
      throw error;
    }
  }

  async function* invoke(tenantId: string, invocation: Invocation, signal?: AbortSignal): AsyncGenerator<RuntimeEvent, void, undefined> {
    const startedAt = Date.now();
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
      const run = openRun(proc, `${TENANT_PREFIX}${tenantId}`, invocation);
      try {
        const outcome = yield* withInstallHints(runOn(proc, run.body, invocation.timeoutMs, signal, startedAt));
        // Refused before the run began because the process had just died: once more on a new one.
        if (outcome === 'retry' && attempt === 0) continue;
        if (outcome === 'retry') yield* failed(errorEvent(COMPUTE_ERROR.unavailable, 'the runtime process could not be reached'), startedAt);
        return;
      } finally {
        run.release();
        pool.release(proc);
      }
    }
  }

  /**
   * A run that failed because a module of layers/python/requirements.txt is missing says which
   * interpreter to install it into: the user cannot tell from a bare ModuleNotFoundError.
   */
  async function* withInstallHints<R>(events: AsyncGenerator<RuntimeEvent, R, undefined>): AsyncGenerator<RuntimeEvent, R, undefined> {
    let finished = false;
    try {
      for (;;) {
        const next = await events.next();
        if (next.done) {
          finished = true;
          return next.value;
        }
        const event = next.value;
        const hint =
          event.type === 'error' && event.errorType === 'ModuleNotFoundError' && knownExecutable !== null
            ? missingRequirementHint(event.message, knownExecutable)
            : null;
        yield hint !== null && event.type === 'error' ? { ...event, message: `${event.message} (${hint})` } : event;
      }
    } finally {
      // The consumer stopped early: the run's own clean-up (cancelling the request) must still run.
      if (!finished) await events.return(undefined as R);
    }
  }

  /**
   * The `/invoke` body for one run on `proc`: outbound calls go through the egress proxy under a
   * credential of this run alone, which enforces `allowHosts` and adds `platformCalls` itself, so
   * those headers (the owner's run token) never enter the sandbox.
   */
  function openRun(proc: RuntimeProcess, key: string, invocation: Invocation): { body: string; release(): void } {
    const { platformCalls, ...rest } = invocation;
    proc.handle.secrets.addValuesOf(invocation.env, PUBLIC_RUN_ENV);
    if (proc.handle.egressPort === null) return { body: invocationBody(rest), release: () => {} };
    const grant = egress.openRun(key, { allowHosts: invocation.allowHosts, ...(platformCalls ? { platformCalls } : {}) });
    proc.handle.secrets.add(grant.credential);
    const egressProxy = `http://run:${grant.credential}@127.0.0.1:${proc.handle.egressPort}`;
    return { body: invocationBody({ ...rest, egressProxy }), release: () => grant.release() };
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
    let runtimeEnded = false;
    let request: http.ClientRequest | null = null;
    try {
      let response: http.IncomingMessage;
      try {
        ({ request, response } = await post(proc.handle, '/invoke', body, combined, { authorization: proc.handle.authorization }));
      } catch (error) {
        if (!combined.aborted && (await exitWithin(proc, 1000)) !== null) return 'retry';
        yield* failed(classify(error), startedAt);
        return 'done';
      }
      if (response.statusCode !== 200) {
        yield* failed(classify(RuntimeHttpError.fromBody(response.statusCode ?? 0, await readBody(response))), startedAt);
        return 'done';
      }
      yield* runtimeEvents(response, {
        startedAt,
        onRuntimeEnd: () => (runtimeEnded = true),
        classifyFailure: classify,
        truncated: () =>
          combined.aborted
            ? classify(new Error('the request was cancelled'))
            : errorEvent(COMPUTE_ERROR.protocol, 'the runtime ended the stream without an end event'),
      });
      return 'done';
    } finally {
      clearTimeout(watchdogTimer);
      if (!runtimeEnded) {
        // The server watches its caller's connection and kills the run as soon as it closes, even
        // a silent one (the pid it reports lives in the sandbox's namespace, not the platform's).
        cancel.abort();
        request?.destroy();
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
    let proc: RuntimeProcess;
    try {
      proc = await pool.acquire(CHECKER_KEY);
    } catch (error) {
      // No checker can be had (no Python, no sandbox): the caller's answer is "unavailable", not a crash.
      throw new ComputeUnavailableError(messageOf(error));
    }
    try {
      const { response } = await post(proc.handle, '/check', JSON.stringify({ source }), AbortSignal.timeout(30_000), {
        authorization: proc.handle.authorization,
      });
      const body = await readBody(response);
      if (response.statusCode !== 200) throw RuntimeHttpError.fromBody(response.statusCode ?? 0, body);
      return parseCheckResult(body);
    } finally {
      pool.release(proc);
    }
  }

  async function health(tenantId: string): Promise<unknown> {
    if (!pool.stats().processes.some((info) => info.tenantId === tenantId)) return null;
    const proc = await pool.acquire(`${TENANT_PREFIX}${tenantId}`);
    try {
      const response = await get(proc.handle, '/health', proc.handle.authorization);
      return JSON.parse(await readBody(response)) as unknown;
    } finally {
      pool.release(proc);
    }
  }

  /** Voice sessions: each a process of its own in the same sandbox as the tenant's runs (bidi-local.ts). */
  const bidiSessions = createBidiSessions(
    async () => {
      const lookup = findInterpreter();
      let sandbox: OsSandbox;
      try {
        sandbox = await sandboxReady;
      } catch (error) {
        throw new ComputeUnavailableError(messageOf(error));
      }
      const python = await lookup.catch((error: unknown) => {
        throw new ComputeUnavailableError(messageOf(error));
      });
      return {
        sandbox,
        python,
        egress,
        runtimeDir: settings.runtimeDir,
        pythonPath: options.pythonPath ?? [],
        baseEnv: runtimeEnv(),
        ...(options.logger ? { logger: options.logger } : {}),
      };
    },
    { spares: options.voiceSpares ?? 0 },
  );

  const openBidiSession = (tenantId: string, spec: BidiSessionSpec): Promise<BidiSession> => bidiSessions.open(tenantId, spec);

  async function warm(): Promise<void> {
    await Promise.all([pool.warm(), bidiSessions.warm()]);
  }

  async function close(): Promise<void> {
    await Promise.all([pool.close(), bidiSessions.close()]);
    if (!options.egress) await egress.close();
  }

  return {
    check,
    invoke,
    openBidiSession,
    health,
    interpreter: findInterpreter,
    stats: pool.stats,
    onProcessExit: pool.onProcessExit,
    voiceProcesses: () => bidiSessions.processes(),
    warm,
    close,
  };
}

const CONTROL_SOCKET = 'runtime.sock';
const EGRESS_SOCKET = 'egress.sock';

/** The runtime server's whole environment: a few fixed basics, never the platform's own variables. */
export function runtimeEnv(): Record<string, string> {
  return { PATH: '/usr/bin:/bin', HOME: '/tmp', TMPDIR: '/tmp', LANG: 'C.UTF-8', PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' };
}

/**
 * A run that ended before its server answered: no user code ran (the server answers before it
 * starts a run), so `started` is false and the run costs nothing.
 */
function* failed(error: ErrorEvent, startedAt: number): Generator<RuntimeEvent, void, undefined> {
  yield error;
  yield { type: 'end', started: false, durationMs: Math.max(0, Date.now() - startedAt) };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * The local McpRuntime adapter (`npm start`): one MCP host process (mcp-host/host.mjs) per tenant,
 * started on first use (concurrent first calls share one start), kept warm, restarted after it
 * dies, stopped when idle, and at most `maxProcesses` at once. That supervision is
 * process-pool.ts's, shared with the Python runtime (adapters/compute/local.ts).
 *
 * A host is plain Node, started with:
 * - `--max-old-space-size` from `memoryMb`: a server that runs out of memory ends its own process;
 * - Node's permission model (`--experimental-permission` on Node 20, `--permission` later): reads
 *   only of the host's directory and of the allowed packages with their dependencies (computed
 *   from their package.json files), no writes, no child processes, no worker threads, no native
 *   addons. This is defence in depth: the boundary between tenants is the separate process with
 *   its own environment, not the permission model (Node calls it experimental and does not restrict
 *   the network);
 * - `--experimental-vm-modules`, so ES module sources load as vm modules (see mcp-host/core.mjs);
 * - a clean environment: a few basics, never the platform's own variables. The owner's keys arrive
 *   with each request and are visible to that request only.
 * Each host runs inside the OS sandbox (os-sandbox.ts): no network, no view of the platform's files
 * or processes, listening on a Unix socket in a directory only the platform shares. It also takes a
 * random bearer token on stdin and refuses requests without it.
 *
 * JavaScript cannot be stopped from outside the process that runs it, so a request that misses its
 * deadline ends its tenant's host: the work stops for real, and the next request starts a new host.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../core/logger.ts';
import { SecretSet } from '../../core/secret-scope.ts';
import { createEgressProxy, type EgressListener, type EgressProxy } from '../../runtimes/egress-proxy.ts';
import { prepareOsSandbox, type OsSandbox } from '../../runtimes/os-sandbox.ts';
import { exitWithin, launchSandboxed, leaseSandbox } from '../../runtimes/sandboxed-process.ts';
import {
  handlePayload,
  HostProtocolError,
  inspectPayload,
  jsonRpcErrorResponse,
  jsonRpcIdOf,
  MCP_ERROR_CODE,
  McpRuntimeUnavailableError,
  notStarted,
  parseHttpResponse,
  parseInspection,
} from '../../runtimes/mcp-protocol.ts';
import type { McpHttpRequest, McpHttpResponse, McpInspection, McpRuntime, McpSource } from '../../runtimes/mcp-runtime.ts';
import { createProcessPool, memorySizedPool, post, readBody } from '../../runtimes/process-pool.ts';
import type { ExitStatus, PoolExitReason, PooledProcess, PoolProcess, SupervisedProcesses } from '../../runtimes/process-pool.ts';

export { McpRuntimeUnavailableError } from '../../runtimes/mcp-protocol.ts';

const DEFAULT_HOST_SCRIPT = fileURLToPath(new URL('../../runtimes/mcp-host/host.mjs', import.meta.url));
/** The repository root, whose node_modules holds the platform's @modelcontextprotocol/sdk and zod. */
const DEFAULT_MODULES_FROM = fileURLToPath(new URL('../../../', import.meta.url));
/** Packages user code may load; the host is allowed to read them and their dependencies. */
const ALLOWED_PACKAGES = ['@modelcontextprotocol/sdk', 'zod'] as const;
/** What the host itself loads besides them: `fetch`'s proxy dispatcher. */
const HOST_PACKAGES = ['undici'] as const;
const EGRESS_SOCKET = 'egress.sock';
/** A host's whole environment inside its sandbox: fixed basics, never the platform's own variables. */
const HOST_ENV: Readonly<Record<string, string>> = { PATH: '/usr/bin:/bin', HOME: '/tmp', TMPDIR: '/tmp', LANG: 'C.UTF-8' };
/** Size of each host sandbox's private /tmp (Node's permission model denies writes anyway). */
const SANDBOX_TMP_BYTES = 64 * 1024 * 1024;
const CONTROL_SOCKET = 'mcp-host.sock';
/**
 * An idle host's resident set, its whole process group (bubblewrap and Node with the SDK loaded):
 * 78 MB measured with one small server built. Sizes the default pool (`memorySizedPool`).
 */
export const MCP_HOST_BYTES = 80 * 1024 * 1024;
/** Largest answer read from a host (an MCP response body plus its JSON envelope). */
const MAX_ANSWER_BYTES = 32 * 1024 * 1024;

export interface LocalMcpRuntimeOptions {
  /** The host script (default mcp-host/host.mjs next to this file). */
  readonly hostScript?: string;
  /**
   * Directory from which `@modelcontextprotocol/sdk` and `zod` resolve, for user code and the host
   * alike (default: the repository root, i.e. the platform's own node_modules). Point it at
   * `layers/mcp-node` after `npm ci --prefix layers/mcp-node` to run servers on the layer's copies.
   */
  readonly modulesFrom?: string;
  /** Node binary (default: the one running the platform). */
  readonly node?: string;
  /** A host without requests for this long is stopped (default 10 minutes). */
  readonly idleTimeoutMs?: number;
  /** Most host processes alive at once (default from the machine's memory: see `memorySizedPool` and `MCP_HOST_BYTES`). */
  readonly maxProcesses?: number;
  /** A host must have been idle this long before a new tenant may take its place (default 10 s; see process-pool.ts). */
  readonly minIdleMs?: number;
  /** Longest wait for a new host's `listening` line (default 15 s). */
  readonly startTimeoutMs?: number;
  /** A request's time limit inside the host, answered with 504 (default 30 s). */
  readonly requestTimeoutMs?: number;
  /**
   * Time beyond `requestTimeoutMs` after which the host is taken to be stuck (a server blocking the
   * event loop can't even answer 504); it is killed and the request answered 504 (default 5 s).
   */
  readonly watchdogGraceMs?: number;
  /** V8 heap limit of each host, `--max-old-space-size` (default 256). */
  readonly memoryMb?: number;
  /** Loaded (serverId, version) modules each host keeps (default 50). */
  readonly maxModules?: number;
  /** Node's permission model for the hosts (default true where the Node binary supports it). */
  readonly permissions?: boolean;
  /** Receives the hosts' own log lines and the servers' console output. */
  readonly logger?: Logger;
  /**
   * The OS sandbox every host runs in (default: bubblewrap, checked when the first host starts).
   * When it cannot be set up, requests are answered 503 with a message saying why.
   */
  readonly sandbox?: Promise<OsSandbox>;
  /** The platform's egress proxy, the hosts' only way out (default: one of this adapter's own, closed with it). */
  readonly egress?: EgressProxy;
  /**
   * What servers' `fetch` may reach through the proxy (egress-proxy.ts entries; default `['*']`:
   * any host whose addresses are public, on ports 443 and 80; `[]`: nothing).
   */
  readonly egressAllowHosts?: readonly string[];
}

/** One host process, as `stats()` shows it. */
export interface McpProcessInfo {
  readonly tenantId: string;
  /** The pid of the process the platform started (the sandbox), which is also the process group id. */
  readonly pid: number;
  /** The host's socket, as the platform reaches it. */
  readonly socketPath: string;
  readonly activeRequests: number;
  readonly startedAt: number;
  readonly lastUsedAt: number;
}

/**
 * Why a host stopped: as the Python runtime's, plus `unresponsive` (killed by the watchdog) and
 * `timed-out` (a request missed its deadline, so the tenant's work in it was ended).
 */
export type McpProcessExitReason = PoolExitReason | 'unresponsive' | 'timed-out';

/** Reported to `onProcessExit` listeners once a host (and its group) has gone. */
export interface McpProcessExit extends ExitStatus {
  readonly tenantId: string;
  readonly pid: number;
  readonly reason: McpProcessExitReason;
}

/** The local adapter: the McpRuntime port plus what its owner and its tests need. */
export interface LocalMcpRuntime extends McpRuntime, SupervisedProcesses<McpProcessInfo, McpProcessExit> {}

/** A host as the pool holds it. */
interface Host extends PoolProcess {
  readonly tenantId: string;
  readonly authorization: string;
  /** What the host's stderr said about its end (V8 prints "heap out of memory" before aborting). */
  readonly stderr: { outOfMemory: boolean };
  /** Every key handed to this host, scrubbed from its output (a server's crash may print one). */
  readonly secrets: SecretSet;
}

type HostProcess = PooledProcess<Host, 'unresponsive' | 'timed-out'>;

/** How one exchange with a host ended. */
type Outcome =
  | { readonly kind: 'answer'; readonly value: unknown }
  | { readonly kind: 'refused' }
  | { readonly kind: 'timeout' }
  /** The host answered that the request missed its deadline; the host was stopped with the work. */
  | { readonly kind: 'timed-out'; readonly error: string }
  | { readonly kind: 'crashed'; readonly detail: string }
  | { readonly kind: 'cancelled' }
  | { readonly kind: 'closed' }
  | { readonly kind: 'failed'; readonly detail: string };

export function createLocalMcpRuntime(options: LocalMcpRuntimeOptions = {}): LocalMcpRuntime {
  const settings = {
    hostScript: options.hostScript ?? DEFAULT_HOST_SCRIPT,
    modulesFrom: options.modulesFrom ?? DEFAULT_MODULES_FROM,
    node: options.node ?? process.execPath,
    idleTimeoutMs: options.idleTimeoutMs ?? 10 * 60_000,
    maxProcesses: options.maxProcesses ?? memorySizedPool(MCP_HOST_BYTES),
    startTimeoutMs: options.startTimeoutMs ?? 15_000,
    requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
    watchdogGraceMs: options.watchdogGraceMs ?? 5_000,
    memoryMb: options.memoryMb ?? 256,
    maxModules: options.maxModules ?? 50,
    permissions: options.permissions ?? true,
  };
  const logger = options.logger;
  const unavailable = (message: string) => new McpRuntimeUnavailableError(message);
  const sandboxReady = options.sandbox ?? prepareOsSandbox(logger ? { logger } : {});
  // Reported when a host is needed, not as an unhandled rejection at construction.
  sandboxReady.catch(() => undefined);
  const egress = options.egress ?? createEgressProxy(logger ? { logger } : {});
  const egressAllowHosts = options.egressAllowHosts ?? ['*'];
  const pool = createProcessPool<Host, 'unresponsive' | 'timed-out', McpProcessInfo, McpProcessExit>({
    start: startHost,
    idleTimeoutMs: settings.idleTimeoutMs,
    maxProcesses: settings.maxProcesses,
    ...(options.minIdleMs !== undefined ? { minIdleMs: options.minIdleMs } : {}),
    unavailable,
    describe: ({ handle: { tenantId, pid, socketPath }, active, startedAt, lastUsedAt }) => ({
      tenantId,
      pid,
      socketPath: socketPath ?? '',
      activeRequests: active,
      startedAt,
      lastUsedAt,
    }),
    describeExit: ({ handle: { tenantId, pid }, reason, code, signal }) => ({ tenantId, pid, reason, code, signal }),
    messages: {
      closed: 'the local MCP runtime is closed',
      busy: `all ${settings.maxProcesses} MCP host processes are busy with tenants active in the last seconds; try again shortly`,
      stopped: 'the MCP host process stopped before it could be used',
    },
  });
  let nodeArguments: string[] | null = null;

  function argumentsForNode(): string[] {
    nodeArguments ??= [
      `--max-old-space-size=${settings.memoryMb}`,
      '--experimental-vm-modules',
      ...(process.allowedNodeEnvironmentFlags.has('--disable-warning') ? ['--disable-warning=ExperimentalWarning'] : []),
      ...(settings.permissions ? permissionFlags(settings.hostScript, settings.modulesFrom) : []),
      settings.hostScript,
      '--modules-from',
      settings.modulesFrom,
      '--max-modules',
      String(settings.maxModules),
      '--request-timeout-ms',
      String(settings.requestTimeoutMs),
    ];
    return nodeArguments;
  }

  async function startHost(tenantId: string): Promise<Host> {
    // The tenant's uid: its MCP servers count against the same process limit as its runs.
    const lease = await leaseSandbox(sandboxReady, tenantId, unavailable);
    const { sandbox, dir } = lease;
    const key = `mcp:${tenantId}`;
    // One credential per host: every server of the tenant runs in it, under the operator's list.
    let egressSocket: EgressListener | null = null;
    let grant: ReturnType<EgressProxy['openRun']> | null = null;
    lease.onRelease(async () => {
      grant?.release();
      await egressSocket?.close();
    });
    try {
      egressSocket = egressAllowHosts.length > 0 ? await egress.listen(dir.onHost(EGRESS_SOCKET), key) : null;
      grant = egressSocket ? egress.openRun(key, { allowHosts: egressAllowHosts }) : null;
      const token = randomBytes(32).toString('base64url');
      const egressArgs = egressSocket ? ['--egress-socket', dir.inside(EGRESS_SOCKET)] : [];
      const plan = sandbox.plan(settings.node, [...argumentsForNode(), '--socket', dir.inside(CONTROL_SOCKET), ...egressArgs], {
        readOnly: readableByHosts(),
        controlDir: dir.hostPath,
        cwd: dirname(settings.hostScript),
        env: HOST_ENV,
        tmpfsBytes: SANDBOX_TMP_BYTES,
        user: lease.user,
      });
      const stderr = { outOfMemory: false };
      const secrets = new SecretSet();
      if (grant) secrets.add(grant.credential);
      // The token, then the egress credential; its own process group, so stopping it stops anything it started.
      const { pid, port, socketPath, agent, exited, stdout, dispose } = await launchSandboxed(lease, plan, {
        stdinLines: grant ? [token, grant.credential] : [token],
        name: 'the MCP host',
        startTimeoutMs: settings.startTimeoutMs,
        spawnFailed: (error) => `the MCP host could not be started with ${plan.command} (${error.message})`,
        unavailable,
        onStderr: (line, hostPid) => {
          if (line.includes('heap out of memory')) stderr.outOfMemory = true;
          logger?.warn('mcp host stderr', { tenantId, pid: hostPid, line: secrets.scrub(line) });
        },
      });
      // Later stdout lines are the servers' console output.
      stdout.on('line', (line) => logger?.info('mcp server output', { tenantId, pid, line: secrets.scrub(line) }));
      return {
        tenantId,
        pid,
        port,
        ...(socketPath !== undefined ? { socketPath } : {}),
        agent,
        exited,
        authorization: `Bearer ${token}`,
        stderr,
        secrets,
        dispose,
      };
    } catch (error) {
      await lease.release();
      throw error;
    }
  }

  let readable: string[] | null = null;

  /** What a host must read: its own directory, the allowed packages, and Node itself when it lives outside /usr. */
  function readableByHosts(): string[] {
    readable ??= [
      dirname(realpathSync(settings.hostScript)),
      ...packageClosure([...ALLOWED_PACKAGES, ...HOST_PACKAGES], settings.modulesFrom),
      dirname(dirname(realpathSync(settings.node))),
    ];
    return readable;
  }

  /** One POST to a host, classified. A host that misses the watchdog deadline is killed. */
  async function exchange(proc: HostProcess, path: '/inspect' | '/handle', body: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<Outcome> {
    const watchdog = new AbortController();
    const timer = setTimeout(() => watchdog.abort(), timeoutMs + settings.watchdogGraceMs);
    timer.unref();
    const combined = signal ? AbortSignal.any([watchdog.signal, signal]) : watchdog.signal;
    try {
      const { response } = await post(proc.handle, path, body, combined, { authorization: proc.handle.authorization });
      const text = await readBody(response, MAX_ANSWER_BYTES);
      if (response.statusCode !== 200) return { kind: 'failed', detail: `the MCP host answered ${response.statusCode}: ${text.slice(0, 300)}` };
      const value: unknown = JSON.parse(text);
      const missed = missedDeadline(value);
      if (missed !== null) {
        // The host gave up waiting, but the server's promise may still be working (and spending).
        logger?.warn("mcp request missed its deadline; ending the tenant's host", { tenantId: proc.handle.tenantId, pid: proc.handle.pid, timeoutMs });
        void pool.stop(proc, 'timed-out', 'SIGKILL');
        return { kind: 'timed-out', error: missed };
      }
      return { kind: 'answer', value };
    } catch (error) {
      if (watchdog.signal.aborted) {
        logger?.warn('mcp host unresponsive; killing it', { tenantId: proc.handle.tenantId, pid: proc.handle.pid, timeoutMs });
        void pool.stop(proc, 'unresponsive', 'SIGKILL');
        return { kind: 'timeout' };
      }
      if (signal?.aborted) return { kind: 'cancelled' };
      if (proc.stopReason === 'closed') return { kind: 'closed' };
      const exit = await exitWithin(proc, 1000);
      if ((error as NodeJS.ErrnoException).code === 'ECONNREFUSED' && exit !== null) return { kind: 'refused' };
      if (exit !== null) return { kind: 'crashed', detail: describeExit(proc, exit) };
      return { kind: 'failed', detail: `the MCP host could not be reached (${messageOf(error)})` };
    } finally {
      clearTimeout(timer);
    }
  }

  async function inspect(tenantId: string, source: McpSource): Promise<McpInspection> {
    const body = JSON.stringify(inspectPayload(source, settings.requestTimeoutMs));
    for (let attempt = 0; ; attempt++) {
      let proc: HostProcess;
      try {
        proc = await pool.acquire(tenantId);
      } catch (error) {
        throw error instanceof McpRuntimeUnavailableError ? error : new McpRuntimeUnavailableError(messageOf(error));
      }
      try {
        const outcome = await exchange(proc, '/inspect', body, settings.requestTimeoutMs, undefined);
        switch (outcome.kind) {
          case 'answer':
            try {
              return parseInspection(outcome.value);
            } catch (error) {
              throw new McpRuntimeUnavailableError(messageOf(error));
            }
          case 'refused':
            if (attempt === 0) continue;
            throw new McpRuntimeUnavailableError('the MCP host process could not be reached');
          case 'timeout':
            return { ok: false, error: `loading the server and listing its tools did not finish within ${settings.requestTimeoutMs} ms` };
          case 'timed-out':
            return { ok: false, error: outcome.error };
          case 'crashed':
            return { ok: false, error: `the server's process ${outcome.detail} while the source was loaded` };
          case 'cancelled':
          case 'closed':
            throw new McpRuntimeUnavailableError('the local MCP runtime is shutting down');
          case 'failed':
            throw new McpRuntimeUnavailableError(outcome.detail);
        }
      } finally {
        pool.release(proc);
      }
    }
  }

  async function handle(
    tenantId: string,
    source: McpSource,
    request: McpHttpRequest,
    env: Readonly<Record<string, string>>,
    signal?: AbortSignal,
  ): Promise<McpHttpResponse> {
    const id = jsonRpcIdOf(request.body);
    const body = JSON.stringify(handlePayload(source, request, env, settings.requestTimeoutMs));
    for (let attempt = 0; ; attempt++) {
      if (signal?.aborted) return notStarted(jsonRpcErrorResponse(499, id, MCP_ERROR_CODE.connectionClosed, 'the request was cancelled', 'REQUEST_CANCELLED'));
      let proc: HostProcess;
      try {
        proc = await pool.acquire(tenantId);
      } catch (error) {
        return notStarted(
          jsonRpcErrorResponse(503, id, MCP_ERROR_CODE.connectionClosed, `the MCP runtime is unavailable: ${messageOf(error)}`, 'RUNTIME_UNAVAILABLE'),
        );
      }
      proc.handle.secrets.addValuesOf(env);
      try {
        const outcome = await exchange(proc, '/handle', body, settings.requestTimeoutMs, signal);
        switch (outcome.kind) {
          case 'answer':
            try {
              return parseHttpResponse(outcome.value);
            } catch (error) {
              if (!(error instanceof HostProtocolError)) throw error;
              return jsonRpcErrorResponse(502, id, MCP_ERROR_CODE.internalError, error.message, 'MCP_RUNTIME_ERROR');
            }
          case 'refused':
            // Refused before anything was sent (the host had just died): once more on a new one.
            if (attempt === 0) continue;
            return notStarted(
              jsonRpcErrorResponse(
                503,
                id,
                MCP_ERROR_CODE.connectionClosed,
                'the MCP runtime is unavailable: its process could not be reached',
                'RUNTIME_UNAVAILABLE',
              ),
            );
          case 'timeout':
            return jsonRpcErrorResponse(
              504,
              id,
              MCP_ERROR_CODE.requestTimeout,
              `the MCP server did not answer within ${settings.requestTimeoutMs} ms`,
              'TIMEOUT',
            );
          case 'timed-out':
            return jsonRpcErrorResponse(504, id, MCP_ERROR_CODE.requestTimeout, outcome.error, 'TIMEOUT');
          case 'crashed':
            return jsonRpcErrorResponse(
              502,
              id,
              MCP_ERROR_CODE.connectionClosed,
              `the MCP server's process ${outcome.detail} during the request`,
              'MCP_SERVER_CRASHED',
            );
          case 'cancelled':
            return jsonRpcErrorResponse(499, id, MCP_ERROR_CODE.connectionClosed, 'the request was cancelled', 'REQUEST_CANCELLED');
          case 'closed':
            return jsonRpcErrorResponse(503, id, MCP_ERROR_CODE.connectionClosed, 'the MCP runtime is shutting down', 'RUNTIME_UNAVAILABLE');
          case 'failed':
            return jsonRpcErrorResponse(502, id, MCP_ERROR_CODE.internalError, outcome.detail, 'MCP_RUNTIME_ERROR');
        }
      } finally {
        pool.release(proc);
      }
    }
  }

  async function close(): Promise<void> {
    await pool.close();
    if (!options.egress) await egress.close();
  }

  return { inspect, handle, stats: pool.stats, onProcessExit: pool.onProcessExit, close };
}

/**
 * The message of a host's "missed its deadline" answer (an inspection that did not finish, or a
 * JSON-RPC request-timeout error with status 504), else null.
 */
function missedDeadline(value: unknown): string | null {
  if (typeof value !== 'object' || value === null) return null;
  const answer = value as { ok?: unknown; error?: unknown; status?: unknown; body?: unknown };
  if (answer.ok === false && typeof answer.error === 'string' && answer.error.includes('did not finish within')) return answer.error;
  if (answer.status !== 504 || typeof answer.body !== 'string') return null;
  try {
    const body = JSON.parse(answer.body) as { error?: { code?: unknown; message?: unknown } };
    return body.error?.code === MCP_ERROR_CODE.requestTimeout && typeof body.error.message === 'string' ? body.error.message : null;
  } catch {
    return null;
  }
}

/**
 * The permission-model flags of a host: read access to the host's directory and to the allowed
 * packages and everything they depend on; nothing else (no writes, processes, workers or addons).
 */
export function permissionFlags(hostScript: string, modulesFrom: string): string[] {
  const flags = process.allowedNodeEnvironmentFlags;
  const enable = flags.has('--permission') ? '--permission' : flags.has('--experimental-permission') ? '--experimental-permission' : null;
  if (enable === null) return [];
  const readable = [dirname(realpathSync(hostScript)), ...packageClosure([...ALLOWED_PACKAGES, ...HOST_PACKAGES], modulesFrom)];
  return [
    enable,
    ...readable.map((dir) => `--allow-fs-read=${dir.endsWith('/') ? dir : `${dir}/`}`),
    // Node 25 added network permissions; hosts listen on loopback and servers call APIs.
    ...(flags.has('--allow-net') ? ['--allow-net'] : []),
  ];
}

/**
 * Directories of `names` and of all their (optional) dependencies, resolved the way Node resolves
 * them: from each dependant's directory upwards through node_modules. Throws when one of `names`
 * is not installed.
 */
export function packageClosure(names: readonly string[], fromDir: string): string[] {
  const found = new Set<string>();
  const queue: Array<{ name: string; from: string; required: boolean }> = names.map((name) => ({ name, from: fromDir, required: true }));
  for (let item = queue.shift(); item !== undefined; item = queue.shift()) {
    const dir = findPackageDir(item.name, item.from);
    if (dir === null) {
      if (item.required)
        throw new McpRuntimeUnavailableError(`${item.name} is not installed where MCP servers resolve modules from (${fromDir}); run npm install`);
      continue;
    }
    if (found.has(dir)) continue;
    found.add(dir);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies?: object; optionalDependencies?: object };
    for (const dependency of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies }))
      queue.push({ name: dependency, from: dir, required: false });
  }
  return [...found];
}

function findPackageDir(name: string, fromDir: string): string | null {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
    if (dirname(dir) === dir) return null;
  }
}

function describeExit(proc: HostProcess, exit: ExitStatus): string {
  if (proc.handle.stderr.outOfMemory) return 'ran out of memory and stopped';
  return `stopped (${exit.signal ?? `exit code ${exit.code}`})`;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

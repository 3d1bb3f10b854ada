/**
 * The local McpRuntime adapter (`npm start`): one MCP host process (mcp-host/host.mjs) per tenant,
 * started on first use (concurrent first calls share one start), kept warm, restarted after it
 * dies, stopped when idle, and at most `maxProcesses` at once. Its lifecycle is the Python
 * runtime's (local-compute.ts), whose process-group helpers it reuses.
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
 * Each host takes a random bearer token on stdin and refuses requests without it, so the code of
 * one tenant cannot call another tenant's host on the loopback interface.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import http from 'node:http';
import { dirname, join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../core/logger.ts';
import { readBody, signalGroup, waitForGroupGone, type ProcessExitReason } from './local-compute.ts';
import {
  handlePayload,
  HostProtocolError,
  inspectPayload,
  jsonRpcErrorResponse,
  jsonRpcIdOf,
  MCP_ERROR_CODE,
  McpRuntimeUnavailableError,
  parseHttpResponse,
  parseInspection,
} from './mcp-protocol.ts';
import type { McpHttpRequest, McpHttpResponse, McpInspection, McpRuntime, McpSource } from './mcp-runtime.ts';

export { McpRuntimeUnavailableError } from './mcp-protocol.ts';

const DEFAULT_HOST_SCRIPT = fileURLToPath(new URL('./mcp-host/host.mjs', import.meta.url));
/** The repository root, whose node_modules holds the platform's @modelcontextprotocol/sdk and zod. */
const DEFAULT_MODULES_FROM = fileURLToPath(new URL('../../', import.meta.url));
/** Packages user code may load; the host is allowed to read them and their dependencies. */
const ALLOWED_PACKAGES = ['@modelcontextprotocol/sdk', 'zod'] as const;
/** Variables a host may inherit; everything else in the platform's environment stays out. */
const INHERITED_ENV = ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR'] as const;
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
  /** Most host processes alive at once (default 32). */
  readonly maxProcesses?: number;
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
}

/** One host process, as `stats()` shows it. */
export interface McpProcessInfo {
  readonly tenantId: string;
  readonly pid: number;
  readonly port: number;
  readonly activeRequests: number;
  readonly startedAt: number;
  readonly lastUsedAt: number;
}

/** Why a host stopped: as the Python runtime's, plus `unresponsive` (killed by the watchdog). */
export type McpProcessExitReason = ProcessExitReason | 'unresponsive';

export interface McpProcessExit {
  readonly tenantId: string;
  readonly pid: number;
  readonly reason: McpProcessExitReason;
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

/** The local adapter: the McpRuntime port plus what its owner and its tests need. */
export interface LocalMcpRuntime extends McpRuntime {
  /** The live hosts (starting ones are only counted). */
  stats(): { readonly processes: readonly McpProcessInfo[]; readonly starting: number };
  /** Calls `listener` after each host exit; returns a function that removes the listener. */
  onProcessExit(listener: (exit: McpProcessExit) => void): () => void;
  /** Stops every host and waits until they are gone. Later calls fail cleanly. */
  close(): Promise<void>;
}

interface HostExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
}

interface HostProcess {
  readonly tenantId: string;
  readonly child: ChildProcess;
  readonly pid: number;
  readonly port: number;
  readonly authorization: string;
  readonly agent: http.Agent;
  readonly startedAt: number;
  lastUsedAt: number;
  activeRequests: number;
  idleTimer: NodeJS.Timeout | null;
  stopReason: McpProcessExitReason | null;
  /** What the host's stderr said about its end (V8 prints "heap out of memory" before aborting). */
  readonly stderr: { outOfMemory: boolean };
  /** Set once the host has exited. */
  exit: HostExit | null;
  /** Resolves when the host has exited (before its group is checked). */
  readonly exited: Promise<HostExit>;
  /** Resolves once the host has exited, its group is gone and the listeners were told. */
  readonly gone: Promise<void>;
}

interface Slot {
  starting: Promise<HostProcess>;
  process: HostProcess | null;
}

/** How one exchange with a host ended. */
type Outcome =
  | { readonly kind: 'answer'; readonly value: unknown }
  | { readonly kind: 'refused' }
  | { readonly kind: 'timeout' }
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
    maxProcesses: options.maxProcesses ?? 32,
    startTimeoutMs: options.startTimeoutMs ?? 15_000,
    requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
    watchdogGraceMs: options.watchdogGraceMs ?? 5_000,
    memoryMb: options.memoryMb ?? 256,
    maxModules: options.maxModules ?? 50,
    permissions: options.permissions ?? true,
  };
  const logger = options.logger;
  const slots = new Map<string, Slot>();
  const livePids = new Set<number>();
  const exitListeners = new Set<(exit: McpProcessExit) => void>();
  let nodeArguments: string[] | null = null;
  let closed = false;

  // Last resort when the platform exits without close(): no host outlives it. (A host whose
  // platform was killed outright exits by itself when its stdin ends.)
  const killAllOnExit = () => {
    for (const pid of livePids) signalGroup(pid, 'SIGKILL');
  };
  process.on('exit', killAllOnExit);

  function notifyExit(exit: McpProcessExit): void {
    for (const listener of exitListeners) {
      try {
        listener(exit);
      } catch {
        // a listener's failure must not disturb the supervisor
      }
    }
  }

  function forget(proc: HostProcess): void {
    const slot = slots.get(proc.tenantId);
    if (slot?.process === proc) slots.delete(proc.tenantId);
  }

  function armIdleTimer(proc: HostProcess): void {
    clearIdleTimer(proc);
    proc.idleTimer = setTimeout(() => {
      if (proc.activeRequests === 0) void stopProcess(proc, 'idle');
    }, settings.idleTimeoutMs);
    proc.idleTimer.unref();
  }

  /** Stops a host: SIGTERM to its group, SIGKILL after 3 s (at once when it is unresponsive). */
  function stopProcess(proc: HostProcess, reason: McpProcessExitReason): Promise<void> {
    if (proc.exit !== null || proc.stopReason !== null) return proc.gone;
    proc.stopReason = reason;
    clearIdleTimer(proc);
    forget(proc);
    signalGroup(proc.pid, reason === 'unresponsive' ? 'SIGKILL' : 'SIGTERM');
    const escalate = setTimeout(() => signalGroup(proc.pid, 'SIGKILL'), 3000);
    escalate.unref();
    return proc.gone.finally(() => clearTimeout(escalate));
  }

  /** Makes room for one more host by stopping the least recently used idle one. */
  function makeRoom(): void {
    if (slots.size < settings.maxProcesses) return;
    let victim: HostProcess | null = null;
    for (const slot of slots.values()) {
      const proc = slot.process;
      if (proc && proc.activeRequests === 0 && proc.stopReason === null && (victim === null || proc.lastUsedAt < victim.lastUsedAt)) victim = proc;
    }
    if (victim === null) throw new McpRuntimeUnavailableError(`all ${settings.maxProcesses} MCP host processes are busy; try again when a request has finished`);
    void stopProcess(victim, 'evicted');
  }

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

  async function startProcess(tenantId: string): Promise<HostProcess> {
    const token = randomBytes(32).toString('base64url');
    const child = spawn(settings.node, argumentsForNode(), {
      cwd: dirname(settings.hostScript),
      env: hostEnv(process.env),
      stdio: ['pipe', 'pipe', 'pipe'],
      // Its own process group, so stopping it stops anything it might have started.
      detached: true,
    });
    if (child.pid !== undefined) livePids.add(child.pid);
    // The token is the first line; stdin then stays open, and its end tells the host to exit.
    child.stdin!.on('error', () => {});
    child.stdin!.write(`${token}\n`);
    const stderr = { outOfMemory: false };
    const stderrTail: string[] = [];
    createInterface({ input: child.stderr! }).on('line', (line) => {
      stderrTail.push(line);
      if (stderrTail.length > 20) stderrTail.shift();
      if (line.includes('heap out of memory')) stderr.outOfMemory = true;
      logger?.warn('mcp host stderr', { tenantId, pid: child.pid, line });
    });
    const exited = new Promise<HostExit>((resolve) => {
      child.once('exit', (code, signal) => resolve({ code, signal }));
      // A spawn failure emits 'error' and no 'exit'; later errors (a failed kill) change nothing.
      child.on('error', () => resolve({ code: null, signal: null }));
    });
    const stdoutLines = createInterface({ input: child.stdout! });
    let port: number;
    try {
      port = await waitForListening(child, stdoutLines, exited, stderrTail, settings);
    } catch (error) {
      if (child.pid !== undefined) {
        signalGroup(child.pid, 'SIGKILL');
        await exited;
        await waitForGroupGone(child.pid);
        livePids.delete(child.pid);
      }
      child.stdin?.destroy();
      throw error;
    }
    // Later stdout lines are the servers' console output.
    stdoutLines.on('line', (line) => logger?.info('mcp server output', { tenantId, pid: child.pid, line }));
    const now = Date.now();
    const proc: HostProcess = {
      tenantId,
      child,
      pid: child.pid!,
      port,
      authorization: `Bearer ${token}`,
      agent: new http.Agent({ keepAlive: true, maxFreeSockets: 8 }),
      startedAt: now,
      lastUsedAt: now,
      activeRequests: 0,
      idleTimer: null,
      stopReason: null,
      stderr,
      exit: null,
      exited: exited.then((exit) => {
        proc.exit = exit;
        return exit;
      }),
      gone: exited.then((exit) => afterExit(proc, exit)),
    };
    return proc;
  }

  /** Cleans up after a host exited, however it happened, and tells the listeners. */
  async function afterExit(proc: HostProcess, exit: HostExit): Promise<void> {
    proc.exit = exit;
    clearIdleTimer(proc);
    forget(proc);
    proc.agent.destroy();
    proc.child.stdin?.destroy();
    signalGroup(proc.pid, 'SIGKILL');
    await waitForGroupGone(proc.pid);
    livePids.delete(proc.pid);
    notifyExit({ tenantId: proc.tenantId, pid: proc.pid, reason: proc.stopReason ?? 'crashed', code: exit.code, signal: exit.signal });
  }

  /** The running host of `tenantId`, started (once, however many callers wait) if there is none. */
  async function acquire(tenantId: string): Promise<HostProcess> {
    for (let attempt = 0; ; attempt++) {
      if (closed) throw new McpRuntimeUnavailableError('the local MCP runtime is closed');
      let slot = slots.get(tenantId);
      if (!slot) {
        makeRoom();
        const starting = startProcess(tenantId).then(
          (proc) => {
            created.process = proc;
            if (closed) void stopProcess(proc, 'closed');
            return proc;
          },
          (error: unknown) => {
            if (slots.get(tenantId) === created) slots.delete(tenantId);
            throw error;
          },
        );
        const created: Slot = { starting, process: null };
        slots.set(tenantId, created);
        slot = created;
      }
      const proc = await slot.starting;
      if (proc.exit === null && proc.stopReason === null) {
        proc.activeRequests++;
        proc.lastUsedAt = Date.now();
        clearIdleTimer(proc);
        return proc;
      }
      // It died or is being stopped between start and use: take a fresh one (once).
      if (attempt >= 1) throw new McpRuntimeUnavailableError('the MCP host process stopped before it could be used');
      forget(proc);
    }
  }

  function release(proc: HostProcess): void {
    proc.activeRequests--;
    proc.lastUsedAt = Date.now();
    if (proc.activeRequests === 0 && proc.exit === null && proc.stopReason === null) armIdleTimer(proc);
  }

  /** One POST to a host, classified. A host that misses the watchdog deadline is killed. */
  async function exchange(proc: HostProcess, path: '/inspect' | '/handle', body: string, timeoutMs: number, signal: AbortSignal | undefined): Promise<Outcome> {
    const watchdog = new AbortController();
    const timer = setTimeout(() => watchdog.abort(), timeoutMs + settings.watchdogGraceMs);
    timer.unref();
    const combined = signal ? AbortSignal.any([watchdog.signal, signal]) : watchdog.signal;
    try {
      const response = await post(proc, path, body, combined);
      const text = await readBody(response, MAX_ANSWER_BYTES);
      if (response.statusCode !== 200) return { kind: 'failed', detail: `the MCP host answered ${response.statusCode}: ${text.slice(0, 300)}` };
      return { kind: 'answer', value: JSON.parse(text) };
    } catch (error) {
      if (watchdog.signal.aborted) {
        logger?.warn('mcp host unresponsive; killing it', { tenantId: proc.tenantId, pid: proc.pid, timeoutMs });
        void stopProcess(proc, 'unresponsive');
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
        proc = await acquire(tenantId);
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
          case 'crashed':
            return { ok: false, error: `the server's process ${outcome.detail} while the source was loaded` };
          case 'cancelled':
          case 'closed':
            throw new McpRuntimeUnavailableError('the local MCP runtime is shutting down');
          case 'failed':
            throw new McpRuntimeUnavailableError(outcome.detail);
        }
      } finally {
        release(proc);
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
      if (signal?.aborted) return jsonRpcErrorResponse(499, id, MCP_ERROR_CODE.connectionClosed, 'the request was cancelled');
      let proc: HostProcess;
      try {
        proc = await acquire(tenantId);
      } catch (error) {
        return jsonRpcErrorResponse(503, id, MCP_ERROR_CODE.connectionClosed, `the MCP runtime is unavailable: ${messageOf(error)}`);
      }
      try {
        const outcome = await exchange(proc, '/handle', body, settings.requestTimeoutMs, signal);
        switch (outcome.kind) {
          case 'answer':
            try {
              return parseHttpResponse(outcome.value);
            } catch (error) {
              if (!(error instanceof HostProtocolError)) throw error;
              return jsonRpcErrorResponse(502, id, MCP_ERROR_CODE.internalError, error.message);
            }
          case 'refused':
            // Refused before anything was sent (the host had just died): once more on a new one.
            if (attempt === 0) continue;
            return jsonRpcErrorResponse(503, id, MCP_ERROR_CODE.connectionClosed, 'the MCP runtime is unavailable: its process could not be reached');
          case 'timeout':
            return jsonRpcErrorResponse(504, id, MCP_ERROR_CODE.requestTimeout, `the MCP server did not answer within ${settings.requestTimeoutMs} ms`);
          case 'crashed':
            return jsonRpcErrorResponse(502, id, MCP_ERROR_CODE.connectionClosed, `the MCP server's process ${outcome.detail} during the request`);
          case 'cancelled':
            return jsonRpcErrorResponse(499, id, MCP_ERROR_CODE.connectionClosed, 'the request was cancelled');
          case 'closed':
            return jsonRpcErrorResponse(503, id, MCP_ERROR_CODE.connectionClosed, 'the MCP runtime is shutting down');
          case 'failed':
            return jsonRpcErrorResponse(502, id, MCP_ERROR_CODE.internalError, outcome.detail);
        }
      } finally {
        release(proc);
      }
    }
  }

  function stats() {
    const processes: McpProcessInfo[] = [];
    let starting = 0;
    for (const slot of slots.values()) {
      const proc = slot.process;
      if (proc === null) starting++;
      else {
        processes.push({
          tenantId: proc.tenantId,
          pid: proc.pid,
          port: proc.port,
          activeRequests: proc.activeRequests,
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
        // a host that failed to start has already been cleaned up
      }
    });
    await Promise.all(pending);
    process.off('exit', killAllOnExit);
  }

  return {
    inspect,
    handle,
    stats,
    close,
    onProcessExit(listener) {
      exitListeners.add(listener);
      return () => exitListeners.delete(listener);
    },
  };
}

/** A host's whole environment: a few basics, never the platform's own variables. */
export function hostEnv(parent: NodeJS.ProcessEnv): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of INHERITED_ENV) {
    const value = parent[name];
    if (value !== undefined && value !== '') env[name] = value;
  }
  env.LANG ??= 'C.UTF-8';
  return env;
}

/**
 * The permission-model flags of a host: read access to the host's directory and to the allowed
 * packages and everything they depend on; nothing else (no writes, processes, workers or addons).
 */
export function permissionFlags(hostScript: string, modulesFrom: string): string[] {
  const flags = process.allowedNodeEnvironmentFlags;
  const enable = flags.has('--permission') ? '--permission' : flags.has('--experimental-permission') ? '--experimental-permission' : null;
  if (enable === null) return [];
  const readable = [dirname(realpathSync(hostScript)), ...packageClosure(ALLOWED_PACKAGES, modulesFrom)];
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
      if (item.required) throw new McpRuntimeUnavailableError(`${item.name} is not installed where MCP servers resolve modules from (${fromDir}); run npm install`);
      continue;
    }
    if (found.has(dir)) continue;
    found.add(dir);
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { dependencies?: object; optionalDependencies?: object };
    for (const dependency of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) queue.push({ name: dependency, from: dir, required: false });
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

/** Resolves with the port from the host's `listening` line; rejects with a message a user can act on. */
function waitForListening(
  child: ChildProcess,
  lines: Interface,
  exited: Promise<HostExit>,
  stderrTail: readonly string[],
  settings: { node: string; startTimeoutMs: number },
): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const tail = () => (stderrTail.length > 0 ? `: ${stderrTail.slice(-5).join(' | ')}` : '');
    const timer = setTimeout(() => finish(new McpRuntimeUnavailableError(`the MCP host did not start within ${settings.startTimeoutMs} ms${tail()}`)), settings.startTimeoutMs);
    const finish = (outcome: number | Error) => {
      clearTimeout(timer);
      lines.removeAllListeners('line');
      if (typeof outcome === 'number') resolve(outcome);
      else reject(outcome);
    };
    lines.once('line', (line) => {
      const port = listeningPort(line);
      if (port === null) finish(new McpRuntimeUnavailableError(`the MCP host printed an unexpected first line: ${line.slice(0, 200)}`));
      else finish(port);
    });
    child.once('error', (error) => finish(new McpRuntimeUnavailableError(`the MCP host could not be started with ${settings.node} (${error.message})`)));
    void exited.then(({ code, signal }) => {
      // Give the stderr reader a moment to take in the last lines, which usually say why.
      setTimeout(() => finish(new McpRuntimeUnavailableError(`the MCP host exited during start (${signal ?? `code ${code}`})${tail()}`)), 50);
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
function post(proc: HostProcess, path: string, body: string, signal: AbortSignal): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      agent: proc.agent,
      host: '127.0.0.1',
      port: proc.port,
      method: 'POST',
      path,
      headers: { authorization: proc.authorization, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      signal,
    });
    request.on('error', reject);
    request.once('response', resolve);
    request.end(body);
  });
}

/** The host's exit, if it comes within `ms` (a dropped connection may precede the exit event). */
async function exitWithin(proc: HostProcess, ms: number): Promise<HostExit | null> {
  if (proc.exit !== null) return proc.exit;
  let timer: NodeJS.Timeout | undefined;
  const exit = await Promise.race([proc.exited, new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), ms)))]);
  clearTimeout(timer);
  return exit;
}

function describeExit(proc: HostProcess, exit: HostExit): string {
  if (proc.stderr.outOfMemory) return 'ran out of memory and stopped';
  return `stopped (${exit.signal ?? `exit code ${exit.code}`})`;
}

function clearIdleTimer(proc: HostProcess): void {
  if (proc.idleTimer !== null) clearTimeout(proc.idleTimer);
  proc.idleTimer = null;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

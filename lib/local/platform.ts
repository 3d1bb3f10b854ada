import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import type { ChildProcess } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { Server } from 'node:http';
import { areas, checkAreas, type AreaModule } from '../manifest/index.ts';
import type { Host } from '../manifest/types.ts';
import { createBlobStore, createS3Access } from '../../functions/core/blobs.ts';
import { parseConfig, type Config } from '../../functions/core/config.ts';
import type { IdentityVerifier } from '../../functions/core/auth/credentials.ts';
import { createRunTokens, fixedKeyRing, deriveRunTokenKey } from '../../functions/core/auth/run-token.ts';
import { systemClock, type Clock } from '../../functions/core/clock.ts';
import { createLocalSecretBox } from '../../functions/adapters/secret-box/local.ts';
import type { SecretReader } from '../../functions/core/secret-reader.ts';
import { createEgressProxy } from '../../functions/runtimes/egress-proxy.ts';
import { createLocalCompute } from '../../functions/adapters/compute/local.ts';
import { describeInterpreter } from '../../functions/runtimes/python-interpreter.ts';
import { createLocalMcpRuntime } from '../../functions/adapters/mcp-runtime/local.ts';
import { prepareOsSandbox, type UidRange } from '../../functions/runtimes/os-sandbox.ts';
import { createLogger, type Logger, type LogLevel } from '../../functions/core/logger.ts';
import { publicUrls } from '../../functions/core/http/public-urls.ts';
import { createPorts, type Ports } from '../../functions/ports.ts';
import { createAccount } from '../../functions/users/user.service.ts';
import { connectLocalSiteCache } from '../../functions/websites/site-cache.ts';
import { loadAreas, type ImportHandlerModule } from './handlers.ts';
import { startLocalScheduler, type LocalScheduler } from './scheduler.ts';
import { createLocalSchedules, type LocalSchedules } from '../../functions/adapters/schedules/local.ts';
import { startLocalServices, type LocalServices } from './services.ts';
import { assetHosts, localAssets } from './assets.ts';
import { localConsole, withConsole } from './console.ts';
import { createLocalServer, LOCAL_HOST_PREFIX, LOCAL_OWN_PORT_HOSTS } from './server.ts';
import { startLocalStorageEvents, type LocalStorageEvents } from './storage-events.ts';
import { LOCAL_PREFIX, localStoresLayout } from './stores-layout.ts';
import { startLocalStores, type LocalStores } from './stores.ts';
import { createLocalTaskQueue, type LocalTaskQueue } from '../../functions/adapters/task-queue/local.ts';
import { inProcessAgentRuns } from '../../functions/agents/agent-runs.service.ts';

export interface LocalPlatformOptions {
  readonly port: number;
  /**
   * The port of the site host (SITE_PORT), another origin than the API's. @default `port + 1`, or
   * 0 (any free port) when `port` is 0
   */
  readonly sitePort?: number;
  readonly host: string;
  readonly dataDir: string;
  readonly logLevel?: LogLevel;
  /** Replaces the system clock (tests step time instead of sleeping). */
  readonly clock?: Clock;
  /**
   * Platform settings (e.g. MONTHLY_FREE_CREDITS, OAUTH_PROVIDER_A_*); defaults to the process
   * environment. Stores, prefixes and URLs are always the local ones.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Verifies identity-provider session tokens; none locally unless given (tests pass a Cognito verifier). */
  readonly identity?: IdentityVerifier;
  /**
   * Reads `_CLIENT_SECRET_ARN` secrets; none locally unless given, so local settings carry the
   * client secrets themselves (tests pass a Secrets Manager reader pointed at moto).
   */
  readonly secrets?: SecretReader;
  /** Extra directories on the Python runtime's path (frameworks for user code; tests' stand-ins). */
  readonly runtimePythonPath?: readonly string[];
  /** The Python interpreter for user code, a path or a name on PATH (PYTHON; default `python3`). */
  readonly python?: string;
  /** Where log lines go (default stdout); tests capture them to check what is never logged. */
  readonly logWriter?: (line: string) => void;
  /**
   * How user code is contained (os-sandbox.ts). By default every tenant's runtime runs in a
   * bubblewrap sandbox, as a uid of the tenant's own from `uidRange` (SANDBOX_UID_RANGE) with at
   * most `maxProcesses` processes and threads (SANDBOX_MAX_PROCESSES) when the platform is root,
   * and user code is refused when no sandbox can be made. `unsafeUserCode: 'allow'`
   * (UNSAFE_USER_CODE=allow) runs it without one. `nice` (SANDBOX_NICE) is its CPU priority.
   */
  readonly sandbox?: { readonly unsafeUserCode?: 'allow'; readonly uidRange?: UidRange; readonly maxProcesses?: number; readonly nice?: number };
  /**
   * Python runtime servers kept started for tenants that have none yet (RUNTIME_SPARES, default
   * 1), so that a tenant's first run does not wait for an interpreter start; 0 starts none.
   */
  readonly runtimeSpares?: number;
  /**
   * Voice session processes kept started with the voice framework (Strands) already imported
   * (VOICE_SPARES, default 1), so that a call is ready without waiting for an interpreter and the
   * framework's imports; 0 starts each call's process when it connects.
   */
  readonly voiceSpares?: number;
  /** A tenant's runtime or MCP host without calls for this long is stopped (RUNTIME_IDLE_SECONDS; default 10 minutes). */
  readonly runtimeIdleTimeoutMs?: number;
  /**
   * Most Python runtimes, spares included, and most MCP hosts alive at once (RUNTIME_MAX_PROCESSES;
   * default from the machine's memory, see `memorySizedPool`): with the idle stop, what bounds the
   * memory of tenants' processes.
   */
  readonly runtimeMaxProcesses?: number;
  /** What MCP servers' `fetch` may reach (MCP_EGRESS_ALLOW_HOSTS; default any public host). */
  readonly mcpEgressAllowHosts?: readonly string[];
  /** The areas to serve: their routes, entry points, tables and buckets. @default the manifest's (lib/manifest/areas.ts) */
  readonly areas?: readonly AreaModule[];
  /**
   * How handler modules are imported (by manifest path), each on first use. @default by file path
   * from the repository (under tsx); the built start passes its bundle's importer (build.ts).
   */
  readonly importHandlerModule?: ImportHandlerModule;
  /**
   * The stores' process, forked ahead by the built start (forkStoresProcess) so that it loads while
   * this process does. @default forked here, from stores-process.ts compiled on first use (stores.ts)
   */
  readonly storesProcess?: ChildProcess;
  /**
   * Given the stores' process at close, idle and alive, instead of ending it, for another start's
   * `storesProcess` (the test harness; startLocalStores). @default the process ends with the platform
   */
  readonly keepStoresProcess?: (child: ChildProcess) => void;
}

export interface RunningPlatform {
  readonly url: string;
  /**
   * The site host (its own port), when an area serves the site host: `http://localhost:SITE_PORT`,
   * each site at `http://{alias}.localhost:SITE_PORT/` (the path form redirects there).
   */
  readonly siteUrl: string | null;
  readonly dataDir: string;
  /** Set when this start created the admin account. */
  readonly createdAdminToken: string | null;
  /** The ports the handlers run on (stores, runtimes, clock), for the CLI and tests. */
  readonly ports: Ports;
  /** The in-process scheduler running the areas' schedules. */
  readonly scheduler: LocalScheduler;
  /** The persistent in-process queue running the areas' queue entry points (tasks sent with the `tasks` port). */
  readonly tasks: LocalTaskQueue;
  /** The run-time schedules (cron jobs) and their timers. */
  readonly schedules: LocalSchedules;
  /** Runs the areas' storage events for objects written to the local blob store. */
  readonly storageEvents: LocalStorageEvents;
  close(): Promise<void>;
}

/** A failure the user can fix, explained in one line (no stack trace). */
export class StartupError extends Error {}

export const ADMIN_TOKEN_FILE = 'admin-token';
export const MASTER_KEY_FILE = 'master.key';
const LOCK_FILE = 'platform.pid';

/** The spares kept when the options name none (RUNTIME_SPARES and VOICE_SPARES unset). */
export const DEFAULT_SPARES = { runtimeSpares: 1, voiceSpares: 1 } as const;

/**
 * Composition root of `npm start`: dynalite and s3rver under DATA_DIR, tables and buckets from the
 * manifest, the handlers behind one HTTP port, an admin account on first start.
 */
export async function startLocalPlatform(options: LocalPlatformOptions): Promise<RunningPlatform> {
  const dataDir = resolve(options.dataDir);
  await mkdir(dataDir, { recursive: true });
  await acquireLock(dataDir);
  let ports: Ports | null = null;
  const cleanup: (() => Promise<void>)[] = [
    async () => {
      await rm(join(dataDir, LOCK_FILE), { force: true });
      heldDataDirs.delete(dataDir);
    },
  ];
  const undo = async () => {
    for (const step of cleanup.reverse()) await step().catch(() => undefined);
  };
  try {
    const served = options.areas ?? areas;
    checkAreas(served);
    // The stores' process takes a few hundred ms to answer: it starts first, creating the tables
    // and buckets that are missing, and this process listens and prepares the ports meanwhile.
    const storesStarting = startLocalStores(dataDir, localStoresLayout(served), options.storesProcess, options.keepStoresProcess);
    // Awaited below or by the clean-up; a failure to start must not surface as an unhandled rejection first.
    storesStarting.catch(() => undefined);
    cleanup.push(async () => (await storesStarting).close());
    // User code's sandbox and runtimes need nothing of the stores, so they come first (the logger at
    // the level localConfig gives the handlers).
    const log = createLogger(options.logLevel ?? 'info', { stage: 'local' }, options.logWriter);
    // Every tenant's user code runs in an OS sandbox whose only way out is this egress proxy.
    const sandbox = prepareOsSandbox({ ...options.sandbox, logger: log });
    sandbox.then(
      (ready) => log.info('user code sandbox ready', { sandbox: ready.description }),
      (error: unknown) => log.warn('user code cannot run until this is fixed', { reason: (error as Error).message }),
    );
    const egress = createEgressProxy({ logger: log });
    cleanup.push(() => egress.close());
    // One warm runtime process per tenant, started on first use; all stopped with the platform.
    const compute = createLocalCompute({
      logger: log,
      sandbox,
      egress,
      spares: options.runtimeSpares ?? DEFAULT_SPARES.runtimeSpares,
      voiceSpares: options.voiceSpares ?? DEFAULT_SPARES.voiceSpares,
      ...(options.runtimeIdleTimeoutMs !== undefined ? { idleTimeoutMs: options.runtimeIdleTimeoutMs } : {}),
      ...(options.runtimeMaxProcesses !== undefined ? { maxProcesses: options.runtimeMaxProcesses } : {}),
      ...(options.runtimePythonPath ? { pythonPath: options.runtimePythonPath } : {}),
      ...(options.python !== undefined ? { python: options.python } : {}),
    });
    cleanup.push(() => compute.close());
    // The preflight: one line saying which Python user code runs on and whether agents can import
    // their framework, or what to install. In the background (one short subprocess, shared with
    // the spare's start below): the start never waits for it.
    compute.interpreter().then(
      (python) => log.info(describeInterpreter(python)),
      (error: unknown) =>
        log.warn(`Python runtime unavailable: agents and actions answer 503 RUNTIME_UNAVAILABLE until this is fixed: ${(error as Error).message}`),
    );
    // The spares (a runtime server and a voice session process) start now, in the background,
    // while this process loads its handlers and waits on the stores' process: the first run or
    // call after start finds one (nearly) ready, and the start never waits for them.
    void compute.warm();
    const loaded = await loadAreas(served, options.importHandlerModule);
    let services: LocalServices | null = null;
    const server = createLocalServer({
      routes: loaded.buffered,
      streamRoutes: loaded.streaming,
      ports: () => ports,
      services: { hosts: new Set(loaded.services.map((s) => s.spec.host)), forHost: (host) => services?.forHost(host) ?? null },
      assets: withConsole(localAssets(served), localConsole()),
    });
    await listen(server, options.port, options.host);
    // Memoized: close() drains the server first, then the undo steps find it already closed.
    let serverClosed: Promise<void> | undefined;
    const serverDrains = [() => (serverClosed ??= closeServer(server))];
    const drainServer = () => Promise.all(serverDrains.map((drain) => drain())).then(() => undefined);
    cleanup.push(drainServer);
    const portOf = (listening: Server) => (listening.address() as AddressInfo).port;
    const origin = (listening: Server) => `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${portOf(listening)}`;
    const url = origin(server);
    // Hosts on ports of their own (the site host): a second listener, drained with the first.
    const ownPort = new Map<Host, string>();
    let siteAliasOrigins = false;
    for (const host of LOCAL_OWN_PORT_HOSTS) {
      if (![...loaded.buffered, ...loaded.streaming].some((route) => route.spec.host === host)) continue;
      const hostServer = createLocalServer({ routes: loaded.buffered, streamRoutes: loaded.streaming, ports: () => ports, only: host });
      await listen(hostServer, options.sitePort ?? (options.port === 0 ? 0 : options.port + 1), options.host, 'SITE_PORT');
      let hostClosed: Promise<void> | undefined;
      const drainHost = () => (hostClosed ??= closeServer(hostServer));
      serverDrains.push(drainHost);
      // Each site on an origin of its own, `{alias}.localhost:SITE_PORT`, when browsers can reach it so.
      siteAliasOrigins = host === 'site' && reachableAsLocalhost(options.host);
      ownPort.set(host, siteAliasOrigins ? `http://localhost:${portOf(hostServer)}` : origin(hostServer));
      if (host === 'site' && !siteAliasOrigins)
        log.warn(`users' sites share one origin: give HOST a loopback address or 0.0.0.0 for one origin per site ({alias}.localhost)`);
    }

    const stores = await storesStarting;
    const config = localConfig(url, ownPort, siteAliasOrigins, stores, options.logLevel ?? 'info', options.env ?? process.env, served);
    logPublicUrls(log, config);
    const masterKey = await loadMasterKey(dataDir);
    const secretBox = createLocalSecretBox(masterKey);
    const runTokenKey = deriveRunTokenKey(masterKey);
    const runTokens = createRunTokens(fixedKeyRing(runTokenKey), options.clock ?? systemClock);
    // One MCP host process per tenant, likewise started on first use and stopped with the platform.
    const mcpRuntime = createLocalMcpRuntime({
      logger: log,
      sandbox,
      egress,
      ...(options.runtimeIdleTimeoutMs !== undefined ? { idleTimeoutMs: options.runtimeIdleTimeoutMs } : {}),
      ...(options.runtimeMaxProcesses !== undefined ? { maxProcesses: options.runtimeMaxProcesses } : {}),
      ...(options.mcpEgressAllowHosts ? { egressAllowHosts: options.mcpEgressAllowHosts } : {}),
    });
    cleanup.push(() => mcpRuntime.close());
    // Tasks sent before it starts below cannot happen: routes answer 503 until the platform is ready.
    const tasks = createLocalTaskQueue();
    const schedules = createLocalSchedules();
    const ready = createPorts(
      config,
      {
        identity: options.identity ?? null,
        runTokens,
        secretBox,
        compute,
        mcpRuntime,
        taskQueue: tasks,
        schedules,
        // Cron jobs and channels run agents through the chat service of this same process.
        agentRuns: inProcessAgentRuns(() => ready),
        blobs: createBlobStore(createS3Access(config), config, 'blobs'),
        // D, issue 33: every alias claim and release goes through this process.
        cacheAliases: true,
        secrets: options.secrets ?? null,
        log,
        ...(options.clock ? { clock: options.clock } : {}),
      },
      served,
    );
    // The admin account meanwhile: the two need nothing of each other.
    const bootstrapping = bootstrapAdmin(ready, dataDir);
    bootstrapping.catch(() => undefined);
    // Resumes the tasks a previous run left pending. Stopped after the scheduler and storage events,
    // which may send tasks (cleanup runs in reverse), before the stores its deliveries write to.
    cleanup.push(() => tasks.close());
    await tasks.start({ queues: loaded.queues, ports: ready });
    // Arms the run-time schedules (cron jobs) from now; stopped before the task queue they send to.
    cleanup.push(() => schedules.close());
    await schedules.start({ queues: loaded.queues, taskQueue: tasks, ports: ready });
    const createdAdminToken = await bootstrapping;
    const storageEvents = startLocalStorageEvents({
      storageEvents: loaded.storageEvents,
      ports: ready,
      subscribe: (listener) => stores.onS3Event(listener),
      flush: () => stores.flushS3Events(),
    });
    cleanup.push(() => storageEvents.close());
    // D, issue 33: the site host serves from memory, kept true by the websites bucket's notifications.
    const siteCache = (ready as Partial<Ports>).siteCache;
    if (siteCache !== undefined) {
      const disconnect = connectLocalSiteCache(siteCache, {
        bucket: `${config.BUCKET_PREFIX}websites`,
        subscribe: (listener) => stores.onS3Event(listener),
        flush: () => stores.flushS3Events(),
      });
      cleanup.push(async () => disconnect());
    }
    ports = ready;
    // Stopped before the runtimes and stores (cleanup runs in reverse), after in-flight requests.
    const scheduler = startLocalScheduler({ schedules: loaded.schedules, ports: ready });
    cleanup.push(() => scheduler.close());
    // Started once the ports are ready, stopped (drained) before them.
    const started = await startLocalServices(loaded.services, ready);
    services = started;
    cleanup.push(() => started.close());

    return {
      url,
      siteUrl: ownPort.get('site') ?? null,
      dataDir,
      createdAdminToken,
      ports: ready,
      scheduler,
      tasks,
      schedules,
      storageEvents,
      // In-flight requests finish before the runtimes and the stores behind them are stopped. The
      // services drain meanwhile: the server counts their upgraded sockets as open connections, so
      // it cannot finish closing before they end them.
      close: async () => {
        const drained = drainServer();
        await started.close();
        await drained;
        await undo();
      },
    };
  } catch (error) {
    await undo();
    throw error;
  }
}

/** The host URL settings, each with the host it names. */
const HOST_URL_SETTINGS = {
  base: 'BASE_URL',
  stream: 'STREAM_URL',
  mcp: 'MCP_URL',
  voice: 'VOICE_URL',
  cdn: 'CDN_URL',
  site: 'SITE_URL',
  code: 'CODE_URL',
} as const satisfies Record<Host, string>;

/**
 * The local platform's configuration: the operator's settings, with the stores, prefixes and the
 * local server's own origin always the local ones. Each host's URL is the one set for it (BASE_URL,
 * ...), else derived from PUBLIC_URL (a tunnel's URL), else from the local server's own, as the
 * server lays the hosts out: the base and MCP hosts at the root, the others at their path prefix
 * (LOCAL_HOST_PREFIX), voice as WebSocket, a host on a port of its own (the site host) from that
 * port, which a tunnel to PORT does not reach.
 */
function localConfig(
  url: string,
  ownPort: ReadonlyMap<Host, string>,
  siteAliasOrigins: boolean,
  stores: Pick<LocalStores, 'dynamoEndpoint' | 's3Endpoint' | 'credentials'>,
  logLevel: LogLevel,
  env: Readonly<Record<string, string | undefined>>,
  modules: readonly AreaModule[],
): Config {
  // Checked alone first, so that the hosts derive from its normalised form (no trailing slash).
  const publicUrl = parseConfig({ ...env, TABLE_PREFIX: LOCAL_PREFIX, BUCKET_PREFIX: LOCAL_PREFIX }, []).PUBLIC_URL ?? url;
  const derived = (host: Host) => {
    const at = ownPort.get(host) ?? publicUrl + LOCAL_HOST_PREFIX[host];
    return host === 'voice' ? at.replace(/^http/, 'ws') : at;
  };
  // The API's hosts and the streaming host always; the others only when an area serves them (a
  // route or a service there), as the stack does, so discovery lists no host answering only 404.
  // Explicitly unset otherwise: a value left in the environment would advertise nothing too.
  const served = new Set<Host>([
    'base',
    'mcp',
    'stream',
    ...modules.flatMap((area) => [...area.routes.map((r) => r.host), ...area.entryPoints.flatMap((e) => (e.kind === 'service' ? [e.host] : []))]),
    ...assetHosts(modules),
  ]);
  const hostUrls = Object.fromEntries(
    (Object.entries(HOST_URL_SETTINGS) as [Host, string][]).map(([host, setting]) => [setting, served.has(host) ? (env[setting] ?? derived(host)) : undefined]),
  );
  return parseConfig(
    {
      ...env,
      STAGE: 'local',
      AWS_REGION: 'us-east-1',
      TABLE_PREFIX: LOCAL_PREFIX,
      BUCKET_PREFIX: LOCAL_PREFIX,
      DYNAMODB_ENDPOINT: stores.dynamoEndpoint,
      S3_ENDPOINT: stores.s3Endpoint,
      LOCAL_STORES_ACCESS_KEY_ID: stores.credentials.accessKeyId,
      LOCAL_STORES_SECRET_ACCESS_KEY: stores.credentials.secretAccessKey,
      LOCAL_ORIGIN: url,
      ...hostUrls,
      // A site host set by the operator gives each site an origin of its own only when they say its
      // name has a wildcard; the local one does whenever browsers reach it as `localhost`.
      SITE_ALIAS_ORIGINS: env['SITE_URL'] !== undefined ? (env['SITE_ALIAS_ORIGINS'] ?? 'false') : String(siteAliasOrigins),
      LOG_LEVEL: logLevel,
    },
    modules,
  );
}

/**
 * Where outside services and clients are sent, said once at start when it is not the local server:
 * the URL a webhook is registered at and a signature is checked against is what an operator
 * trying a channel through a tunnel needs to see.
 */
function logPublicUrls(log: Logger, config: Config): void {
  if (config.PUBLIC_URL !== undefined) {
    const urls = publicUrls(config, config.PUBLIC_URL);
    log.info(`public URL ${config.PUBLIC_URL}: webhooks, stream URLs and signature checks use it`, { ...urls });
    if (config.TRUST_FORWARDED_HEADERS) log.info('TRUST_FORWARDED_HEADERS is set, but PUBLIC_URL fixes the URLs the platform gives out');
  } else if (config.TRUST_FORWARDED_HEADERS) {
    log.info("TRUST_FORWARDED_HEADERS: the URLs each request is given follow its proxy's forwarded host and scheme");
  }
}

/**
 * Whether a platform listening on `host` is reached as `localhost`: browsers resolve `localhost`
 * and every `*.localhost` name to loopback themselves (RFC 6761), which is what gives each local
 * site an origin of its own without DNS. A listener on another address only is not.
 */
function reachableAsLocalhost(host: string): boolean {
  return ['localhost', '127.0.0.1', '::1', '0.0.0.0', '::'].includes(host);
}

/**
 * The local master key for sealing third-party keys: 32 random bytes in DATA_DIR/master.key (mode
 * 600), created on first start. Losing it makes stored keys unreadable, as losing a KMS key would.
 */
async function loadMasterKey(dataDir: string): Promise<Buffer> {
  const file = join(dataDir, MASTER_KEY_FILE);
  try {
    await writeFile(file, randomBytes(32).toString('base64') + '\n', { mode: 0o600, flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'base64');
  if (key.length !== 32) throw new StartupError(`${file} is not a valid master key (expected 32 base64-encoded bytes); restore it from a backup.`);
  return key;
}

/** On an empty DATA_DIR: the operator account (alias `admin`, 10,000 credits), its token in a mode-600 file. */
async function bootstrapAdmin(ports: Ports, dataDir: string): Promise<string | null> {
  if ((await ports.users.getAliasClaim('admin')) !== null) return null;
  const admin = await createAccount({ alias: 'admin', credits: 10_000, isAdmin: true }, ports, null);
  const file = join(dataDir, ADMIN_TOKEN_FILE);
  await writeFile(file, admin.token + '\n', { mode: 0o600 });
  await chmod(file, 0o600);
  return admin.token;
}

/** Data directories this process holds; the pid file alone cannot tell two starts in one process apart. */
const heldDataDirs = new Set<string>();

async function acquireLock(dataDir: string): Promise<void> {
  const file = join(dataDir, LOCK_FILE);
  const inUse = (pid: number) =>
    new StartupError(`DATA_DIR ${dataDir} is in use by another running platform (pid ${pid}); stop it or choose another DATA_DIR.`);
  if (heldDataDirs.has(dataDir)) throw inUse(process.pid);
  try {
    await writeFile(file, String(process.pid), { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const holder = Number((await readFile(file, 'utf8').catch(() => '')).trim());
    if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) throw inUse(holder);
    // The previous holder is gone: a stale lock from a crash.
    await writeFile(file, String(process.pid));
  }
  heldDataDirs.add(dataDir);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function listen(server: Server, port: number, host: string, setting = 'PORT'): Promise<void> {
  return new Promise((resolveListen, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') reject(new StartupError(`Port ${port} on ${host} is already in use; set ${setting} to a free port.`));
      else if (error.code === 'EADDRNOTAVAIL') reject(new StartupError(`Cannot listen on ${host}: no such local address; check HOST.`));
      else reject(error);
    });
    server.listen(port, host, () => resolveListen());
  });
}

/** Stops accepting, lets in-flight requests finish, then closes idle keep-alive sockets. */
function closeServer(server: Server): Promise<void> {
  return new Promise((resolveClose) => {
    server.close(() => resolveClose());
    server.closeIdleConnections();
  });
}

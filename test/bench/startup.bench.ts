import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { get as httpGet } from 'node:http';
import { join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { ListBucketsCommand, S3Client } from '@aws-sdk/client-s3';
import { areas } from '../../lib/manifest/index.ts';
import { startLocalPlatform, type RunningPlatform } from '../../lib/local/platform.ts';
import { localStoresLayout } from '../../lib/local/stores-layout.ts';
import { buildLocalPlatform, CURRENT_FILE, type LocalBuild } from '../../lib/local/build.ts';
import { currentBuild } from '../../lib/local/current-build.mjs';
import { forkStoresProcess } from '../../lib/local/stores-fork.ts';
import { startLocalStores } from '../../lib/local/stores.ts';
import { elapsedSince, freePort, repoRoot, type BenchContext, type BenchModule } from './harness.ts';
import { measured, summarize, versus, type MeasuredRow } from './stats.ts';

const IN_PROCESS_REPS = 8;
const SPAWN_REPS = 4;
const FRESHNESS_REPS = 50;
const HEALTH_POLL_MS = 5;
const SPAWN_DEADLINE_MS = 30_000;
const EXIT_DEADLINE_MS = 10_000;

/** The flags of `npm start`, so the child pays the same loader cost. */
const NODE_FLAGS = ['--openssl-legacy-provider'];
/** Smallest server that answers /health: the floor for "process spawned until first 200". */
const BARE_SERVER = `require('node:http').createServer((q, s) => { s.writeHead(200, { 'content-type': 'application/json' }); s.end('{"status":"ok"}'); }).listen(Number(process.env.PORT), '127.0.0.1');`;

const STORES_EMPTY = 'stores answering, empty dir';
const STORES_EXISTING = 'stores answering, existing dir';
const STORES_BUILT_EMPTY = 'stores answering, built (inlined, seeded), empty dir';
const STORES_BUILT_EXISTING = 'stores answering, built (inlined), existing';
const FRESHNESS = 'npm start build check (stat each input)';
const PLATFORM_EMPTY = 'startLocalPlatform, empty dir';
const PLATFORM_EXISTING = 'startLocalPlatform, restart';
const SPAWN_BARE = 'spawn node, bare http';
const SPAWN_TSX = 'spawn node --import tsx, bare http';
const SPAWN_EMPTY = 'spawn bin/local.ts, empty dir';
const SPAWN_EXISTING = 'spawn bin/local.ts, restart';
const SPAWN_NODE_BUILT_EMPTY = 'spawn node bin/start.mjs (built), empty dir';
const SPAWN_NODE_BUILT_EXISTING = 'spawn node bin/start.mjs (built), restart';
// Read by test/bench/targets.ts: what a user types, through the npm CLI.
const SPAWN_BUILT_EMPTY = 'spawn npm start (built), empty dir';
const SPAWN_BUILT_EXISTING = 'spawn npm start (built), restart';

export const startupBench: BenchModule = {
  name: 'startup',
  async run(context) {
    // Its own build root, built once up front: the spawned starts below find it fresh. Inside the
    // project, where the bundle's packages resolve.
    context.progress('startup: building the local platform');
    await mkdir(join(repoRoot, '.tmp'), { recursive: true });
    const buildRoot = await mkdtemp(join(repoRoot, '.tmp', 'bench-local-build-'));
    context.defer(() => rm(buildRoot, { recursive: true, force: true }));
    const built = await buildLocalPlatform(buildRoot);
    return [
      ...(await inProcess(context, built)),
      buildFreshness(buildRoot),
      measured('npm run build (once)', [built.ms], { note: `${Object.keys(built.inputs).length} inputs; npm start runs it when one changed` }),
      ...(await spawned(context, buildRoot)),
    ];
  },
};

async function timed<T>(work: () => Promise<T>): Promise<[T, number]> {
  const startedAt = performance.now();
  const value = await work();
  return [value, elapsedSince(startedAt)];
}

const startPlatform = (dataDir: string) => startLocalPlatform({ port: 0, host: '127.0.0.1', dataDir, logLevel: 'silent' });

/**
 * The floor under `startLocalPlatform`: the stores' process started on the same kind of directory,
 * with the platform's tables and buckets (created on an empty one), and each store answering one
 * call through a fresh client. The platform imports its handlers while this process starts, so the
 * two overlap.
 */
async function storesAnswering(dataDir: string, builtProcess?: string): Promise<() => Promise<void>> {
  // The built process with the build's seed beside it, as the built start forks it.
  const forked = builtProcess === undefined ? undefined : forkStoresProcess(builtProcess, join(builtProcess, '..', 'seed'));
  const stores = await startLocalStores(dataDir, localStoresLayout(areas), forked);
  // The credentials of this start, which the platform's own clients use: the stores refuse any other.
  const dynamo = new DynamoDBClient({ region: 'us-east-1', endpoint: stores.dynamoEndpoint, credentials: stores.credentials });
  const s3 = new S3Client({ region: 'us-east-1', endpoint: stores.s3Endpoint, forcePathStyle: true, credentials: stores.credentials });
  const close = async () => {
    dynamo.destroy();
    s3.destroy();
    await stores.close();
  };
  try {
    await dynamo.send(new ListTablesCommand({}));
    await s3.send(new ListBucketsCommand({}));
    return close;
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * `startLocalPlatform` next to the stores it wraps; the difference is route loading, the table and
 * bucket checks, and the admin bootstrap.
 */
async function inProcess(context: BenchContext, built: LocalBuild): Promise<MeasuredRow[]> {
  const builtStores = join(built.dir, '..', built.storesProcess);
  const samples = new Map<string, number[]>(
    [STORES_EMPTY, STORES_EXISTING, STORES_BUILT_EMPTY, STORES_BUILT_EXISTING, PLATFORM_EMPTY, PLATFORM_EXISTING, 'close()'].map((k) => [k, []]),
  );
  const record = (key: string, ms: number) => samples.get(key)!.push(ms);
  // Stopped by the loop itself; this catches a start that throws half-way through the loop.
  let open: RunningPlatform | null = null;
  context.defer(() => open?.close());

  context.progress('startup: in-process');
  // The first start in a process also imports every handler module; later ones hit the module cache.
  const [cold, coldMs] = await timed(async () => startPlatform(await context.tempDir('cold')));
  await cold.close();

  for (let rep = 0; rep < IN_PROCESS_REPS; rep++) {
    const storesDir = await context.tempDir('stores');
    const [closeStores, storesMs] = await timed(() => storesAnswering(storesDir));
    await closeStores();
    record(STORES_EMPTY, storesMs);
    // The build's stores process, dynalite and s3rver inlined, on an empty and then the same dir.
    const builtDir = await context.tempDir('stores-built');
    const [closeBuilt, builtMs] = await timed(() => storesAnswering(builtDir, builtStores));
    await closeBuilt();
    record(STORES_BUILT_EMPTY, builtMs);
    const [closeBuiltAgain, builtAgainMs] = await timed(() => storesAnswering(builtDir, builtStores));
    await closeBuiltAgain();
    record(STORES_BUILT_EXISTING, builtAgainMs);

    const dataDir = await context.tempDir('platform');
    let platformMs: number;
    [open, platformMs] = await timed(() => startPlatform(dataDir));
    record(PLATFORM_EMPTY, platformMs);
    const [, closeMs] = await timed(() => open!.close());
    open = null;
    record('close()', closeMs);

    [open, platformMs] = await timed(() => startPlatform(dataDir));
    record(PLATFORM_EXISTING, platformMs);
    await open.close();
    open = null;

    const [closeAgain, againMs] = await timed(() => storesAnswering(dataDir));
    await closeAgain();
    record(STORES_EXISTING, againMs);
  }

  const row = (key: string) => measured(key, samples.get(key)!);
  const storesEmpty = row(STORES_EMPTY);
  const storesExisting = row(STORES_EXISTING);
  return [
    storesEmpty,
    versus(row(STORES_BUILT_EMPTY), storesEmpty),
    versus(row(PLATFORM_EMPTY), storesEmpty),
    storesExisting,
    versus(row(STORES_BUILT_EXISTING), storesExisting),
    versus(row(PLATFORM_EXISTING), storesExisting),
    measured('first start in this process', [coldMs], { note: 'includes loading the platform modules; handler modules load on first call' }),
    row('close()'),
  ];
}

/** What `npm start` pays before it starts anything: reading current.json and one stat per input. */
function buildFreshness(buildRoot: string): MeasuredRow {
  const inputs = Object.keys((JSON.parse(readFileSync(join(buildRoot, CURRENT_FILE), 'utf8')) as { inputs: object }).inputs).length;
  const samples: number[] = [];
  for (let rep = 0; rep < FRESHNESS_REPS; rep++) {
    const startedAt = performance.now();
    const build = currentBuild(repoRoot, buildRoot);
    samples.push(elapsedSince(startedAt));
    if (build?.changed !== null) throw new Error(`the bench's build is not fresh: ${build?.changed ?? 'no current.json'}`);
  }
  return measured(FRESHNESS, samples, { note: `${inputs} inputs` });
}

/**
 * What an operator waits for after `npm start`: spawn to the first 200 on /health, so node (and
 * tsx) start-up, module loading and the stores are all in. Baselines are a bare `node:http` child
 * with and without the tsx loader, and the platform from its sources under tsx (`npm run dev`).
 */
async function spawned(context: BenchContext, buildRoot: string): Promise<MeasuredRow[]> {
  const samples = new Map<string, number[]>(
    [SPAWN_BARE, SPAWN_TSX, SPAWN_EMPTY, SPAWN_EXISTING, SPAWN_NODE_BUILT_EMPTY, SPAWN_NODE_BUILT_EXISTING, SPAWN_BUILT_EMPTY, SPAWN_BUILT_EXISTING].map(
      (k) => [k, []],
    ),
  );
  const builtFigures: number[] = [];
  const ownFigures: number[] = [];
  const npmFigures: number[] = [];
  const record = async (key: string, args: string[], env: Record<string, string> = {}, command: Command = NODE) => {
    const result = await spawnUntilHealthy(context, args, env, command);
    samples.get(key)!.push(result.ms);
    if (result.ownMs !== null)
      (key === SPAWN_BUILT_EMPTY || key === SPAWN_BUILT_EXISTING
        ? npmFigures
        : key === SPAWN_NODE_BUILT_EMPTY || key === SPAWN_NODE_BUILT_EXISTING
          ? builtFigures
          : ownFigures
      ).push(result.ownMs);
    // The build is fresh (built above): a start that rebuilt would measure the build, not the start.
    if (/rebuilding|Building/.test(result.output)) throw new Error(`${key} built the platform again:\n${result.output}`);
  };

  for (let rep = 0; rep < SPAWN_REPS; rep++) {
    context.progress(`startup: child processes ${rep + 1}/${SPAWN_REPS}`);
    await record(SPAWN_BARE, ['-e', BARE_SERVER]);
    await record(SPAWN_TSX, [...NODE_FLAGS, '--import', 'tsx', '-e', BARE_SERVER]);
    const dataDir = await context.tempDir('spawn');
    const platformEnv = { DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_LEVEL: 'silent' };
    await record(SPAWN_EMPTY, [...NODE_FLAGS, '--import', 'tsx', 'bin/local.ts'], platformEnv);
    await record(SPAWN_EXISTING, [...NODE_FLAGS, '--import', 'tsx', 'bin/local.ts'], platformEnv);
    const builtEnv = { ...platformEnv, DATA_DIR: await context.tempDir('spawn-built'), LOCAL_BUILD_DIR: buildRoot };
    await record(SPAWN_NODE_BUILT_EMPTY, [...NODE_FLAGS, 'bin/start.mjs'], builtEnv);
    await record(SPAWN_NODE_BUILT_EXISTING, [...NODE_FLAGS, 'bin/start.mjs'], builtEnv);
    const npmEnv = { ...platformEnv, DATA_DIR: await context.tempDir('spawn-npm'), LOCAL_BUILD_DIR: buildRoot };
    await record(SPAWN_BUILT_EMPTY, ['start'], npmEnv, NPM);
    await record(SPAWN_BUILT_EXISTING, ['start'], npmEnv, NPM);
  }

  const row = (key: string, note?: string) => measured(key, samples.get(key)!, note ? { note } : {});
  const bare = row(SPAWN_BARE);
  const tsx = versus(row(SPAWN_TSX), bare);
  const own = ownFigures.length > 0 ? `bin/local.ts's own "ready in N ms": median ${summarize(ownFigures).p50.toFixed(0)} ms` : undefined;
  const builtOwn = builtFigures.length > 0 ? `its own "ready in N ms": median ${summarize(builtFigures).p50.toFixed(0)} ms` : undefined;
  const npmOwn =
    npmFigures.length > 0 ? `the npm CLI, then bin/start.mjs; its own "ready in N ms": median ${summarize(npmFigures).p50.toFixed(0)} ms` : undefined;
  const nodeBuilt = row(SPAWN_NODE_BUILT_EMPTY);
  const nodeBuiltAgain = row(SPAWN_NODE_BUILT_EXISTING, builtOwn);
  const fromSources = row(SPAWN_EMPTY);
  const fromSourcesAgain = row(SPAWN_EXISTING, own);
  return [
    bare,
    tsx,
    versus(versus(fromSources, tsx), bare),
    versus(versus(fromSourcesAgain, tsx), bare),
    versus(versus(nodeBuilt, bare), fromSources),
    versus(versus(nodeBuiltAgain, bare), fromSourcesAgain),
    // Over the same start without the CLI: what `npm` itself adds.
    versus(versus(row(SPAWN_BUILT_EMPTY, 'the npm CLI, then bin/start.mjs'), bare), nodeBuilt),
    versus(versus(row(SPAWN_BUILT_EXISTING, npmOwn), bare), nodeBuiltAgain),
  ];
}

interface SpawnResult {
  readonly ms: number;
  /** What the child printed until it answered. */
  readonly output: string;
  /** The `in N ms` the platform prints about itself, when it did. */
  readonly ownMs: number | null;
}

/** How a child is started: node itself, or the npm CLI (`npm start`, as a user types it). */
interface Command {
  readonly file: string;
  readonly args: readonly string[];
}

const NODE: Command = { file: process.execPath, args: [] };
/**
 * The npm CLI that runs this bench (`npm run bench` sets npm_execpath), run by this node; `npm`
 * from the PATH otherwise.
 */
const NPM: Command = process.env['npm_execpath']?.endsWith('.js')
  ? { file: process.execPath, args: [process.env['npm_execpath']] }
  : { file: process.platform === 'win32' ? 'npm.cmd' : 'npm', args: [] };

async function spawnUntilHealthy(context: BenchContext, args: string[], env: Record<string, string>, command: Command = NODE): Promise<SpawnResult> {
  const port = await freePort();
  // The site host defaults to PORT + 1, which another process may hold: it gets a free port of its own.
  let sitePort = await freePort();
  while (sitePort === port) sitePort = await freePort();
  const startedAt = performance.now();
  const child = spawn(command.file, [...command.args, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env, PORT: String(port), SITE_PORT: String(sitePort) },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: npm runs the platform as a child of its own, and `stop` signals the group.
    detached: true,
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  let exited = false;
  child.once('exit', () => (exited = true));
  try {
    while (!(await healthy(port))) {
      if (exited) throw new Error(`child ${args.join(' ')} exited before answering /health:\n${output}`);
      if (elapsedSince(startedAt) > SPAWN_DEADLINE_MS) throw new Error(`child ${args.join(' ')} not healthy after ${SPAWN_DEADLINE_MS} ms:\n${output}`);
      await new Promise((resolve) => setTimeout(resolve, HEALTH_POLL_MS));
    }
    const ms = elapsedSince(startedAt);
    const own = /ready at \S+ in (\d+) ms/.exec(output);
    return { ms, output, ownMs: own ? Number(own[1]) : null };
  } finally {
    await stop(child, () => exited);
  }
}

/** 200 on /health; a refused connection or the platform's 503 while its stores start are "not yet". */
function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpGet({ host: '127.0.0.1', port, path: '/health', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
      res.on('error', () => resolve(false));
    });
    req.on('error', () => resolve(false));
  });
}

/** SIGTERM, so the platform closes its stores and removes its lock; SIGKILL if it hangs. */
async function stop(child: ChildProcess, hasExited: () => boolean): Promise<void> {
  if (hasExited()) return;
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // The whole group (the child was spawned detached), so the platform under npm gets it too.
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      child.kill(name);
    }
  };
  signal('SIGTERM');
  const timer = setTimeout(() => signal('SIGKILL'), EXIT_DEADLINE_MS);
  await exit;
  // npm may exit before the platform under it has closed its stores and lock: the next start needs both.
  while (groupAlive(child.pid!)) await new Promise((resolve) => setTimeout(resolve, HEALTH_POLL_MS));
  clearTimeout(timer);
}

function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

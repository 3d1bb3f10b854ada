import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { inheritedEnv } from '../../functions/runtimes/process-pool.ts';
import { elapsedSince, repoRoot, type BenchModule } from './harness.ts';
import { measured, versus } from './stats.ts';

const RUNTIME_DIR = join(repoRoot, 'python-runtime');
const START_DEADLINE_MS = 30_000;
/** The bare server, outside any sandbox: what `python3` finds on PATH (pyenv shims included). */
const bareEnv = () => ({ ...inheritedEnv(process.env, ['PATH', 'HOME', 'PYENV_ROOT', 'PYENV_VERSION']), PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' });
const STOP_GRACE_MS = 3_000;

/** The trivial action: what is measured is everything around it. */
const HANDLER = `def handler(event, context):
    return {"statusCode": 200, "body": "ok"}
`;
/** The same handler the way a runner without a fork server would run it: a new interpreter per call. */
const freshScript = (imports: readonly string[]) => `${imports.length > 0 ? `import ${imports.join(', ')}\n` : ''}${HANDLER}
import json
print(json.dumps(handler({}, None)))
`;

const WARM_UP = 10;
const ROUNDS = 100;
/** A new interpreter costs ~100-200 ms here: 50 of them keep the module well under 30 s. */
const FRESH_EVERY = 2;
const PRELOADED_EVERY = 10;

const FRESH = 'python3 -c, fresh process';
const PRELOADED = 'python3 -c, fresh, zygote preloads';
const WARM = 'POST /invoke, warm runtime (fork)';
const SERVER_SIDE = 'end.durationMs (warm runs)';

/** A runtime server this process started, in its own process group (server, fork server, children). */
export interface RuntimeServer {
  readonly pid: number;
  readonly port: number;
  /** SIGTERM to the group, SIGKILL after a grace period; resolves once the server has exited. */
  stop(): Promise<void>;
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // the group is already gone
  }
}

/** Starts `python3 -m platform_runtime.server --port 0` as the local adapter does, and reads its port. */
export async function startRuntimeServer(): Promise<RuntimeServer> {
  const child: ChildProcess = spawn('python3', ['-m', 'platform_runtime.server', '--host', '127.0.0.1', '--port', '0', '--quiet'], {
    cwd: RUNTIME_DIR,
    env: bareEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  const pid = child.pid;
  const exited = new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.once('error', () => resolve());
  });
  if (pid === undefined) {
    await exited;
    throw new Error('python3 could not be started');
  }
  const stderr: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => stderr.push(chunk.toString('utf8')));
  const stop = async () => {
    signalGroup(pid, 'SIGTERM');
    const timer = setTimeout(() => signalGroup(pid, 'SIGKILL'), STOP_GRACE_MS);
    await exited;
    clearTimeout(timer);
    // The server is gone; its fork server and any child must not outlive it.
    signalGroup(pid, 'SIGKILL');
  };
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! });
      const timer = setTimeout(
        () => reject(new Error(`runtime server did not listen within ${START_DEADLINE_MS} ms: ${stderr.join('').slice(-300)}`)),
        START_DEADLINE_MS,
      );
      void exited.then(() => {
        clearTimeout(timer);
        reject(new Error(`runtime server exited before listening: ${stderr.join('').slice(-300)}`));
      });
      lines.once('line', (line) => {
        clearTimeout(timer);
        child.stdout!.resume();
        const parsed = JSON.parse(line) as { event?: string; port?: number };
        if (parsed.event === 'listening' && typeof parsed.port === 'number') resolve(parsed.port);
        else reject(new Error(`unexpected first line from the runtime server: ${line.slice(0, 200)}`));
      });
    });
    return { pid, port, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

export interface TimedEvent {
  readonly event: { readonly type: string; readonly [field: string]: unknown };
  /** Milliseconds from before `request()` to the arrival of the chunk that completed this line. */
  readonly at: number;
}

/** One POST /invoke; every NDJSON event with its arrival time, and the time the body ended. */
export function invokeTimed(agent: Agent, port: number, body: string): Promise<{ events: TimedEvent[]; endMs: number }> {
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const events: TimedEvent[] = [];
    let pending = '';
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path: '/invoke',
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          const at = elapsedSince(startedAt);
          pending += chunk;
          let newline: number;
          while ((newline = pending.indexOf('\n')) >= 0) {
            const line = pending.slice(0, newline).trim();
            pending = pending.slice(newline + 1);
            if (line.length > 0) events.push({ event: JSON.parse(line) as TimedEvent['event'], at });
          }
        });
        res.on('end', () => {
          const endMs = elapsedSince(startedAt);
          if (res.statusCode !== 200) reject(new Error(`POST /invoke: HTTP ${res.statusCode} ${pending.slice(0, 200)}`));
          else resolve({ events, endMs });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The first event of `type`, or an error naming what arrived instead. */
export function firstOf(events: readonly TimedEvent[], type: string): TimedEvent {
  const found = events.find((e) => e.event.type === type);
  if (!found) throw new Error(`no ${type} event in ${JSON.stringify(events.map((e) => e.event)).slice(0, 300)}`);
  return found;
}

/** One warm run to the `end` event; returns the client's wall time and the runtime's own `durationMs`. */
async function warmOnce(agent: Agent, port: number, body: string): Promise<{ ms: number; durationMs: number }> {
  const { events, endMs } = await invokeTimed(agent, port, body);
  const result = firstOf(events, 'result').event;
  const end = events.at(-1)?.event;
  // A fast error must not pass for a fast answer.
  if (result['statusCode'] !== 200 || result['body'] !== 'ok' || end?.type !== 'end' || end['exitCode'] !== 0) {
    throw new Error(`warm run failed: ${JSON.stringify(events.map((e) => e.event)).slice(0, 300)}`);
  }
  return { ms: endMs, durationMs: Number(end['durationMs']) };
}

/** One new interpreter running `script`; resolves with its wall time, spawn to exit. */
function freshOnce(script: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const child = spawn('python3', ['-c', script], { env: bareEnv(), stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => {
      const ms = elapsedSince(startedAt);
      if (code !== 0 || !out.includes('"body": "ok"')) reject(new Error(`python3 -c failed: exit ${code}, output ${out.slice(0, 200)}`));
      else resolve(ms);
    });
  });
}

/** The modules the fork server imported once (from /health), minus the runtime's own. */
async function preloadedModules(agent: Agent, port: number): Promise<string[]> {
  const health = await new Promise<string>((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/health', agent }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new Error(`GET /health: HTTP ${res.statusCode} ${text.slice(0, 200)}`))));
    });
    req.on('error', reject);
    req.end();
  });
  const preloaded = (JSON.parse(health) as { preloaded?: string[] }).preloaded ?? [];
  return [...new Set(preloaded.filter((name) => !name.startsWith('platform_runtime')))];
}

/**
 * The zygote design's point: a trivial action on a warm runtime server (HTTP, static check, fork of
 * the preloaded fork server, sandbox, handler, NDJSON until `end`) next to a new `python3` per call,
 * bare and with the imports the fork server has already paid for.
 */
export const runtimeBench: BenchModule = {
  name: 'runtime',
  async run({ progress, defer }) {
    progress('runtime: starting a runtime server');
    const server = await startRuntimeServer();
    defer(() => server.stop());
    const agent = new Agent({ keepAlive: true });
    defer(() => agent.destroy());
    const body = JSON.stringify({
      kind: 'action',
      source: HANDLER,
      requestId: 'bench',
      functionName: 'bench',
      timeoutMs: 30_000,
      memoryMb: 128,
      env: { SVC_KEYS_JSON: '{}' },
      allowHosts: [],
      event: {},
    });
    const bare = freshScript([]);
    const preloads = await preloadedModules(agent, server.port);
    const withPreloads = freshScript(preloads);

    progress('runtime: warm-up');
    for (let i = 0; i < WARM_UP; i++) await warmOnce(agent, server.port, body);
    await freshOnce(bare);
    await freshOnce(withPreloads);

    const samples = { warm: [] as number[], serverSide: [] as number[], fresh: [] as number[], preloaded: [] as number[] };
    const warmRun = async () => {
      const run = await warmOnce(agent, server.port, body);
      samples.warm.push(run.ms);
      samples.serverSide.push(run.durationMs);
    };
    const freshRun = async () => void samples.fresh.push(await freshOnce(bare));
    const preloadedRun = async () => void samples.preloaded.push(await freshOnce(withPreloads));
    // Interleaved run by run, swapping the order, so the drift of a shared, busy machine falls on
    // every case alike; the slow cases run every FRESH_EVERY-th / PRELOADED_EVERY-th round only.
    progress(`runtime: ${ROUNDS} warm runs, ${ROUNDS / FRESH_EVERY} fresh, ${ROUNDS / PRELOADED_EVERY} fresh with preloads`);
    for (let i = 0; i < ROUNDS; i++) {
      const steps = [warmRun];
      if (i % FRESH_EVERY === 0) steps.push(freshRun);
      if (i % PRELOADED_EVERY === 1) steps.push(preloadedRun);
      if (Math.floor(i / FRESH_EVERY) % 2 === 1) steps.reverse();
      for (const step of steps) await step();
    }

    const fresh = measured(FRESH, samples.fresh, { note: 'spawn to exit of python3 -c running the handler once and printing its result' });
    const preloaded = versus(
      measured(PRELOADED, samples.preloaded, {
        note: `the same, first importing the ${preloads.length} modules the fork server preloads (GET /health), e.g. ${preloads.slice(-3).join(', ')}`,
      }),
      fresh,
    );
    const warm = measured(WARM, samples.warm, {
      note: 'request to end of the NDJSON body: HTTP, static check, fork, sandbox, handler; keep-alive, sequential',
    });
    return [
      fresh,
      preloaded,
      versus(versus(warm, fresh), preloaded),
      measured(SERVER_SIDE, samples.serverSide, { note: "the runtime's own fork-to-exit figure for the warm runs (whole ms)" }),
    ];
  },
};

import { Agent, request } from 'node:http';
import { createEgressProxy } from '../../functions/runtimes/egress-proxy.ts';
import { createLocalCompute } from '../../functions/adapters/compute/local.ts';
import { prepareOsSandbox } from '../../functions/runtimes/os-sandbox.ts';
import { startLocalPlatform, type RunningPlatform } from '../../lib/local/platform.ts';
import { createUser, startTestPlatform } from '../support/local-platform.ts';
import { elapsedSince, type BenchContext, type BenchModule } from './harness.ts';
import { measured, versus, type MeasuredRow } from './stats.ts';
import { runTrivialAction, TRIVIAL_HANDLER } from './trivial-action.ts';

/** Each first run without a spare starts a sandbox, an interpreter and the fork server's preloads. */
const FIRST_RUNS = 6;
/** Each sample is a platform start on an existing data directory: seconds each. */
const RESTARTS = 3;

const COLD = 'first run of a tenant, no spare';
const SPARE = 'first run of a tenant, spare ready';
const RESTART_COLD = 'first run after platform start, no spare';
const RESTART_SPARE = 'first run after platform start, spare';
const READY_COLD = 'startLocalPlatform restart, no spare';
const READY_SPARE = 'startLocalPlatform restart, spare warming';

function actionRun(agent: Agent, url: string, token: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const req = request(url, { agent, headers: { authorization: `Bearer ${token}` } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => {
        // A fast error page must not pass for a fast answer.
        if (res.statusCode !== 200 || !body.includes('"echo":"1"')) reject(new Error(`action run: HTTP ${res.statusCode} ${body.slice(0, 200)}`));
        else resolve(elapsedSince(startedAt));
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * A tenant's first run with and without a spare runtime (adapters/compute/local.ts `spares`), both inside
 * the OS sandbox, interleaved. Without one, the run pays the sandbox, the interpreter and the fork
 * server's preloads; with one, binding the spare (the tenant's egress listener) and the fork.
 */
async function firstRuns(context: BenchContext): Promise<MeasuredRow[]> {
  const egress = createEgressProxy();
  context.defer(() => egress.close());
  const sandbox = prepareOsSandbox();
  const cold = createLocalCompute({ sandbox, egress });
  const sparing = createLocalCompute({ sandbox, egress, spares: 1 });
  context.defer(() => cold.close());
  context.defer(() => sparing.close());
  // The interpreter lookup and the sandbox check happen once per adapter: not part of a first run.
  await runTrivialAction(cold, 'warm-up');
  await runTrivialAction(sparing, 'warm-up');

  const samples = { cold: [] as number[], spare: [] as number[] };
  for (let i = 0; i < FIRST_RUNS; i++) {
    context.progress(`prewarm: first runs ${i + 1}/${FIRST_RUNS}`);
    // The spare that replaced the last one taken has started, as it would between two tenants.
    await sparing.warm();
    const order = i % 2 === 0 ? (['cold', 'spare'] as const) : (['spare', 'cold'] as const);
    for (const kind of order) samples[kind].push(await runTrivialAction(kind === 'cold' ? cold : sparing, `tenant-${i}`));
  }
  const coldRow = measured(COLD, samples.cold, { note: 'sandbox, interpreter and fork-server preloads, then the run' });
  return [coldRow, versus(measured(SPARE, samples.spare, { note: 'binding the spare to the tenant (its egress listener), then the run' }), coldRow)];
}

/**
 * The first action run right after `startLocalPlatform` returns, on a data directory that already
 * holds the action (a restart), with the platform's spare (RUNTIME_SPARES=1, warmed while it
 * starts) and without. The start itself is timed too: the spare must not delay readiness.
 */
async function afterStart(context: BenchContext): Promise<MeasuredRow[]> {
  const dataDir = await context.tempDir('prewarm');
  const first = await startTestPlatform({ dataDir });
  const user = await createUser(first, { alias: 'benchprewarm', credits: 1_000_000 });
  const created = await first.api('POST', '/action/create', {
    token: user.token,
    body: { actionName: 'Bench echo', description: 'trivial', runtime: 'python3.12', sourceCode: TRIVIAL_HANDLER, category: 'bench', status: 'active' },
  });
  if (created.status !== 200) throw new Error(`creating the action failed: ${created.status} ${created.text}`);
  const actionId = created.body.data.actionId as string;
  await first.stop();

  let open: RunningPlatform | null = null;
  context.defer(() => open?.close());
  const samples = new Map<string, number[]>([RESTART_COLD, RESTART_SPARE, READY_COLD, READY_SPARE].map((k) => [k, []]));
  for (let i = 0; i < RESTARTS; i++) {
    context.progress(`prewarm: platform restarts ${i + 1}/${RESTARTS}`);
    const order = i % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const);
    for (const spares of order) {
      const startedAt = performance.now();
      open = await startLocalPlatform({ port: 0, host: '127.0.0.1', dataDir, logLevel: 'silent', runtimeSpares: spares });
      samples.get(spares === 1 ? READY_SPARE : READY_COLD)!.push(elapsedSince(startedAt));
      const agent = new Agent({ keepAlive: false });
      samples.get(spares === 1 ? RESTART_SPARE : RESTART_COLD)!.push(await actionRun(agent, `${open.url}/action/${actionId}?x=1`, user.token));
      agent.destroy();
      await open.close();
      open = null;
    }
  }
  const row = (key: string, note?: string) => measured(key, samples.get(key)!, note ? { note } : {});
  const restartCold = row(RESTART_COLD, 'GET /action/{id} sent as soon as startLocalPlatform returned: the runtime starts on demand');
  const readyCold = row(READY_COLD);
  return [
    restartCold,
    versus(row(RESTART_SPARE, 'the same with the spare the platform starts in the background while it starts'), restartCold),
    readyCold,
    versus(row(READY_SPARE, 'readiness must not wait for the spare'), readyCold),
  ];
}

/** A tenant's first run, and the first run after a platform start, with a spare runtime and without. */
export const prewarmBench: BenchModule = {
  name: 'prewarm',
  async run(context) {
    return [...(await firstRuns(context)), ...(await afterStart(context))];
  },
};

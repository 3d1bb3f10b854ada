import { spawn } from 'node:child_process';
import type { Agent } from 'node:http';
import { DEFAULT_SPARES } from '../../lib/local/platform.ts';
import { createUser, startTestPlatform } from '../support/local-platform.ts';
import { elapsedSince, type BenchModule } from './harness.ts';
import { concurrently, get, keepAliveAgent, perSecond, type Round, type Target } from './http-load.ts';
import { measured, versus, type MeasuredRow } from './stats.ts';
import { runTrivialAction, TRIVIAL_HANDLER } from './trivial-action.ts';

/** The same handler run the way a fresh interpreter would: start python3, run it once, print, exit. */
const FRESH_SCRIPT = `${TRIVIAL_HANDLER}
import json
print(json.dumps(handler({"x": "1", "keys": {}}, None)))
`;

const WARM_UP = 30;
const BLOCKS = 6;
const PER_BLOCK = 25;
const FRESH_PER_BLOCK = 10;
/** Load levels of the throughput rows: callers each starting their next run when the last answered. */
const LEVELS = [
  { concurrency: 8, perBlock: 80 },
  { concurrency: 32, perBlock: 160 },
] as const;
const LOAD_BLOCKS = 3;

const FRESH = 'python3 -c, fresh process';
const COMPUTE = 'compute.invoke, warm runtime';
const ROUTER = 'GET /action/{id} (router)';
const DIRECT = 'GET /action/python-128mb/{id}';
const EXECUTION_TIME = 'meta.executionTime (router runs)';

/** One fresh interpreter running the handler; resolves with its wall time, spawn to exit. */
function freshPython(): Promise<number> {
  return new Promise((resolve, reject) => {
    const startedAt = performance.now();
    const child = spawn('python3', ['-c', FRESH_SCRIPT], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => {
      const ms = elapsedSince(startedAt);
      if (code !== 0 || !out.includes('"echo": "1"')) reject(new Error(`python3 -c failed: exit ${code}, output ${out.slice(0, 200)}`));
      else resolve(ms);
    });
  });
}

/** One HTTP run; resolves with its latency and the runtime's own `executionTime` from meta. */
async function httpOnce(agent: Agent, target: Target): Promise<{ ms: number; executionTime: number }> {
  const startedAt = performance.now();
  const reply = await get(agent, target);
  const ms = elapsedSince(startedAt);
  const parsed = JSON.parse(reply.body) as { success?: boolean; data?: { body?: { echo?: string } }; meta?: { executionTime?: number } };
  // A fast error page must not pass for a fast answer.
  if (reply.status !== 200 || parsed.data?.body?.echo !== '1') throw new Error(`${target.name}: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
  return { ms, executionTime: parsed.meta?.executionTime ?? Number.NaN };
}

/**
 * A trivial action through the router and through the direct route, next to the same handler in a
 * fresh `python3` process (what a naive runner pays per call) and to one warm `compute.invoke`
 * (the runtime's own fork-and-run, no HTTP). Router minus compute is the platform's overhead:
 * HTTP, auth, the action read, two credit debits with their ledger lines, and the usage record.
 */
export const actionsBench: BenchModule = {
  name: 'actions',
  async run({ progress, defer }) {
    progress('actions: starting the platform');
    const platform = await startTestPlatform({ ...DEFAULT_SPARES });
    defer(() => platform.stop({ removeData: true }));
    const user = await createUser(platform, { alias: 'benchactions', credits: 1_000_000 });
    const created = await platform.api('POST', '/action/create', {
      token: user.token,
      body: { actionName: 'Bench echo', description: 'trivial', runtime: 'python3.12', sourceCode: TRIVIAL_HANDLER, category: 'bench', status: 'active' },
    });
    if (created.status !== 200) throw new Error(`creating the action failed: ${created.status} ${created.text}`);
    const actionId = created.body.data.actionId as string;
    const agent = keepAliveAgent();
    defer(() => agent.destroy());
    const headers = { authorization: `Bearer ${user.token}` };
    const router: Target = { name: ROUTER, url: `${platform.url}/action/${actionId}?x=1`, headers };
    const direct: Target = { name: DIRECT, url: `${platform.url}/action/python-128mb/${actionId}?x=1`, headers };
    const compute = platform.running.ports.compute;

    progress('actions: warm-up');
    for (let i = 0; i < WARM_UP; i++) {
      await httpOnce(agent, router);
      await httpOnce(agent, direct);
      await runTrivialAction(compute, user.userId);
    }
    await freshPython();

    const samples = new Map<string, number[]>([FRESH, COMPUTE, ROUTER, DIRECT, EXECUTION_TIME].map((k) => [k, []]));
    const record = (key: string, ms: number) => samples.get(key)!.push(ms);
    const steps: (() => Promise<void>)[] = [
      async () => {
        for (let i = 0; i < PER_BLOCK; i++) {
          const run = await httpOnce(agent, router);
          record(ROUTER, run.ms);
          record(EXECUTION_TIME, run.executionTime);
        }
      },
      async () => {
        for (let i = 0; i < PER_BLOCK; i++) record(DIRECT, (await httpOnce(agent, direct)).ms);
      },
      async () => {
        for (let i = 0; i < PER_BLOCK; i++) record(COMPUTE, await runTrivialAction(compute, user.userId));
      },
      async () => {
        for (let i = 0; i < FRESH_PER_BLOCK; i++) record(FRESH, await freshPython());
      },
    ];
    // Alternating blocks, rotating which goes first, so drift falls on every case alike.
    for (let block = 0; block < BLOCKS; block++) {
      progress(`actions: block ${block + 1} of ${BLOCKS}`);
      for (let i = 0; i < steps.length; i++) await steps[(block + i) % steps.length]!();
    }

    // Throughput under load: the runtime's own capacity (compute.invoke from as many callers) is the
    // ceiling the router can reach; router at 32 vs at 8 says how latency grows with load.
    const loadRows: MeasuredRow[] = [];
    let routerAt8: MeasuredRow | null = null;
    for (const { concurrency, perBlock } of LEVELS) {
      const rounds = new Map<string, Round>();
      const kinds = [
        { name: `${COMPUTE} (c=${concurrency})`, once: () => runTrivialAction(compute, user.userId) },
        { name: `${ROUTER} (c=${concurrency})`, once: async () => (await httpOnce(agent, router)).ms },
      ];
      await concurrently(concurrency, concurrency, kinds[1]!.once);
      for (let block = 0; block < LOAD_BLOCKS; block++) {
        progress(`actions: ${concurrency} concurrent, block ${block + 1} of ${LOAD_BLOCKS}`);
        for (let i = 0; i < kinds.length; i++) {
          const kind = kinds[(block + i) % kinds.length]!;
          const round = await concurrently(perBlock, concurrency, kind.once);
          const total = rounds.get(kind.name) ?? { samples: [], wallMs: 0 };
          rounds.set(kind.name, { samples: total.samples.concat(round.samples), wallMs: total.wallMs + round.wallMs });
        }
      }
      const row = (name: string) => measured(name, rounds.get(name)!.samples, { perSecond: perSecond(rounds.get(name)!) });
      const computeRow = row(kinds[0]!.name);
      const routerRow = row(kinds[1]!.name);
      const share = `${((100 * routerRow.perSecond!) / computeRow.perSecond!).toFixed(0)}% of compute.invoke's ops/s at the same concurrency`;
      const note =
        routerAt8 === null
          ? `${share}; issue 11 baseline (stores in the platform's process): 40 ops/s, p50 193 ms; target 4x`
          : `${share}; ${(routerRow.perSecond! / routerAt8.perSecond!).toFixed(2)}x the ops/s at c=8 for 4x the callers`;
      const routerVersus = versus({ ...routerRow, note }, computeRow);
      loadRows.push(computeRow, routerAt8 === null ? routerVersus : versus(routerVersus, routerAt8));
      routerAt8 ??= routerRow;
    }

    const fresh = measured(FRESH, samples.get(FRESH)!, { note: 'spawn to exit of python3 running the same handler once' });
    const warm = versus(
      measured(COMPUTE, samples.get(COMPUTE)!, { note: 'fork of the warm runtime, the handler, the NDJSON stream; no HTTP, auth, credits or logs' }),
      fresh,
    );
    const routerRow = measured(ROUTER, samples.get(ROUTER)!);
    const directRow = measured(DIRECT, samples.get(DIRECT)!);
    const overhead = (row: MeasuredRow) =>
      `platform overhead over compute.invoke: p50 ${(row.p50 - warm.p50).toFixed(1)} ms, p99 ${(row.p99 - warm.p99).toFixed(1)} ms`;
    return [
      fresh,
      warm,
      versus(versus({ ...routerRow, note: overhead(routerRow) }, fresh), warm),
      versus(versus({ ...directRow, note: overhead(directRow) }, fresh), warm),
      measured(EXECUTION_TIME, samples.get(EXECUTION_TIME)!, { note: 'what the runtime reports as the run time of the router runs above' }),
      ...loadRows,
    ];
  },
};

/**
 * Fair share (issue 33): what one tenant's load does to everyone else. The platform runs in a
 * child process (platform-child.ts) so that the load generator's own work never counts as the
 * platform's; one tenant runs a trivial action from 32, 64 and 128 closed-loop callers while a
 * single caller probes `GET /health` and a second tenant runs the same action one call at a time.
 * The load runs in a process of its own (load-child.ts), so its refusals, answered at once and
 * immediately sent again, never delay the probes' own callbacks. The same platform with admission turned off (`TENANT_CONCURRENCY=0`) is measured in the same run,
 * as the "before" next to each row, and every row also divides by its idle baseline.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Agent } from 'node:http';
import { ADMIN_TOKEN_FILE } from '../../lib/local/platform.ts';
import { callApi } from '../support/local-platform.ts';
import { elapsedSince, repoRoot, type BenchModule } from './harness.ts';
import { get, keepAliveAgent, type Target } from './http-load.ts';
import { measured, versus, type MeasuredRow } from './stats.ts';
import { TRIVIAL_HANDLER } from './trivial-action.ts';

const LEVELS = [32, 64, 128] as const;
/** How long each level's probes run once the load is going. */
const PROBE_MS = 5_000;
/** Load before the probes start, so they see the steady state, not the ramp. */
const RAMP_MS = 1_000;
const IDLE_SAMPLES = 200;
const WARM_UP = 20;

interface Child {
  readonly url: string;
  stop(): Promise<void>;
}

async function startPlatformChild(dataDir: string, env: Record<string, string>): Promise<Child> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--openssl-legacy-provider', '--import', 'tsx', 'test/bench/platform-child.ts', JSON.stringify({ dataDir, env })],
    {
      cwd: repoRoot,
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lines = createInterface({ input: child.stdout! });
  const first = await new Promise<string>((resolve, reject) => {
    lines.once('line', resolve);
    void exited.then(() => reject(new Error('the platform child exited before it was ready')));
  });
  const { url } = JSON.parse(first) as { url: string };
  return {
    url,
    async stop() {
      child.stdin!.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
      await exited;
      clearTimeout(timer);
    },
  };
}

interface Tenant {
  readonly token: string;
  readonly target: Target;
}

async function tenantWithAction(url: string, adminToken: string, alias: string): Promise<Tenant> {
  const user = await callApi(url, 'POST', '/admin/users', { token: adminToken, body: { alias, credits: 1_000_000 } });
  if (user.status !== 201) throw new Error(`creating ${alias} failed: ${user.status} ${user.text}`);
  const token = user.body.data.token as string;
  const created = await callApi(url, 'POST', '/action/create', {
    token,
    body: { actionName: 'Bench echo', description: 'trivial', runtime: 'python3.12', sourceCode: TRIVIAL_HANDLER, category: 'bench', status: 'active' },
  });
  if (created.status !== 200) throw new Error(`creating ${alias}'s action failed: ${created.status} ${created.text}`);
  const actionId = created.body.data.actionId as string;
  return { token, target: { name: alias, url: `${url}/action/${actionId}?x=1`, headers: { authorization: `Bearer ${token}` } } };
}

/** One timed GET; a status other than `expected` fails the bench (a fast error must not pass for a fast answer). */
async function timed(agent: Agent, target: Target, expected: readonly number[] = [200]): Promise<{ ms: number; status: number }> {
  const startedAt = performance.now();
  const reply = await get(agent, target);
  const ms = elapsedSince(startedAt);
  if (!expected.includes(reply.status)) throw new Error(`${target.name}: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
  return { ms, status: reply.status };
}

interface LoadResult {
  readonly served: number[];
  readonly refused: number[];
  readonly wallMs: number;
}

/**
 * `concurrency` callers repeating `target` from a process of their own (load-child.ts); resolves
 * once they have started, with a `stop` that ends them and resolves with what they measured.
 */
async function startLoad(target: Target, concurrency: number): Promise<{ stop(): Promise<LoadResult> }> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'test/bench/load-child.ts', JSON.stringify({ url: target.url, headers: target.headers ?? {}, concurrency })],
    {
      cwd: repoRoot,
      env: { ...process.env, NODE_OPTIONS: '' },
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const lines = createInterface({ input: child.stdout! });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      void exited.then((code) => reject(new Error(`the load process exited with ${code}`)));
    });
  if ((await next()) !== 'started') throw new Error('the load process did not start');
  return {
    async stop() {
      const result = next();
      child.stdin!.end();
      return JSON.parse(await result) as LoadResult;
    },
  };
}

/** One caller repeating `target` for `ms`, one request after another. */
async function probe(agent: Agent, target: Target, ms: number): Promise<number[]> {
  const samples: number[] = [];
  for (const until = performance.now() + ms; performance.now() < until;) samples.push((await timed(agent, target)).ms);
  return samples;
}

interface Measured {
  readonly idleHealth: MeasuredRow;
  readonly idleOther: MeasuredRow;
  readonly levels: { concurrency: number; health: number[]; other: number[]; load: LoadResult }[];
}

async function measure(label: string, dir: string, env: Record<string, string>, progress: (m: string) => void): Promise<Measured> {
  progress(`fair-share: starting the platform (${label})`);
  const child = await startPlatformChild(dir, env);
  const agent = keepAliveAgent();
  try {
    const adminToken = (await readFile(join(dir, ADMIN_TOKEN_FILE), 'utf8')).trim();
    const loud = await tenantWithAction(child.url, adminToken, 'benchloud');
    const quiet = await tenantWithAction(child.url, adminToken, 'benchquiet');
    const health: Target = { name: 'GET /health', url: `${child.url}/health` };
    for (let i = 0; i < WARM_UP; i++) {
      await timed(agent, loud.target);
      await timed(agent, quiet.target);
      await timed(agent, health);
    }
    const idleHealth: number[] = [];
    for (let i = 0; i < IDLE_SAMPLES; i++) idleHealth.push((await timed(agent, health)).ms);
    const idleOther: number[] = [];
    for (let i = 0; i < IDLE_SAMPLES / 4; i++) idleOther.push((await timed(agent, quiet.target)).ms);
    const levels: Measured['levels'] = [];
    for (const concurrency of LEVELS) {
      progress(`fair-share: ${label}, one tenant at c=${concurrency}`);
      const load = await startLoad(loud.target, concurrency);
      await new Promise((resolve) => setTimeout(resolve, RAMP_MS));
      const quietAgent = keepAliveAgent();
      const [healthSamples, otherSamples] = await Promise.all([probe(agent, health, PROBE_MS), probe(quietAgent, quiet.target, PROBE_MS)]);
      quietAgent.destroy();
      levels.push({ concurrency, health: healthSamples, other: otherSamples, load: await load.stop() });
    }
    return {
      idleHealth: measured(`GET /health, idle (${label})`, idleHealth),
      idleOther: measured(`other tenant's action, idle (${label})`, idleOther),
      levels,
    };
  } finally {
    agent.destroy();
    await child.stop();
  }
}

/**
 * Rows: `/health` and a second tenant's action under one tenant's load, with admission and without,
 * each against its idle baseline; the loud tenant's refusals (429) and its served calls.
 */
export const fairShareBench: BenchModule = {
  name: 'fair-share',
  async run({ progress, tempDir }) {
    const before = await measure('admission off', await tempDir('off'), { TENANT_CONCURRENCY: '0' }, progress);
    const after = await measure('admission on', await tempDir('on'), {}, progress);
    const rows: MeasuredRow[] = [after.idleHealth, after.idleOther, before.idleHealth];
    for (const [i, level] of after.levels.entries()) {
      const old = before.levels[i]!;
      const c = level.concurrency;
      const served = level.load.served.length;
      const refused = level.load.refused.length;
      const share = (load: LoadResult) =>
        `loud tenant: ${((1000 * load.served.length) / load.wallMs).toFixed(0)} served/s, ${((100 * load.refused.length) / (load.served.length + load.refused.length)).toFixed(0)}% refused`;
      const healthOff = measured(`GET /health, one tenant at c=${c}, admission off`, old.health, { note: share(old.load) });
      const health = measured(`GET /health, one tenant at c=${c}`, level.health, { note: share(level.load) });
      rows.push(versus(versus(health, after.idleHealth), healthOff), versus(healthOff, before.idleHealth));
      const otherOff = measured(`other tenant's action, one tenant at c=${c}, admission off`, old.other);
      rows.push(versus(versus(measured(`other tenant's action, one tenant at c=${c}`, level.other), after.idleOther), otherOff));
      rows.push(versus(otherOff, before.idleOther));
      if (refused > 0) {
        const oldRefused = old.load.refused;
        const refusals = measured(`loud tenant's 429, c=${c}`, level.load.refused, {
          note: `${refused} refused, ${served} served; admission off: ${oldRefused.length} refused${oldRefused.length > 0 ? `, p50 ${median(oldRefused).toFixed(0)} ms` : ''}`,
        });
        rows.push(versus(refusals, after.idleHealth));
      }
      if (served > 0 && old.load.served.length > 0) {
        const servedOff = measured(`loud tenant's 200, c=${c}, admission off`, old.load.served);
        rows.push(versus(measured(`loud tenant's 200, c=${c}`, level.load.served), servedOff), servedOff);
      }
    }
    return rows;
  },
};

function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

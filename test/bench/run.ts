/**
 * `npm run bench [-- module...]`: runs the bench modules in order, prints one table and saves the
 * rows to `.tmp/bench-results.json` (plus one line per run in `.tmp/bench-history.jsonl`) so runs
 * can be compared. An area adds its benchmarks by exporting a `BenchModule` and listing it below.
 */
import { appendFile, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { cpus, release, tmpdir, type as osType } from 'node:os';
import { join } from 'node:path';
import { repoRoot, type BenchContext, type BenchModule } from './harness.ts';
import { formatTable, type BenchRow } from './stats.ts';
import { checkTargets, formatTargets } from './targets.ts';
import { startupBench } from './startup.bench.ts';
import { actionsBench } from './actions.bench.ts';
import { userInfoBench } from './user-info.bench.ts';
import { chatBench } from './chat.bench.ts';
import { runtimeBench } from './runtime.bench.ts';
import { tenantsBench } from './tenants.bench.ts';
import { mcpBench } from './mcp.bench.ts';
import { sandboxBench } from './sandbox.bench.ts';
import { knowledgeBench } from './knowledge.bench.ts';
import { searchBench } from './search.bench.ts';
import { listingsBench } from './listings.bench.ts';
import { bundlesBench } from './bundles.bench.ts';
import { prewarmBench } from './prewarm.bench.ts';
import { memoryBench } from './memory.bench.ts';
import { channelsBench } from './channels.bench.ts';
import { cronBench } from './cron.bench.ts';
import { analyticsBench } from './analytics.bench.ts';
import { websitesBench } from './websites.bench.ts';
import { voiceBench } from './voice.bench.ts';
import { hostileBench } from './hostile.bench.ts';
import { fairShareBench } from './fair-share.bench.ts';
import { consoleBench } from './console.bench.ts';

const modules: readonly BenchModule[] = [
  startupBench,
  userInfoBench,
  actionsBench,
  runtimeBench,
  tenantsBench,
  sandboxBench,
  prewarmBench,
  chatBench,
  mcpBench,
  listingsBench,
  knowledgeBench,
  searchBench,
  websitesBench,
  voiceBench,
  bundlesBench,
  memoryBench,
  cronBench,
  analyticsBench,
  channelsBench,
  hostileBench,
  fairShareBench,
  consoleBench,
];

// The SDK's Node 20 notice is a plain `Warning` whose text merely starts with its name, so
// `--disable-warning=NodeVersionSupportWarning` misses it; it would interleave with the report.
process.env['AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED'] ??= 'true';

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !modules.some((m) => m.name === name));
if (unknown.length > 0) {
  console.error(`Unknown bench module(s): ${unknown.join(', ')}. Available: ${modules.map((m) => m.name).join(', ')}.`);
  process.exit(2);
}
const selected = wanted.length > 0 ? modules.filter((m) => wanted.includes(m.name)) : modules;

const cpu = cpus();
const machine = { cpu: cpu[0]?.model.trim() ?? 'unknown', cores: cpu.length, node: process.version, os: `${osType()} ${release()}` };
const date = new Date().toISOString();
const runStartedAt = performance.now();

async function runModule(module: BenchModule): Promise<BenchRow[]> {
  const dirs: string[] = [];
  const deferred: (() => Promise<unknown> | unknown)[] = [];
  const context: BenchContext = {
    progress: (message) => console.error(`  ${message}`),
    async tempDir(label) {
      const dir = await mkdtemp(join(tmpdir(), `platform-bench-${module.name}-${label}-`));
      dirs.push(dir);
      return dir;
    },
    defer: (step) => void deferred.push(step),
  };
  try {
    const rows = await module.run(context);
    return rows.map((row) => ({ module: module.name, ...row }));
  } finally {
    for (const step of deferred.reverse()) {
      try {
        await step();
      } catch (error) {
        console.error(`  ${module.name}: clean-up step failed: ${(error as Error).message}`);
      }
    }
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })));
  }
}

const rows: BenchRow[] = [];
const failures: { module: string; error: string }[] = [];
for (const module of selected) {
  console.error(`running ${module.name}...`);
  try {
    rows.push(...(await runModule(module)));
  } catch (error) {
    console.error(`${module.name} failed: ${(error as Error).stack ?? String(error)}`);
    failures.push({ module: module.name, error: (error as Error).message });
  }
}
const totalSeconds = (performance.now() - runStartedAt) / 1000;

console.log(`\nBenchmarks ${date}`);
console.log(`${machine.cpu} x ${machine.cores}, node ${machine.node}, ${machine.os}`);
console.log('Ratios divide this row by the named baseline from the same run; x p99 needs n >= 50.\n');
console.log(formatTable(rows));
const targets = checkTargets(rows);
console.log(`\nTargets, from the rows above:\n${formatTargets(targets)}`);
console.log(`\n${rows.length} rows in ${totalSeconds.toFixed(1)} s${failures.length > 0 ? `; FAILED: ${failures.map((f) => f.module).join(', ')}` : ''}`);

const outDir = join(repoRoot, '.tmp');
await mkdir(outDir, { recursive: true });
const result = { date, machine, modules: selected.map((m) => m.name), totalSeconds, failures, rows, targets };
await writeFile(join(outDir, 'bench-results.json'), JSON.stringify(result, null, 2) + '\n');
await appendFile(join(outDir, 'bench-history.jsonl'), JSON.stringify(result) + '\n');
console.log(`Saved to .tmp/bench-results.json (history in .tmp/bench-history.jsonl).`);
if (failures.length > 0) process.exitCode = 1;

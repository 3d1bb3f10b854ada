/**
 * What the platform deploys, by size (issue 11): each platform function's bundle and the MCP
 * modules layer, as a synth with bundling stages them (test/support/platform-assets.ts, the same
 * measure as the budget test). Sizes do not vary between runs, so each is one row of one sample.
 *
 * Baselines, both from this run:
 * - The budget (headline ratio): the targets are absolute, so "x p50" below 1.00 reads as met.
 * - What the change bought, rebuilt from the current sources the old way: each bundle with zod
 *   imported as `import { z } from 'zod'` (its whole namespace object, which esbuild cannot
 *   tree-shake: every schema kind and every locale), and the layer as the whole production
 *   dependency trees it used to copy. Only the zod import is reverted, not the per-area entries,
 *   because that import was most of the weight (82%) and it is the one a future edit can bring back
 *   (eslint.config.js forbids it in bundled code).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { build, type Plugin } from 'esbuild';
import { DEFAULT_MCP_LAYER_DIR, DEFAULT_MCP_MODULES_DIR, layerPackages } from '../../lib/cloud/mcp-runtime-function.ts';
import { ESM_REQUIRE_BANNER } from '../../lib/cloud/platform-function.ts';
import {
  BUNDLE_FILE,
  bundleBudgetOf,
  filesUnder,
  importedPackages,
  FUNCTION_BUNDLE_BUDGET_BYTES,
  MCP_LAYER_BUDGET_BYTES,
  measurePlatformAssets,
  synthesizePlatform,
  type FunctionBundle,
} from '../support/platform-assets.ts';
import { repoRoot, type BenchModule } from './harness.ts';
import { sized, versus, type MeasuredRow } from './stats.ts';

const FUNCTION_BUDGET = 'budget, each function bundle';
const LAYER_BUDGET = 'budget, MCP modules layer';
// These four are read by test/bench/targets.ts.
const LAYER = 'MCP modules layer';
const LAYER_OLD = 'MCP layer, whole dependency trees (old copy)';
const LARGEST_BUNDLE = 'largest function bundle';
const LARGEST_BUNDLE_OLD = 'largest function bundle, zod as one namespace (old build)';

/** A rebuild the old way differs from the synthesized bundle by the zod import only; past this the bench's esbuild options have drifted from PlatformFunction's. */
const REBUILD_TOLERANCE = 0.01;

export const bundlesBench: BenchModule = {
  name: 'bundles',
  async run(context) {
    const outdir = await context.tempDir('synth');
    // Inside the project, so esbuild resolves the packages from the entries (as function-entries.ts does).
    mkdirSync(join(repoRoot, '.tmp'), { recursive: true });
    const entriesDir = mkdtempSync(join(repoRoot, '.tmp', 'bench-entries-'));
    context.defer(() => rmSync(entriesDir, { recursive: true, force: true }));

    context.progress('synthesizing with bundling (esbuild for every function, the MCP layer staged)...');
    const stack = synthesizePlatform(outdir, { bundling: true, stackName: 'agent-platform-bench', stage: 'bench', entriesDir });
    const assets = measurePlatformAssets(stack, outdir);

    const functionBudget = sized(FUNCTION_BUDGET, FUNCTION_BUNDLE_BUDGET_BYTES);
    const rows: MeasuredRow[] = [functionBudget];
    const oldBytes = new Map<FunctionBundle, number>();
    for (const fn of assets.functions) {
      context.progress(`rebuilding ${fn.name} the old way...`);
      const entry = entryOf(fn, entriesDir);
      // The packages it ships beside itself stay external, as PlatformFunction makes them.
      const external = ['@aws-sdk/*', ...importedPackages(readFileSync(join(fn.dir, BUNDLE_FILE), 'utf8'))];
      const [current, old] = await Promise.all([bundleBytes(entry, external, false), bundleBytes(entry, external, true)]);
      if (Math.abs(current - fn.bytes) > fn.bytes * REBUILD_TOLERANCE)
        throw new Error(`${fn.name}: rebuilt ${current} bytes, synthesized ${fn.bytes}: align this bench's esbuild options with PlatformFunction's`);
      oldBytes.set(fn, old);
      const oldRow = sized(`${fn.name}, zod as one namespace (old build)`, old);
      rows.push(versus(versus(sized(fn.name, fn.bytes, { note: `source map ${kb(fn.mapBytes)} beside it` }), functionBudget), oldRow), oldRow);
    }
    // The target reads the largest of every function the synth produces, the API reference's
    // included: it is deployed and loaded like the others. The note names the functions over the
    // common budget, each with the budget of its own (platform-assets.ts).
    const largest = assets.functions.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    const overCommon = assets.functions
      .filter((fn) => fn.bytes > FUNCTION_BUNDLE_BUDGET_BYTES)
      .map((fn) => `${fn.name} ${kb(fn.bytes)} (own budget ${kb(bundleBudgetOf(fn.name))})`);
    const note = `${largest.name}, of ${assets.functions.length} functions; over ${kb(FUNCTION_BUNDLE_BUDGET_BYTES)}: ${overCommon.join(', ') || 'none'}`;
    const largestOld = sized(LARGEST_BUNDLE_OLD, oldBytes.get(largest)!, { note: largest.name });
    rows.push(versus(versus(sized(LARGEST_BUNDLE, largest.bytes, { note }), functionBudget), largestOld), largestOld);

    const layerBudget = sized(LAYER_BUDGET, MCP_LAYER_BUDGET_BYTES);
    const layerOld = sized(LAYER_OLD, wholeTreesBytes());
    rows.push(layerBudget, versus(versus(sized(LAYER, assets.mcpLayer.bytes, { note: `${assets.mcpLayer.files} files` }), layerBudget), layerOld), layerOld);
    return rows;
  },
};

function kb(bytes: number): string {
  return `${(bytes / 1024).toFixed(1)} KB`;
}

/** The entry function-entries.ts wrote for `fn`, by its naming: `<area>.entry.ts`, `stream-host-<host>.entry.ts`, `storage-<area>.entry.ts`, `fallback.entry.ts`, ... */
function entryOf(fn: FunctionBundle, entriesDir: string): string {
  const [kind, name] = (fn.name.split('/').at(-1) ?? '').split(/-(.*)/) as [string, string | undefined];
  const file = {
    Area: `${name}.entry.ts`,
    Stream: `stream-host-${name}.entry.ts`,
    Schedule: `schedule-${name}.entry.ts`,
    Queue: `queue-${name}.entry.ts`,
    Storage: `storage-${name}.entry.ts`,
    Fallback: 'fallback.entry.ts',
  }[kind];
  if (file === undefined || !readdirSync(entriesDir).includes(file)) throw new Error(`No entry known for ${fn.name} in ${entriesDir}`);
  return join(entriesDir, file);
}

/** Puts back `import { z } from 'zod'`, the import the sources had before they took zod as a namespace. */
const zodAsOneNamespace: Plugin = {
  name: 'zod-as-one-namespace',
  setup(builder) {
    builder.onLoad({ filter: /\.ts$/ }, (args) => {
      if (relative(repoRoot, args.path).startsWith('node_modules')) return undefined;
      const source = readFileSync(args.path, 'utf8');
      return { contents: source.replaceAll("import * as z from 'zod';", "import { z } from 'zod';"), loader: 'ts' };
    });
  },
};

/** Bytes of `entry` bundled with PlatformFunction's esbuild options (lib/cloud/platform-function.ts), the old way if `old`. */
async function bundleBytes(entry: string, external: readonly string[], old: boolean): Promise<number> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    write: false,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    banner: { js: ESM_REQUIRE_BANNER },
    minify: true,
    external: [...external],
    outfile: join(repoRoot, '.tmp', 'bench-bundle', 'index.mjs'),
    plugins: old ? [zodAsOneNamespace] : [],
    logLevel: 'silent',
  });
  return result.outputFiles[0]!.contents.byteLength;
}

/**
 * Bytes the layer took when it copied the layer packages' whole production trees (every package
 * layerPackages finds, each without its nested node_modules, which are packages of their own),
 * leaving out, as that copy did, type declarations, source maps, documentation other than licenses and `.bin`.
 */
function wholeTreesBytes(): number {
  const unshipped = /(\.d\.[cm]?ts|\.map|\.md|\.markdown)$/i;
  const license = /^(licen[cs]e|notice|copying)/i;
  return layerPackages({ layerDir: DEFAULT_MCP_LAYER_DIR, modulesDir: DEFAULT_MCP_MODULES_DIR })
    .flatMap((pkg) =>
      filesUnder(join(DEFAULT_MCP_MODULES_DIR, pkg.path)).filter((file) => !relative(join(DEFAULT_MCP_MODULES_DIR, pkg.path), file).includes('node_modules/')),
    )
    .filter((file) => !unshipped.test(file) || license.test(file.split('/').at(-1)!))
    .reduce((total, file) => total + statSync(file).size, 0);
}

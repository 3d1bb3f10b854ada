/**
 * Size budgets of what the platform deploys (issue 11), on a real synth with bundling on: the
 * other infra tests synthesize without it, so this file pays for the esbuild builds and the layer
 * staging once (about 20 s). A bundle grows past its budget through an import that pulls a whole
 * library (zod's `z` namespace object, an SDK client bundled by mistake): the failure names the
 * function, and `npm run bench -- bundles` shows what it holds next to its baseline.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { CfnElement } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  BUNDLE_FILE,
  FUNCTION_BUNDLE_BUDGET_BYTES,
  KB,
  REFERENCE_BUNDLE_BUDGET_BYTES,
  REFERENCE_FUNCTION,
  bundleBudgetOf,
  importedPackages,
  MB,
  MCP_LAYER_BUDGET_BYTES,
  measurePlatformAssets,
  synthesizePlatform,
  type PlatformAssets,
} from '../support/platform-assets.ts';
import { REPO_ROOT } from '../../lib/cloud/function-entries.ts';
import { PlatformFunction } from '../../lib/cloud/platform-function.ts';
import { TEST_STACK, TEST_STAGE, withScratchOutdir } from './synth-platform.ts';

let assets: PlatformAssets;
let expectedFunctions: number;
/** The bundles holding AWS SDK code rather than importing it, read while the assets exist. */
let bundlesWithSdkCode: string[];
/** Each function's bundled source files (repository paths), from its source map. */
let sourcesOf: Map<string, string[]>;
/** The knowledge functions, which load the PDF engine at run time from files shipped beside their bundles. */
const KNOWLEDGE_FUNCTIONS = ['Functions/Area-knowledge', 'Functions/Storage-knowledge'];
/** How importing the PDF engine from each knowledge function's asset directory went, as Lambda would from /var/task. */
let pdfEngineLoads: Map<string, { status: number | null; stderr: string }>;
/** The skills function, which loads its YAML parser at run time from files shipped beside its bundle. */
const SKILLS_FUNCTION = 'Functions/Area-skills';
/** How importing the YAML parser from the skills function's asset directory went. */
let yamlParserLoad: { status: number | null; stderr: string } | undefined;
/** The functions that query the search engine, which loads MiniSearch and the stemmer at run time from files beside their bundles. */
const SEARCHING_FUNCTIONS = ['Functions/Area-knowledge', 'Functions/Area-search'];
let searchLibraryLoads: Map<string, { status: number | null; stderr: string }>;
/** Per function, the packages its bundle imports rather than holds (other than the runtime's SDK and Node's own), and how resolving them from its asset went. */
let externalImports: Map<string, { packages: string[]; status: number | null; stderr: string }>;
/** Functions serving authenticated routes, which import the session-token verifier on first use from files beside their bundles; the fallback authenticates no one. */
const AUTHENTICATING_FUNCTIONS = ['Functions/Area-agents', 'Functions/Stream-stream', 'Functions/Area-users'];
let verifierLoads: Map<string, { status: number | null; stderr: string }>;
/** The cron functions, whose schedule parser imports croner from files shipped beside their bundles. */
const CRON_FUNCTIONS = ['Functions/Area-cron', 'Functions/Queue-cron'];

/** The functions given the MCP modules layer (their template's `Layers`). */
let mcpLayerFunctions: string[];
/** Per function whose bundle requires MCP SDK modules at run time (the platform MCP server's): the modules, and how requiring them went with the layer on NODE_PATH and without it. */
let sdkLoads: Map<string, { modules: string[]; withLayer: { status: number | null; stderr: string }; without: { status: number | null; stderr: string } }>;

/** Runs `script` as an ES module from an asset's directory, as Lambda would from /var/task: only what the asset holds resolves. */
function importFrom(dir: string, script: string): { status: number | null; stderr: string } {
  const load = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: dir, encoding: 'utf8' });
  return { status: load.status, stderr: load.stderr };
}

beforeAll(() => {
  withScratchOutdir((outdir) => {
    const stack = synthesizePlatform(outdir, { bundling: true, stackName: TEST_STACK, stage: TEST_STAGE });
    assets = measurePlatformAssets(stack, outdir);
    const { areas, streams, schedules, queueConsumers, storageEvents } = stack.functions;
    expectedFunctions = areas.size + streams.size + 1 + schedules.size + queueConsumers.size + storageEvents.size;
    // Every SDK client sends this header name; a bundle that inlined one holds the string.
    bundlesWithSdkCode = assets.functions.filter((f) => readFileSync(join(f.dir, BUNDLE_FILE), 'utf8').includes('x-amz-user-agent')).map((f) => f.name);
    sourcesOf = new Map(
      assets.functions.map((f) => {
        const map = JSON.parse(readFileSync(join(f.dir, `${BUNDLE_FILE}.map`), 'utf8')) as { sources: string[] };
        return [f.name, map.sources.map((source) => relative(REPO_ROOT, resolve(f.dir, source)))];
      }),
    );
    // Outside the repository (the scratch directory), so only what the asset holds can resolve.
    pdfEngineLoads = new Map(
      assets.functions
        .filter((f) => KNOWLEDGE_FUNCTIONS.includes(f.name))
        .map((f) => {
          return [f.name, importFrom(f.dir, "await import('unpdf'); await import('unpdf/pdfjs');")];
        }),
    );
    const skills = assets.functions.find((f) => f.name === SKILLS_FUNCTION);
    if (skills !== undefined) {
      yamlParserLoad = importFrom(skills.dir, "const { load } = await import('js-yaml'); if (load('name: x').name !== 'x') process.exit(2);");
    }
    searchLibraryLoads = new Map(
      assets.functions
        .filter((f) => SEARCHING_FUNCTIONS.includes(f.name))
        .map((f) => [
          f.name,
          importFrom(
            f.dir,
            "const { default: MiniSearch } = await import('minisearch'); const { stemmer } = await import('stemmer'); if (typeof MiniSearch !== 'function' || stemmer('forecasting') !== 'forecast') process.exit(2);",
          ),
        ]),
    );
    verifierLoads = new Map(
      assets.functions
        .filter((f) => [...AUTHENTICATING_FUNCTIONS, 'Functions/Fallback'].includes(f.name))
        .map((f) => [
          f.name,
          importFrom(
            f.dir,
            "const { CognitoJwtVerifier } = await import('aws-jwt-verify'); if (typeof CognitoJwtVerifier.create !== 'function') process.exit(2);",
          ),
        ]),
    );
    externalImports = new Map(
      assets.functions.map((f) => {
        const packages = importedPackages(readFileSync(join(f.dir, BUNDLE_FILE), 'utf8'));
        const script = `for (const p of ${JSON.stringify(packages)}) import.meta.resolve(p);`;
        return [f.name, { packages, ...(packages.length === 0 ? { status: 0, stderr: '' } : importFrom(f.dir, script)) }];
      }),
    );
    const template = JSON.parse(readFileSync(join(outdir, stack.templateFile), 'utf8')) as { Resources: Record<string, { Properties?: Record<string, any> }> };
    const layerId = stack.getLogicalId(stack.mcpRuntime.layer.node.defaultChild as CfnElement);
    mcpLayerFunctions = stack.node
      .findAll()
      .filter((c): c is PlatformFunction => c instanceof PlatformFunction)
      .filter((c) =>
        JSON.stringify(template.Resources[stack.getLogicalId(c.function.node.defaultChild as CfnElement)]?.Properties?.['Layers'] ?? []).includes(
          `"${layerId}"`,
        ),
      )
      .map((c) => c.node.path.slice(stack.node.path.length + 1));
    // Each module the bundle names for `require` (platform-mcp.service.ts loads them with createRequire,
    // which esbuild leaves alone), required as that code does, from the bundle's own file; Lambda
    // puts the layer's nodejs/node_modules on NODE_PATH.
    const layerModules = join(assets.mcpLayer.dir, 'nodejs', 'node_modules');
    sdkLoads = new Map(
      assets.functions.flatMap((f) => {
        const modules = [
          ...new Set([...readFileSync(join(f.dir, BUNDLE_FILE), 'utf8').matchAll(/["'](@modelcontextprotocol\/sdk\/[^"']+)["']/g)].map((m) => m[1]!)),
        ];
        if (modules.length === 0) return [];
        const script = `const load = require('node:module').createRequire(${JSON.stringify(pathToFileURL(join(f.dir, BUNDLE_FILE)).href)}); for (const m of ${JSON.stringify(modules)}) load(m);`;
        const run = (env: Record<string, string>) => {
          const load = spawnSync(process.execPath, ['-e', script], { cwd: f.dir, env: { PATH: process.env['PATH'] ?? '', ...env }, encoding: 'utf8' });
          return { status: load.status, stderr: load.stderr };
        };
        return [[f.name, { modules, withLayer: run({ NODE_PATH: layerModules }), without: run({}) }] as const];
      }),
    );
    // The layer holds the modules a server loads, not an empty directory that passes any budget.
    expect(existsSync(join(assets.mcpLayer.dir, 'nodejs/node_modules/@modelcontextprotocol/sdk/dist/cjs/server/mcp.js'))).toBe(true);
  });
});

const kb = (bytes: number) => `${(bytes / KB).toFixed(1)} KB`;

describe('asset budgets', () => {
  it(`keeps every platform function's bundle under ${FUNCTION_BUNDLE_BUDGET_BYTES / KB} KB (the API reference's under ${REFERENCE_BUNDLE_BUDGET_BYTES / KB} KB)`, () => {
    // Act
    const over = assets.functions.filter((f) => f.bytes >= bundleBudgetOf(f.name)).map((f) => `${f.name}: ${kb(f.bytes)}`);

    // Assess: every function was measured (areas, streaming hosts, the fallback, entry-point consumers),
    // the API reference's (the one with a budget of its own) among them.
    expect(assets.functions).toHaveLength(expectedFunctions);
    expect(assets.functions.map((f) => f.name)).toContain(REFERENCE_FUNCTION);
    // One line per function over, so the failure names them all with their sizes.
    expect(over.join('\n')).toBe('');
  });

  it('leaves the AWS SDK v3 to the Lambda runtime, which ships it, in every bundle', () => {
    // Assess: an SDK client inlined would be about 500 KB on its own (lib/cloud/platform-function.ts, externalModules).
    expect(bundlesWithSdkCode).toEqual([]);
  });

  it.each([
    ['compute', 'RUNTIME_FUNCTION_NAME', 'functions/adapters/compute/aws.ts'],
    ['mcpRuntime', 'MCP_RUNTIME_FUNCTION_NAME', 'functions/adapters/mcp-runtime/aws.ts'],
  ])('bundles the %s adapter only into the functions granted its runtime', (_port, variable, adapter) => {
    // Act: the functions holding the adapter, and those the stack lets invoke the runtime.
    const holding = assets.functions.filter((f) => sourcesOf.get(f.name)?.includes(adapter)).map((f) => f.name);
    const granted = assets.functions.filter((f) => f.environment.includes(variable)).map((f) => f.name);

    // Assess: some hold it and most do not, so the sources were read at all.
    expect(holding).toEqual(granted);
    expect(holding.length).toBeGreaterThan(0);
    expect(holding.length).toBeLessThan(assets.functions.length / 2);
  });

  it.each(KNOWLEDGE_FUNCTIONS)('ships the PDF engine beside the bundle of %s, loadable from it, not in it', (name) => {
    // Act
    const load = pdfEngineLoads.get(name);

    // Assess
    expect(load).toEqual({ status: 0, stderr: '' });
    expect(sourcesOf.get(name)!.filter((source) => source.includes('unpdf'))).toEqual([]);
  });

  it('ships the YAML parser beside the bundle of the skills function, loadable from it, not in it', () => {
    // Assess
    expect(yamlParserLoad).toEqual({ status: 0, stderr: '' });
    expect(sourcesOf.get(SKILLS_FUNCTION)!.filter((source) => source.includes('js-yaml'))).toEqual([]);
  });

  it.each(SEARCHING_FUNCTIONS)('ships the search libraries beside the bundle of %s, loadable from it, and in no bundle', (name) => {
    // Assess
    expect(searchLibraryLoads.get(name)).toEqual({ status: 0, stderr: '' });
    expect(
      assets.functions.filter((f) => sourcesOf.get(f.name)!.some((source) => /node_modules\/(minisearch|stemmer)\//.test(source))).map((f) => f.name),
    ).toEqual([]);
  });

  it('resolves every package a bundle imports from its own asset, as Lambda would from /var/task', () => {
    // Act
    const unresolved = [...externalImports]
      .filter(([, load]) => load.status !== 0)
      .map(([name, load]) => `${name}: ${load.packages.join(', ')}\n${load.stderr}`);

    // Assess: the cron functions import croner from beside their bundles, so the check saw at least those.
    expect(unresolved.join('\n')).toBe('');
    for (const name of CRON_FUNCTIONS) expect(externalImports.get(name)?.packages).toContain('croner');
  });

  it('ships the session-token verifier beside the bundles of functions that authenticate, loadable from them, and in no bundle', () => {
    // Assess
    for (const name of AUTHENTICATING_FUNCTIONS) expect(verifierLoads.get(name), name).toEqual({ status: 0, stderr: '' });
    expect(verifierLoads.get('Functions/Fallback')?.status).not.toBe(0);
    expect(assets.functions.filter((f) => sourcesOf.get(f.name)!.some((source) => source.includes('node_modules/aws-jwt-verify/'))).map((f) => f.name)).toEqual(
      [],
    );
  });

  it.each(CRON_FUNCTIONS)('imports croner from beside the bundle of %s rather than holding it', (name) => {
    // Assess: the API reference's bundle holds the whole manifest, croner with it, within its own budget.
    expect(sourcesOf.get(name)!.filter((source) => source.includes('node_modules/croner/'))).toEqual([]);
  });

  it('gives the functions requiring the MCP SDK at run time the MCP modules layer, from which it loads, and bundles it nowhere', () => {
    // Act: the API reference holds every handler module for its schemas and runs none of them.
    const requiring = [...sdkLoads.keys()].filter((name) => name !== REFERENCE_FUNCTION);

    // Assess: the platform MCP server's function names the SDK's server, transport and types.
    expect(requiring).toEqual(['Functions/Area-platform-tools']);
    expect(mcpLayerFunctions).toEqual(requiring);
    const server = sdkLoads.get('Functions/Area-platform-tools')!;
    expect(server.modules).toEqual(expect.arrayContaining(['@modelcontextprotocol/sdk/server/index.js', '@modelcontextprotocol/sdk/types.js']));
    expect(server.withLayer).toEqual({ status: 0, stderr: '' });
    // Without the layer nothing provides it: the asset does not ship it either.
    expect(server.without.stderr).toMatch(/Cannot find module '@modelcontextprotocol\/sdk\//);
    expect(
      assets.functions.filter((f) => sourcesOf.get(f.name)!.some((source) => source.includes('node_modules/@modelcontextprotocol/'))).map((f) => f.name),
    ).toEqual([]);
  });

  it(`keeps the MCP modules layer under ${MCP_LAYER_BUDGET_BYTES / MB} MB`, () => {
    // Assess
    expect(assets.mcpLayer.bytes, `${(assets.mcpLayer.bytes / MB).toFixed(2)} MB in ${assets.mcpLayer.files} files`).toBeLessThan(MCP_LAYER_BUDGET_BYTES);
  });
});

/**
 * The platform's deployable assets as `cdk synth` stages them, and their sizes: what Lambda loads
 * for each platform function (its esbuild bundle) and the MCP modules layer. Shared by the budget
 * test (test/infra/asset-budgets.test.ts) and `npm run bench -- bundles`, so both measure the
 * same thing; no vitest here, as the bench runs outside it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isBuiltin } from 'node:module';
import { join } from 'node:path';
import { App, type CfnElement } from 'aws-cdk-lib';
import { REPO_ROOT } from '../../lib/cloud/function-entries.ts';
import { PlatformFunction } from '../../lib/cloud/platform-function.ts';
import { PlatformStack } from '../../lib/cloud/platform-stack.ts';

/** esbuild prints sizes in units of 1024 bytes, and the budgets of issue 11 were read from its output. */
export const KB = 1024;
export const MB = 1024 * KB;

/**
 * Each platform function's bundle must stay under this (issue 11: 555 KB before; 200 KB until
 * 2026-11-28). Raised by 10 KB when issue 29 put real features on the chat path (stored tool
 * context, the model-host grammar every function checks at start, the stream scrubber): the budget
 * is a tripwire for an import that pulls a whole package (tens or hundreds of KB), and 10 KB of the
 * platform's own code costs about a millisecond of cold start. Raised by 10 KB more the same day
 * when every setting came to carry its description (the generated configuration reference: about
 * 9 KB of text in core/config.ts, in every function) and the agents function came to serve the runs
 * cron and channels invoke: the agents bundle measured 215 KB. Raised to 240 KB the same day when
 * every route came to declare the zod schema of its answer (the typed OpenAPI document and client,
 * issue 38) and admission, plans and billing joined the shared core: agents measured 232.6 KB, mcp
 * 230.3 KB, the stream host 222.7 KB.
 */
export const FUNCTION_BUNDLE_BUDGET_BYTES = 240 * KB;
/**
 * The API reference's function, the one exception: it holds every handler module by design (their
 * schemas make the OpenAPI document; docs/ARCHITECTURE.md, The API reference), loaded on its first
 * request only. It serves no API traffic, so its larger cold start costs a reader of `/docs` alone.
 * It grows with the API, about 25 KB an area: 400 KB with websites and cron. The way to a fixed size
 * is the document built at synth and shipped as a file, instead of the handlers.
 */
export const REFERENCE_FUNCTION = 'Functions/Area-reference';
// 583 KB measured with 26 areas and every response typed (2026-11-28).
export const REFERENCE_BUNDLE_BUDGET_BYTES = 620 * KB;

/**
 * The platform MCP server's function (functions/platform-tools), the second exception: by design it
 * composes five areas' services (knowledge search, action execution with the runtime adapter,
 * skills, the hosted MCP endpoint), each the same code as the direct route so billing and records
 * match; its own code is about 30 KB on top of the shared core (measured 2026-11-28). The MCP SDK it
 * speaks with is not in the bundle: it comes from the MCP modules layer.
 */
export const PLATFORM_TOOLS_FUNCTION = 'Functions/Area-platform-tools';
// 263.8 KB measured once responses were typed and paid MCP access joined the endpoint (2026-11-28).
export const PLATFORM_TOOLS_BUNDLE_BUDGET_BYTES = 280 * KB;

/** The budget of one function's bundle, by its construct path. */
export function bundleBudgetOf(name: string): number {
  if (name === REFERENCE_FUNCTION) return REFERENCE_BUNDLE_BUDGET_BYTES;
  return name === PLATFORM_TOOLS_FUNCTION ? PLATFORM_TOOLS_BUNDLE_BUDGET_BYTES : FUNCTION_BUNDLE_BUDGET_BYTES;
}

/** The MCP modules layer, every file of it, must stay under this (issue 11: 21 MB before). */
export const MCP_LAYER_BUDGET_BYTES = 5 * MB;

/** The file Lambda loads from a platform function's asset (NodejsFunction, ESM output). */
export const BUNDLE_FILE = 'index.mjs';

export interface FunctionBundle {
  /** The function's construct path under the stack (`Functions/Area-agents`). */
  readonly name: string;
  /** The staged asset directory. */
  readonly dir: string;
  /** Bytes of the bundle Lambda loads. */
  readonly bytes: number;
  /** Bytes of its source map, shipped beside it and read only for stack traces. */
  readonly mapBytes: number;
  /** Names of the variables its environment sets (RUNTIME_FUNCTION_NAME when it may run user code, ...). */
  readonly environment: readonly string[];
}

/**
 * Bare specifiers of a minified ESM bundle's static imports and of its dynamic imports with a
 * literal, other than Node's own modules and the runtime's SDK: the packages the bundle expects to
 * find beside it (a function's runtime files, lib/cloud/platform-function.ts).
 */
export function importedPackages(code: string): string[] {
  // A specifier is a package name (lowercase, no spaces or punctuation of code), so a string that
  // merely ends in the word "import" followed by minified code is not taken for one.
  const specifiers = [...code.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)["']((?:node:)?(?:@[a-z0-9][\w.~-]*\/)?[a-z0-9][\w.~-]*(?:\/[\w.~/-]*)?)["']/g)].map(
    (m) => m[1]!,
  );
  return [...new Set(specifiers.filter((s) => !isBuiltin(s) && !s.startsWith('@aws-sdk/')))].sort();
}

export interface PlatformAssets {
  readonly functions: readonly FunctionBundle[];
  readonly mcpLayer: { readonly dir: string; readonly bytes: number; readonly files: number };
}

/** The feature flags and other context of cdk.json, as `cdk synth` applies them. */
export function cdkJsonContext(): Record<string, unknown> {
  return (JSON.parse(readFileSync(join(REPO_ROOT, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> }).context;
}

/**
 * Synthesizes the platform stack into `outdir` with cdk.json's context, bundling on (every function
 * built by esbuild, the layer staged) unless `bundling` is false, and returns the stack. The
 * function entries go to `entriesDir` (inside the project, where esbuild finds the packages).
 * With `synthesize: false` the stack is only constructed (assets staged, no template written).
 */
export function synthesizePlatform(
  outdir: string,
  options: { readonly bundling: boolean; readonly stackName: string; readonly stage: string; readonly entriesDir?: string; readonly synthesize?: boolean },
): PlatformStack {
  const context = { ...cdkJsonContext(), ...(options.bundling ? {} : { 'aws:cdk:bundling-stacks': [] }) };
  const app = new App({ outdir, analyticsReporting: false, context });
  const { stackName, stage, entriesDir } = options;
  const stack = new PlatformStack(app, stackName, { stackName, stage, version: '0.0.0-test', entriesDir });
  if (options.synthesize !== false) app.synth();
  return stack;
}

/**
 * The sizes of what a bundling synth of `stack` staged in `outdir`: every platform function's
 * bundle (areas, streaming hosts, the fallback, and schedule, queue and storage-event consumers),
 * and the MCP layer. Each is found through its resource's S3 key in the written template
 * (`<hash>.zip` is staged as `asset.<hash>`), so what is measured is what would be uploaded.
 */
export function measurePlatformAssets(stack: PlatformStack, outdir: string): PlatformAssets {
  const template = JSON.parse(readFileSync(join(outdir, stack.templateFile), 'utf8')) as { Resources: Record<string, { Properties?: Record<string, any> }> };
  const propertiesOf = (construct: { node: { defaultChild?: unknown } }) =>
    template.Resources[stack.getLogicalId(construct.node.defaultChild as CfnElement)]?.Properties;
  const assetDir = (construct: { node: { defaultChild?: unknown } }, property: 'Code' | 'Content') => {
    const id = stack.getLogicalId(construct.node.defaultChild as CfnElement);
    const key = propertiesOf(construct)?.[property]?.S3Key as unknown;
    if (typeof key !== 'string' || !key.endsWith('.zip')) throw new Error(`${id} has no staged asset (was the synth bundling?)`);
    return join(outdir, `asset.${key.slice(0, -'.zip'.length)}`);
  };
  const functions = stack.node
    .findAll()
    .filter((c): c is PlatformFunction => c instanceof PlatformFunction)
    .map((c) => {
      const dir = assetDir(c.function, 'Code');
      const mapFile = join(dir, `${BUNDLE_FILE}.map`);
      return {
        name: c.node.path.slice(stack.node.path.length + 1),
        dir,
        bytes: statSync(join(dir, BUNDLE_FILE)).size,
        mapBytes: readdirSync(dir).includes(`${BUNDLE_FILE}.map`) ? statSync(mapFile).size : 0,
        environment: Object.keys((propertiesOf(c.function)?.['Environment']?.Variables as object | undefined) ?? {}),
      };
    });
  const layerDir = assetDir(stack.mcpRuntime.layer, 'Content');
  const layerFiles = filesUnder(layerDir);
  return {
    functions,
    mcpLayer: { dir: layerDir, bytes: layerFiles.reduce((total, file) => total + statSync(file).size, 0), files: layerFiles.length },
  };
}

/** Every regular file under `dir`, as absolute paths. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : entry.isFile() ? [join(dir, entry.name)] : [],
  );
}

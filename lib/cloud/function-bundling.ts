import { copyFileSync, mkdirSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { AssetHashType, type BundlingOptions, type ILocalBundling } from 'aws-cdk-lib';
import { Code, Runtime } from 'aws-cdk-lib/aws-lambda';
import { buildSync, type BuildOptions } from 'esbuild';
import { REPO_ROOT } from './function-entries.ts';

/** The directory esbuild runs in and the bundles' asset source (NodejsFunction's `projectRoot`: the lock file's directory). */
const PROJECT_ROOT = resolve(REPO_ROOT);

/** The file Lambda loads: NodejsFunction's name for an ESM bundle, so its handler is `index.<export>`. */
export const BUNDLE_ENTRY_FILE = 'index.mjs';

/** What one platform function's asset holds, besides its own bundle of `entry`. */
export interface FunctionBundleSpec {
  /** TypeScript entry file (absolute). */
  readonly entry: string;
  /** Packages left to the runtime: imported at run time, never bundled. */
  readonly external: readonly string[];
  /** Identifiers replaced by JSON values at build time. */
  readonly define: Readonly<Record<string, string>>;
  /** The esbuild banner of the bundle (not of its workers). */
  readonly banner: string;
  /**
   * Files the code reads at run time, relative to the project root: copied into the asset at the
   * same path, except a TypeScript file, a worker thread's entry, bundled as `workers/<name>.mjs`.
   */
  readonly runtimeFiles: readonly string[];
}

/**
 * A platform function's code: its esbuild bundle and runtime files, built in this process by
 * esbuild's JavaScript API. NodejsFunction built the same bundle through esbuild's command line,
 * run with `npx --no-install esbuild` (esbuild being a package of the project), and a shell per
 * copied file: those process starts were most of a bundling synth (decision 0048). The options are those NodejsFunction put on that command line for the props
 * PlatformFunction gave it, and the bundles are byte for byte the same (compared on the whole stack).
 *
 * The asset hash is the output's, as NodejsFunction's, so a function deploys again only when its
 * bundle changes. `spec` is part of the bundling options CDK keys its staging cache on: two functions
 * of the same project root must not share one bundle. Synths with bundling off build nothing.
 */
export function functionBundleCode(spec: FunctionBundleSpec): Code {
  for (const file of spec.runtimeFiles)
    if (isAbsolute(file) || file.split(/[\\/]/).includes('..')) throw new Error(`Runtime file ${file} must be a relative path inside the project.`);
  const local: ILocalBundling & { readonly spec: FunctionBundleSpec } = {
    spec,
    tryBundle(outputDir: string): boolean {
      buildFunctionBundle(spec, outputDir);
      return true;
    },
  };
  const bundling: BundlingOptions = { image: Runtime.NODEJS_22_X.bundlingImage, local };
  return Code.fromAsset(PROJECT_ROOT, { assetHashType: AssetHashType.OUTPUT, bundling });
}

/** Writes `spec`'s bundle, its source map and its runtime files into `outputDir`. */
export function buildFunctionBundle(spec: FunctionBundleSpec, outputDir: string): void {
  const runtimePackages = packagesOf(spec.runtimeFiles);
  buildSync({
    ...SHARED_OPTIONS,
    entryPoints: [spec.entry],
    outfile: join(outputDir, BUNDLE_ENTRY_FILE),
    external: [...spec.external],
    define: { ...spec.define },
    banner: { js: spec.banner },
    mainFields: ['module', 'main'],
  });
  for (const file of spec.runtimeFiles) {
    if (isWorkerEntry(file)) {
      // lib/local/build.ts bundles the worker the same way for `npm start`.
      buildSync({
        ...SHARED_OPTIONS,
        entryPoints: [join(PROJECT_ROOT, file)],
        outfile: join(outputDir, 'workers', `${basename(file, '.ts')}.mjs`),
        external: ['@aws-sdk/*', ...runtimePackages],
      });
    } else {
      mkdirSync(dirname(join(outputDir, file)), { recursive: true });
      copyFileSync(join(PROJECT_ROOT, file), join(outputDir, file));
    }
  }
}

/** Node 22 on Lambda, ESM, minified, linked source maps; warnings and errors printed, as every build here. */
const SHARED_OPTIONS = {
  absWorkingDir: PROJECT_ROOT,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node22',
  minify: true,
  sourcemap: true,
  logLevel: 'warning',
} as const satisfies BuildOptions;

/** A TypeScript runtime file is a worker thread's entry: bundled on its own, not copied. */
export function isWorkerEntry(file: string): boolean {
  return file.endsWith('.ts');
}

/** The npm packages `files` ship whole (`node_modules/<name>/...`, scoped names included). */
export function packagesOf(files: readonly string[]): string[] {
  const names = files.flatMap((file) => /^node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(file)?.[1] ?? []);
  return [...new Set(names)];
}

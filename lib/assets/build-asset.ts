import type * as esbuild from 'esbuild';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StaticAssetSpec } from '../manifest/types.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The paths an asset is served at on its host: the current version, and the immutable versioned one. */
export function assetPaths(asset: StaticAssetSpec): { readonly current: string; readonly versioned: string } {
  return { current: `/${asset.name}`, versioned: `/v${asset.version}/${asset.name}` };
}

function options(asset: StaticAssetSpec, repoRoot: string): esbuild.BuildOptions & { write: false } {
  return {
    entryPoints: [join(repoRoot, asset.entry)],
    absWorkingDir: repoRoot,
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: ['es2020', 'chrome90', 'firefox90', 'safari15'],
    legalComments: 'none',
    write: false,
    logLevel: 'silent',
  };
}

function withBanner(asset: StaticAssetSpec, files: readonly { text: string }[] | undefined): string {
  const file = files?.[0];
  if (file === undefined) throw new Error(`esbuild produced nothing for ${asset.entry}`);
  return `/* ${asset.name} ${asset.version} */\n${file.text}`;
}

/**
 * Bundles and minifies a browser asset in memory (tens of milliseconds): one self-contained
 * script, no module system, for browsers of the last few years.
 */
export async function buildAsset(asset: StaticAssetSpec, repoRoot = REPO_ROOT): Promise<string> {
  // Imported here, not at the top: the local platform builds its assets on their first request, and
  // loading esbuild (and its service process) on every start would slow every start for nothing.
  const { build } = await import('esbuild');
  return withBanner(asset, (await build(options(asset, repoRoot))).outputFiles);
}

/** The same, synchronously: for the CDK stack, whose constructs are built synchronously. */
export function buildAssetSync(asset: StaticAssetSpec, repoRoot = REPO_ROOT): string {
  const { buildSync } = createRequire(import.meta.url)('esbuild') as typeof esbuild;
  return withBanner(asset, buildSync(options(asset, repoRoot)).outputFiles);
}

import { build } from 'esbuild';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { StaticAssetSpec } from '../manifest/types.ts';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The paths an asset is served at on its host: the current version, and the immutable versioned one. */
export function assetPaths(asset: StaticAssetSpec): { readonly current: string; readonly versioned: string } {
  return { current: `/${asset.name}`, versioned: `/v${asset.version}/${asset.name}` };
}

/**
 * Bundles and minifies a browser asset in memory (tens of milliseconds): one self-contained
 * script, no module system, for browsers of the last few years.
 */
export async function buildAsset(asset: StaticAssetSpec, repoRoot = REPO_ROOT): Promise<string> {
  const result = await build({
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
  });
  const file = result.outputFiles[0];
  if (file === undefined) throw new Error(`esbuild produced nothing for ${asset.entry}`);
  return `/* ${asset.name} ${asset.version} */\n${file.text}`;
}

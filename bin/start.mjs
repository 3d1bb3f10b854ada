// @ts-check
/**
 * `npm start`: the local platform from its esbuild build (lib/local/build.ts), built first when it
 * is missing or any of its inputs changed (lib/local/current-build.mjs: a few ms). Plain
 * JavaScript, so that a start with a fresh build compiles nothing. `npm run dev` runs the
 * TypeScript sources under tsx instead. LOCAL_BUILD_DIR chooses the build root (default
 * `.tmp/local-build`, inside the project so the bundle's packages resolve).
 */
import { spawnSync } from 'node:child_process';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { currentBuild } from '../lib/local/current-build.mjs';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const buildRoot = resolve(repoRoot, process.env.LOCAL_BUILD_DIR || '.tmp/local-build');

let build = currentBuild(repoRoot, buildRoot);
if (build === null || build.changed !== null) {
  const where = relative(process.cwd(), buildRoot) || '.';
  console.log(build === null ? `Building the local platform into ${where} (first start)...` : `${build.changed} changed: rebuilding the local platform...`);
  // The build is TypeScript (it reads the manifest), so it runs under tsx, in a process of its own.
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(repoRoot, 'bin', 'build-local.ts')], {
    cwd: repoRoot,
    stdio: 'inherit',
    env: { ...process.env, LOCAL_BUILD_DIR: buildRoot },
  });
  if (result.status !== 0) process.exit(result.status ?? 1);
  build = currentBuild(repoRoot, buildRoot);
  if (build === null) {
    console.error(`The build finished but ${join(buildRoot, 'current.json')} cannot be read.`);
    process.exit(1);
  }
}
// Stack traces then name the .ts sources (the build writes a source map beside each file).
process.setSourceMapsEnabled(true);
await import(pathToFileURL(build.main).href);

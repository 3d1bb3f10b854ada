// @ts-check
/**
 * `npm start`: the local platform from its esbuild build (lib/local/build.ts), built first when it
 * is missing or any of its inputs changed. Plain JavaScript, so that a start with a fresh build
 * compiles nothing: the check is one `stat` per input (a few ms), against the sizes and times the
 * build recorded in `current.json`. `npm run dev` runs the TypeScript sources under tsx instead.
 * LOCAL_BUILD_DIR chooses the build root (default `.tmp/local-build`).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const repoRoot = fileURLToPath(new URL('../', import.meta.url));
const buildRoot = resolve(repoRoot, process.env.LOCAL_BUILD_DIR || '.tmp/local-build');

/**
 * The current build's main, and the first input that differs from what it was built from (null
 * when none does); null as a whole when there is no readable build.
 * @returns {{ main: string; changed: string | null } | null}
 */
function currentBuild() {
  /** @type {{ main: string; inputs: Record<string, [number, number]> }} */
  let current;
  try {
    current = JSON.parse(readFileSync(join(buildRoot, 'current.json'), 'utf8'));
  } catch {
    return null;
  }
  const main = join(buildRoot, current.main);
  for (const [path, [mtimeMs, size]] of Object.entries(current.inputs)) {
    const stats = statSync(join(repoRoot, path), { throwIfNoEntry: false });
    if (stats?.mtimeMs !== mtimeMs || stats.size !== size) return { main, changed: path };
  }
  return statSync(main, { throwIfNoEntry: false }) ? { main, changed: null } : { main, changed: current.main };
}

let build = currentBuild();
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
  build = currentBuild();
  if (build === null) {
    console.error(`The build finished but ${join(buildRoot, 'current.json')} cannot be read.`);
    process.exit(1);
  }
}
// Stack traces then name the .ts sources (the build writes a source map beside each file).
process.setSourceMapsEnabled(true);
await import(pathToFileURL(build.main).href);

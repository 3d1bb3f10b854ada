// @ts-check
/**
 * Whether the local build (lib/local/build.ts) is current: `npm start`'s check before every start
 * (bin/start.mjs). Plain JavaScript because it runs before anything is built; one `stat` per
 * input, compared with the size and time the build recorded in `current.json` (the startup bench
 * measures it). Its declaration file is current-build.d.mts.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The current build's main, and the first input that differs from what it was built from (null
 * when none does); null when there is no readable build.
 * @param {string} repoRoot
 * @param {string} buildRoot
 * @returns {{ main: string; changed: string | null } | null}
 */
export function currentBuild(repoRoot, buildRoot) {
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

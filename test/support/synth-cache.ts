/**
 * A directory built once per content of its inputs and reused by every test process that asks for
 * the same content: the infra tests' synthesized platform (test/infra/synth-platform.ts), which
 * took each of two dozen files 10 to 30 s to make again. The key is a hash of the inputs' bytes
 * (never their times), so an edit anywhere in them makes a new entry and no reader gets an old one.
 * No vitest here: plain functions of the file system, tested in test/unit/synth-cache.test.ts.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Directories never part of a key: installed packages, interpreter caches, virtual environments. */
const SKIPPED_DIRS = new Set(['node_modules', '__pycache__', '.venv', '.pytest_cache', '.mypy_cache']);

/** Every regular file under `dir` (recursively, sorted), skipping SKIPPED_DIRS and compiled Python. */
function filesOf(dir: string): string[] {
  if (!existsSync(dir)) return [];
  if (!statSync(dir).isDirectory()) return [dir];
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => {
      const path = join(dir, entry.name);
      if (SKIPPED_DIRS.has(entry.name) || entry.name.endsWith('.pyc')) return [];
      // Symbolic links are followed (statSync), as the synth's asset copies follow them.
      const stat = statSync(path, { throwIfNoEntry: false });
      if (stat === undefined) return [];
      return stat.isDirectory() ? filesOf(path) : stat.isFile() ? [path] : [];
    });
}

/**
 * A hash of the files and directories `inputs` (relative to `root`; missing ones count as missing)
 * and of `extra`: each file's path, whether it is executable (assets keep the mode) and its bytes.
 */
export function contentKey(root: string, inputs: readonly string[], extra: unknown = null): string {
  const hash = createHash('sha256').update(JSON.stringify(extra));
  for (const input of inputs) {
    const files = filesOf(join(root, input));
    hash.update(`\0input ${input} ${files.length}\0`);
    for (const file of files) {
      const executable = (statSync(file).mode & 0o111) !== 0;
      hash.update(`\0${relative(root, file)} ${executable ? 'x' : '-'}\0`).update(readFileSync(file));
    }
  }
  return hash.digest('hex').slice(0, 24);
}

/** Blocks the thread for `ms` (a synchronous caller cannot await; a test's synth is synchronous). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pid in a lock, NaN while its holder has not written it (or when the lock just went away). */
function lockHolder(lock: string): number {
  try {
    return Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    return Number.NaN;
  }
}

/** Marks an entry complete; written last, so an entry without it is unfinished or abandoned. */
const COMPLETE = 'complete';
/** Entries not used for this long are removed when a new one is made (each synth is about 30 MB). */
const UNUSED_FOR_MS = 60 * 60 * 1000;

/**
 * The directory `<cacheDir>/<key>`, made by `build` (given the empty directory) unless a complete
 * one is there already. Processes asking for the same key at the same time build it once: the
 * others wait for the first (a lock directory holding its pid; a dead holder's lock is taken over).
 * When `stillValid` says no after the build (its inputs changed meanwhile), the entry is dropped
 * and the result is undefined.
 */
export function cachedDirectory(cacheDir: string, key: string, build: (dir: string) => void, stillValid: () => boolean = () => true): string | undefined {
  const dir = join(cacheDir, key);
  const complete = join(dir, COMPLETE);
  const lock = join(cacheDir, `${key}.lock`);
  mkdirSync(cacheDir, { recursive: true });
  for (;;) {
    if (existsSync(complete)) {
      // Seen in use: keeps it from being pruned while another run reads it.
      const now = new Date();
      utimesSync(complete, now, now);
      return dir;
    }
    try {
      mkdirSync(lock);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const holder = lockHolder(lock);
      // A holder that died (or has not written its pid yet for over a minute) leaves its lock behind.
      const age = Date.now() - (statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if ((holder > 0 && !processAlive(holder)) || (!(holder > 0) && age > 60_000)) rmSync(lock, { recursive: true, force: true });
      else sleepSync(250);
      continue;
    }
    try {
      writeFileSync(join(lock, 'pid'), String(process.pid));
      if (existsSync(complete)) continue;
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(dir, { recursive: true });
      build(dir);
      if (!stillValid()) {
        rmSync(dir, { recursive: true, force: true });
        return undefined;
      }
      writeFileSync(complete, key);
      prune(cacheDir, key);
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

/** Removes the entries other than `keep` unused for an hour, and unfinished ones as old. */
function prune(cacheDir: string, keep: string): void {
  for (const name of readdirSync(cacheDir)) {
    if (name === keep || name.endsWith('.lock')) continue;
    const path = join(cacheDir, name);
    const stamp = statSync(join(path, COMPLETE), { throwIfNoEntry: false }) ?? statSync(path, { throwIfNoEntry: false });
    if (stamp !== undefined && Date.now() - stamp.mtimeMs > UNUSED_FOR_MS && !existsSync(join(cacheDir, `${name}.lock`))) {
      rmSync(path, { recursive: true, force: true });
    }
  }
}

/**
 * What the platform's template is made from (test/infra/synth-platform.ts); a change to any byte of
 * these makes a new synth. Directories are read whole (functions/ holds the areas' modules and
 * handlers, widget/ the sources of the assets the CDN serves); node_modules/.package-lock.json
 * stands for the installed packages (the MCP layer and the runtimes' files are copied from them).
 */
export const PLATFORM_SYNTH_INPUTS = [
  'lib',
  'functions',
  'layers',
  'python-runtime',
  'widget',
  'cdk.json',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'node_modules/.package-lock.json',
  'test/infra/synth-platform.ts',
  'test/support/platform-assets.ts',
  'test/support/synth-cache.ts',
];

const REPO_ROOT = new URL('../../', import.meta.url).pathname;

/** The key of the platform's synth: the content of PLATFORM_SYNTH_INPUTS (the stack's names and props are in synth-platform.ts). */
export function platformSynthKey(): string {
  return contentKey(REPO_ROOT, PLATFORM_SYNTH_INPUTS);
}

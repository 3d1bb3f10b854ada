import { fork, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';

/** A seed directory's parts: a dynalite directory, and the CreateTable calls that made its tables (JSON). */
export function seedFiles(seed: string): { readonly dynamodb: string; readonly tables: string } {
  return { dynamodb: join(seed, 'dynamodb'), tables: join(seed, 'tables.json') };
}

/**
 * Node options for the stores' process alone, a development switch for profiling it:
 * `STORES_EXEC_ARGV='--cpu-prof --cpu-prof-dir=/tmp/prof'` (docs/development.md, Profiling). Its
 * NODE_OPTIONS are cleared (the parent's may load tsx), so this is the only way in; split on blanks.
 */
function devExecArgv(): string[] {
  return (process.env['STORES_EXEC_ARGV'] ?? '').split(/\s+/).filter((arg) => arg !== '');
}

/**
 * Forks the stores' process (stores-process.ts, as JavaScript at `entry`): it loads dynalite and
 * s3rver, then waits for `startLocalStores` to send it the data directory. The built start forks it
 * first thing, before its own modules load, so that the two processes load in parallel; the data
 * directory is still locked before the stores open it. A module of its own, so that this can run
 * before anything heavy is imported. `seed`: the build's tables for an empty data directory
 * (build.ts), used when they are the layout asked for.
 */
export function forkStoresProcess(entry: string, seed?: string): ChildProcess {
  // Paths as arguments: the process is also compiled alone from its source (stores.ts), so it imports none of ours.
  const files = seed === undefined ? null : seedFiles(seed);
  const child = fork(entry, files === null ? [] : [files.dynamodb, files.tables], {
    // s3rver's paged listings need the legacy OpenSSL provider under OpenSSL 3 (STACK-NOTES).
    execArgv: ['--openssl-legacy-provider', ...devExecArgv()],
    env: { ...process.env, NODE_OPTIONS: '' },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  // Until startLocalStores takes it over, it must not keep a platform that failed to start alive;
  // it exits by itself when this process goes away.
  child.unref();
  child.channel?.unref();
  return child;
}

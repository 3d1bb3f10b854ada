import { fork, type ChildProcess } from 'node:child_process';

/**
 * Forks the stores' process (stores-process.ts, as JavaScript at `entry`): it loads dynalite and
 * s3rver, then waits for `startLocalStores` to send it the data directory. The built start forks it
 * first thing, before its own modules load, so that the two processes load in parallel; the data
 * directory is still locked before the stores open it. A module of its own, so that this can run
 * before anything heavy is imported.
 */
export function forkStoresProcess(entry: string): ChildProcess {
  const child = fork(entry, [], {
    // s3rver's paged listings need the legacy OpenSSL provider under OpenSSL 3 (STACK-NOTES).
    execArgv: ['--openssl-legacy-provider'],
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

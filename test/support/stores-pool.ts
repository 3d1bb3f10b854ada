import type { ChildProcess } from 'node:child_process';
import { forkLocalStoresProcess } from '../../lib/local/stores.ts';

/**
 * Stores' processes left idle by this test process's stopped platforms and databases, for the next
 * to start: loading dynalite's and s3rver's modules was about 1.9 s of CPU at each of the hundred
 * starts of a run, and a kept process starts its servers again for a fresh data directory with
 * fresh credentials (startLocalStores `keep`). Unreferenced while idle, each exits with this process.
 */
const idle: ChildProcess[] = [];

/** An idle stores' process that is still alive, or a new one. */
export async function takeStoresProcess(): Promise<ChildProcess> {
  for (let child = idle.pop(); child !== undefined; child = idle.pop()) {
    if (child.connected && child.exitCode === null && child.signalCode === null) return child;
  }
  return forkLocalStoresProcess();
}

/** Takes back a stores' process its platform has released. */
export function keepStoresProcess(child: ChildProcess): void {
  idle.push(child);
}

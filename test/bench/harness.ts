import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import type { MeasuredRow } from './stats.ts';

export const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

/** What the runner lends a bench module. */
export interface BenchContext {
  /** Progress on stderr, so stdout carries only the report. */
  progress(message: string): void;
  /** A fresh directory under the OS temp dir, removed after the module finishes. */
  tempDir(label: string): Promise<string>;
  /** Runs after the module, last registered first, even when it failed. */
  defer(step: () => Promise<unknown> | unknown): void;
}

/**
 * One area's benchmarks. `run` measures and returns rows whose ratios refer to baselines measured
 * in the same call; the runner adds the module name, prints and saves them.
 */
export interface BenchModule {
  readonly name: string;
  run(context: BenchContext): Promise<MeasuredRow[]>;
}

/** A loopback port nobody listens on right now, for children that cannot report port 0 back. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

export function elapsedSince(startedAt: number): number {
  return performance.now() - startedAt;
}

/**
 * The local platform in a process of its own, for benches that measure it from outside (its
 * memory and its children's): `node --import tsx test/bench/platform-child.ts '<options JSON>'`.
 * Prints one JSON line `{"url","pid"}` once ready, answers each `memory` line on stdin with one
 * JSON line of `process.memoryUsage()` before and after a full GC (run with --expose-gc), and
 * closes the platform when stdin ends or on SIGTERM.
 */
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { startLocalPlatform } from '../../lib/local/platform.ts';

const options = z
  .object({
    dataDir: z.string().min(1),
    runtimeSpares: z.number().int().min(0).optional(),
    runtimeIdleTimeoutMs: z.number().int().positive().optional(),
    /** Settings on top of the bench's own environment (e.g. a module's limits). */
    env: z.record(z.string(), z.string()).optional(),
  })
  .parse(JSON.parse(process.argv[2] ?? '{}'));

const { env, ...rest } = options;
const platform = await startLocalPlatform({ port: 0, host: '127.0.0.1', logLevel: 'silent', ...rest, ...(env ? { env: { ...process.env, ...env } } : {}) });
let closing: Promise<void> | null = null;
const close = () => {
  closing ??= platform.close().then(() => process.exit(0));
  return closing;
};
process.once('SIGTERM', () => void close());

const gc = (globalThis as { gc?: () => void }).gc;
const lines = createInterface({ input: process.stdin });
lines.on('line', (line) => {
  if (line.trim() !== 'memory') return;
  const before = process.memoryUsage();
  gc?.();
  process.stdout.write(`${JSON.stringify({ before, after: process.memoryUsage() })}\n`);
});
lines.once('close', () => void close());
process.stdout.write(`${JSON.stringify({ url: platform.url, pid: process.pid })}\n`);

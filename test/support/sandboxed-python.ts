/**
 * Running Python directly in an OS sandbox (functions/runtimes/os-sandbox.ts), without a runtime:
 * what the sandbox tests use to see what the operating system allows, whatever the language layers say.
 */
import { spawnPlan, type SpawnPlan } from '../../functions/runtimes/os-sandbox.ts';

/** Runs a planned process to its end: its stdout, or a rejection with its exit code and stderr. */
export function runPlan(plan: SpawnPlan): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawnPlan(plan, null);
    let out = '';
    let err = '';
    child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
    child.stderr!.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`sandboxed process exited ${code}: ${err.slice(-500)}`))));
  });
}

/**
 * The local platform's last resort: in a real Node process, a throw from a timer's callback and a
 * rejection no one handles are logged, and the process carries on instead of exiting.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

/** Runs `source` (TypeScript, from the repository root) in a fresh Node process; its exit code and output. */
function runNode(source: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '--eval', source], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const SCRIPT = (guarded: boolean) => `
  import { createLogger } from './functions/core/logger.ts';
  import { keepRunningOnUncaughtErrors } from './lib/local/last-resort.ts';
  if (${guarded}) keepRunningOnUncaughtErrors(createLogger('info', {}, (line) => console.log(line)));
  setTimeout(() => { throw new Error('thrown in a timer'); }, 1);
  setTimeout(() => void Promise.reject(new Error('rejected, unhandled')), 2);
  setTimeout(() => console.log('still serving'), 50);
`;

describe('the last resort of the local platform process', () => {
  it('logs an uncaught exception and an unhandled rejection, and the process carries on', async () => {
    // Act
    const guarded = await runNode(SCRIPT(true));
    const unguarded = await runNode(SCRIPT(false));

    // Assess: without it the process dies at the first throw (what the guard changes); with it, both are logged and it goes on
    expect(unguarded.code).not.toBe(0);
    expect(unguarded.stdout).not.toContain('still serving');
    expect(guarded.code).toBe(0);
    const lines = guarded.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: string });
    expect(lines.map((line) => line.level)).toEqual(['error', 'error']);
    expect(guarded.stdout).toContain('thrown in a timer');
    expect(guarded.stdout).toContain('rejected, unhandled');
    expect(guarded.stdout).toContain('still serving');
  });
});

/**
 * `npm test` piped (CI logs, `| tee`) prints plain text: no colour escape codes unless the caller
 * asks for them with FORCE_COLOR. Runs the real runner on one small test file.
 */
import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;

/** The runner's stdout, piped, with the given colour variables and none inherited from this run. */
function runPiped(colour: Record<string, string>, args = ['test/unit/not-found.test.ts']): Promise<{ code: number | null; stdout: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(VITEST|NO_COLOR$|FORCE_COLOR$|FORCE_TTY$|STRANDS_PYTHON$)/.test(name)));
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/run-all.ts', ...args], {
    cwd: root,
    env: { ...env, TERM: 'xterm', ...colour },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout }));
  });
}

describe('npm test piped', () => {
  it('prints no colour codes, and its closing tally', { timeout: 120_000 }, async () => {
    const plain = await runPiped({});
    expect(plain.code).toBe(0);
    expect(plain.stdout).toMatch(/2 passed, 0 failed\n$/);
    expect(plain.stdout).not.toContain('\x1b[');
  });

  it('keeps colour when FORCE_COLOR asks for it', { timeout: 120_000 }, async () => {
    const coloured = await runPiped({ FORCE_COLOR: '1' });
    expect(coloured.code).toBe(0);
    expect(coloured.stdout).toContain('\x1b[');
  });
});

describe('npm run test:frameworks without STRANDS_PYTHON', () => {
  it('says in one line that the tier was skipped, why, and how to build its environment', { timeout: 120_000 }, async () => {
    // Act
    const run = await runPiped({}, ['--frameworks']);
    // Assess
    expect(run.code).toBe(0);
    expect(run.stdout.trimEnd().split('\n')).toEqual([
      expect.stringMatching(/^Framework tier skipped: STRANDS_PYTHON is not set .*\.\.\/shared\/frameworks\/README\.md/),
    ]);
  });
});

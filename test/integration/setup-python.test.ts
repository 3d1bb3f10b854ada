import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** `npm run setup:python` as a user runs it; PyPI is out of reach here, so only its refusals and failures are tested. */
function setup(args: string[], env: Record<string, string> = {}) {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'bin/setup-python.ts', ...args], {
    cwd: new URL('../..', import.meta.url),
    encoding: 'utf8',
    env: { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? '', ...env },
    timeout: 120_000,
  });
  return { code: result.status, stdout: result.stdout, stderr: result.stderr };
}

describe('npm run setup:python', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'setup-python-'));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('shows its usage with --help', () => {
    const result = setup(['--help']);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Usage: npm run setup:python');
  });

  it('refuses an unknown option with its usage', () => {
    const result = setup(['--pyton', 'python3']);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("Unknown option '--pyton'");
    expect(result.stderr).toContain('Usage: npm run setup:python');
  });

  it('refuses an interpreter that does not exist, saying what to install, and creates nothing', () => {
    const venv = join(dir, 'missing');
    const result = setup(['--python', '/nonexistent/python3.12', '--venv', venv]);
    expect(result.code).toBe(1);
    expect(result.stderr.trim()).toBe(
      'Cannot set up Python: /nonexistent/python3.12 was not found; install Python 3.11 or 3.12 (e.g. apt-get install python3.11, or pyenv install 3.12) or set PYTHON=/path/to/python3.11+',
    );
    expect(existsSync(venv)).toBe(false);
  });

  it('takes the interpreter from PYTHON when --python is not given', () => {
    const result = setup(['--venv', join(dir, 'from-env')], { PYTHON: '/nonexistent/from-env' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('/nonexistent/from-env was not found');
  });

  it('says pip needs the package index when it cannot be reached', async () => {
    // An index on a loopback port nobody listens on: pip fails at once, as it would offline.
    const port = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    const venv = join(dir, 'offline');
    const result = setup(['--python', 'python3', '--venv', venv], {
      PIP_INDEX_URL: `http://127.0.0.1:${port}/simple`,
      PIP_RETRIES: '0',
      PIP_TIMEOUT: '2',
      PIP_NO_CACHE_DIR: '1',
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^Using \/\S+ \(Python 3\.\d+\.\d+\)$/m);
    expect(existsSync(join(venv, 'bin', 'python'))).toBe(true);
    expect(result.stderr).toContain(
      'pip could not install the requirements: this needs access to the Python package index (pypi.org) or a mirror set in PIP_INDEX_URL (exit code 1)',
    );
  }, 120_000);
});

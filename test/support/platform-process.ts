import { spawn } from 'node:child_process';

/**
 * The local platform as its own process (`npm start`'s launcher, or `bin/local.ts` under tsx), as a
 * user starts it: `ready` resolves with the URL it prints, `exited` with its exit code; `output()`
 * is what it printed so far. A test that expects a failed start need not await `ready`.
 */
export function spawnPlatform(args: readonly string[], options: { readonly cwd: string; readonly env: Readonly<Record<string, string>> }) {
  const child = spawn(process.execPath, ['--openssl-legacy-provider', ...args], {
    cwd: options.cwd,
    env: { ...userEnvironment(), LOG_LEVEL: 'warn', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const ready = new Promise<string>((resolve, reject) => {
    child.stdout.on('data', () => {
      const url = /Platform ready at (\S+)/.exec(stdout)?.[1];
      if (url) resolve(url);
    });
    void exited.then((code) => reject(new Error(`exited with ${code}:\n${stdout}\n${stderr}`)));
  });
  ready.catch(() => undefined);
  const stop = async () => {
    child.kill('SIGTERM');
    return exited;
  };
  return { child, exited, ready, stop, output: () => ({ stdout, stderr }) };
}

/**
 * The test process's environment without what vitest adds for Vite (`BASE_URL=/`, `MODE`, `DEV`,
 * `PROD`, `SSR`): `BASE_URL` is also a platform setting, which a user's shell would not hold as `/`.
 */
export function userEnvironment(): NodeJS.ProcessEnv {
  const { BASE_URL: _base, MODE: _mode, DEV: _dev, PROD: _prod, SSR: _ssr, ...rest } = process.env;
  return rest;
}

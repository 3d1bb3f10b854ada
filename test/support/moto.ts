import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/**
 * True when the moto AWS API server can be started here (it is installed in this machine image).
 * Where the cloud adapters' tests must run (CI, or REQUIRE_MOTO=1) a missing moto throws instead,
 * so those files fail rather than skip.
 */
export function motoAvailable(): boolean {
  const found = spawnSync('python3', ['-c', 'import moto.server'], { encoding: 'utf8' });
  if (found.status === 0) return true;
  if (process.env['CI'] === 'true' || process.env['REQUIRE_MOTO'] === '1')
    throw new Error(
      `moto is required here (CI or REQUIRE_MOTO=1), but python3 cannot import moto.server: ${found.error?.message ?? found.stderr.trim()}. Install it: python3 -m pip install "moto[server]"`,
    );
  return false;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => resolve(port));
    });
  });
}

export interface MotoServer {
  readonly endpoint: string;
  stop(): Promise<void>;
}

/** Starts `python3 -m moto.server` on a free loopback port and waits until it answers. */
export async function startMoto(): Promise<MotoServer> {
  const port = await freePort();
  const child: ChildProcess = spawn('python3', ['-m', 'moto.server', '-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const endpoint = `http://127.0.0.1:${port}`;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Bounded wait: moto starts in about a second.
  for (let attempt = 0; attempt < 150; attempt++) {
    if (child.exitCode !== null) throw new Error('moto server exited during start');
    try {
      const res = await fetch(`${endpoint}/moto-api/`);
      if (res.status < 500) break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (attempt === 149) throw new Error('moto server did not start within 15 s');
  }
  return {
    endpoint,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Client settings for the real AWS SDK pointed at moto. */
export function motoClientConfig(endpoint: string) {
  return { endpoint, region: 'us-east-1', credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' } };
}

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/**
 * True when the moto AWS API server can be started here (it is installed in this machine image).
 * Where the cloud adapters' tests must run (CI, or REQUIRE_MOTO=1) a missing moto throws instead,
 * so those files fail rather than skip.
 */
export function motoAvailable(): boolean {
  // Found, not imported: importing moto costs its Python about 1.5 s of CPU, twice per file with
  // the server's own start. A moto that is found but broken fails startMoto, so its tests fail.
  const found = spawnSync('python3', ['-c', MOTO_SERVER_FOUND], { encoding: 'utf8' });
  if (found.status === 0) return true;
  if (process.env['CI'] === 'true' || process.env['REQUIRE_MOTO'] === '1')
    throw new Error(
      `moto is required here (CI or REQUIRE_MOTO=1), but python3 does not find moto's server: ${found.error?.message ?? found.stderr.trim()}. Install it: python3 -m pip install "moto[server]"`,
    );
  return false;
}

/** Exits 0 when python3 finds moto and the packages its server imports (the `server` extra), naming any missing on stderr. */
const MOTO_SERVER_FOUND = [
  'import importlib.util, sys',
  "missing = [m for m in ('moto', 'flask', 'flask_cors', 'werkzeug') if importlib.util.find_spec(m) is None]",
  "sys.exit('missing: ' + ', '.join(missing) if missing else 0)",
].join('\n');

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
  // Until it answers or exits: about a second on an idle machine, over 15 s on a loaded one, so no
  // limit of its own (the caller's hook timeout guards against a hang).
  for (;;) {
    if (child.exitCode !== null) throw new Error('moto server exited during start');
    try {
      const res = await fetch(`${endpoint}/moto-api/`);
      if (res.status < 500) break;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
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

import type { AreaModule } from '../../lib/manifest/types.ts';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IdentityVerifier } from '../../functions/core/auth/credentials.ts';
import type { SecretReader } from '../../functions/core/secret-reader.ts';
import type { ImportHandlerModule } from '../../lib/local/handlers.ts';
import { ADMIN_TOKEN_FILE, startLocalPlatform, type LocalPlatformOptions, type RunningPlatform } from '../../lib/local/platform.ts';
import { keepStoresProcess, takeStoresProcess } from './stores-pool.ts';

export interface ApiResponse<T = any> {
  readonly status: number;
  readonly headers: Headers;
  readonly body: T;
  readonly text: string;
}

export interface ApiOptions {
  readonly token?: string;
  readonly body?: unknown;
  /** Sent as-is instead of JSON-encoding `body`. */
  readonly rawBody?: string | Buffer;
  readonly headers?: Record<string, string>;
}

/** System time plus an offset the test moves forward. */
export class SteppableClock {
  private offsetMs = 0;
  now(): number {
    return Date.now() + this.offsetMs;
  }
  advance(ms: number): void {
    this.offsetMs += ms;
  }
  /** Moves to just after the start of the next `windowMs` window, so a fixed-window test never straddles two. */
  alignToWindow(windowMs: number): void {
    this.offsetMs += windowMs - (this.now() % windowMs) + 1;
  }
}

export interface TestPlatform {
  readonly url: string;
  /** The site host's origin: its own port (null when no area serves sites). */
  readonly siteUrl: string | null;
  readonly dataDir: string;
  readonly adminToken: string;
  readonly running: RunningPlatform;
  readonly clock: SteppableClock;
  /** One HTTP call to the platform, as a client would make it. */
  api<T = any>(method: string, path: string, options?: ApiOptions): Promise<ApiResponse<T>>;
  /** Stops the platform; the data directory stays for a restart unless `removeData`. */
  stop(options?: { removeData?: boolean }): Promise<void>;
}

/** Starts the real local platform on a random port with a temporary (or given) DATA_DIR. */
export async function startTestPlatform(
  options: {
    dataDir?: string;
    env?: Record<string, string>;
    logLines?: string[];
    identity?: IdentityVerifier;
    secrets?: SecretReader;
    runtimePythonPath?: string[];
    /** The interpreter for user code (default `python3` on PATH, as `npm start` without PYTHON). */
    python?: string;
    mcpEgressAllowHosts?: string[];
    /**
     * Runtime servers and voice session processes kept started ahead of need (the platform's
     * RUNTIME_SPARES and VOICE_SPARES). None unless given: the two cost about 2.4 s of CPU at
     * every start (1.5 s of it in the sandboxed Pythons that import the runtime), which a file
     * that runs no user code paid for nothing; a file that runs some starts its runtime on first use instead. The
     * spares' own behaviour is tested on the compute adapter (compute-local.test.ts), and the
     * benches pass the platform's defaults (`DEFAULT_SPARES` of lib/local/platform.ts) to measure
     * it as `npm start` runs it.
     */
    runtimeSpares?: number;
    voiceSpares?: number;
    /** How user code is contained (the platform's SANDBOX_* settings). */
    sandbox?: LocalPlatformOptions['sandbox'];
    /** Areas to serve instead of the manifest's (a sample area added to them). */
    areas?: readonly AreaModule[];
    /** How handler modules are imported (lib/local/handlers.ts); by file path unless given. */
    importHandlerModule?: ImportHandlerModule;
  } = {},
): Promise<TestPlatform> {
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'platform-test-')));
  const clock = new SteppableClock();
  // Settings come only from the test, never from the developer's shell.
  const logLines = options.logLines;
  const running = await startLocalPlatform({
    port: 0,
    host: '127.0.0.1',
    dataDir,
    clock,
    // Tests that send bursts from one caller (60 chats to reach a rate limit, 20 concurrent updates
    // of one record) check other rules than the fair share, which its own tests set
    // (test/integration/fair-share.test.ts): the shares are off unless a test's env sets them.
    env: { TENANT_CONCURRENCY: '0', ANONYMOUS_CONCURRENCY: '0', ...options.env },
    // Silent unless the test collects the lines (then everything, to check what is never logged).
    logLevel: logLines ? 'debug' : 'silent',
    ...(logLines ? { logWriter: (line: string) => logLines.push(line) } : {}),
    ...(options.identity ? { identity: options.identity } : {}),
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.runtimePythonPath ? { runtimePythonPath: options.runtimePythonPath } : {}),
    ...(options.python !== undefined ? { python: options.python } : {}),
    ...(options.mcpEgressAllowHosts ? { mcpEgressAllowHosts: options.mcpEgressAllowHosts } : {}),
    runtimeSpares: options.runtimeSpares ?? 0,
    voiceSpares: options.voiceSpares ?? 0,
    ...(options.sandbox ? { sandbox: options.sandbox } : {}),
    ...(options.areas ? { areas: options.areas } : {}),
    ...(options.importHandlerModule ? { importHandlerModule: options.importHandlerModule } : {}),
    storesProcess: await takeStoresProcess(),
    keepStoresProcess,
  });
  const adminToken = (await readFile(join(dataDir, ADMIN_TOKEN_FILE), 'utf8')).trim();
  return {
    url: running.url,
    siteUrl: running.siteUrl,
    dataDir,
    adminToken,
    running,
    clock,
    api: (method, path, apiOptions) => callApi(running.url, method, path, apiOptions),
    async stop({ removeData = false } = {}) {
      await running.close();
      if (removeData) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function callApi<T = any>(baseUrl: string, method: string, path: string, options: ApiOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const response = await fetch(baseUrl + path, { method, headers, body });
  const text = await response.text();
  let parsed: unknown = text;
  if ((response.headers.get('content-type') ?? '').includes('json') && text.length > 0) parsed = JSON.parse(text);
  return { status: response.status, headers: response.headers, body: parsed as T, text };
}

/** Creates a user through the admin API and returns its credentials. */
export async function createUser(platform: TestPlatform, input: { alias?: string; credits?: number; email?: string } = {}) {
  const res = await platform.api<{ data: { userId: string; alias: string | null; token: string; tokenId: string; secretKey: string } }>(
    'POST',
    '/admin/users',
    {
      token: platform.adminToken,
      body: input,
    },
  );
  if (res.status !== 201) throw new Error(`creating user failed: ${res.status} ${res.text}`);
  return res.body.data;
}

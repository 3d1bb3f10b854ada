/**
 * The egress proxy sandboxed user code goes out through (functions/runtimes/egress-proxy.ts), over
 * real sockets: the proxy on Unix sockets, a loopback HTTP echo server and a loopback TCP echo
 * server upstream. Only name resolution is injected, so that names can point anywhere.
 */
import { once } from 'node:events';
import { lstat, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../functions/core/logger.ts';
import { createEgressProxy, type EgressLookup, type EgressProxy, type EgressProxyOptions } from '../../functions/runtimes/egress-proxy.ts';

/** Rejects when `promise` has not settled within `ms`, so that a hang fails its test quickly. */
function within<T>(promise: Promise<T>, what: string, ms = 5000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no ${what} within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const basic = (credential: string) => `Basic ${Buffer.from(`run:${credential}`).toString('base64')}`;

/** What the HTTP echo server saw. */
interface Echoed {
  readonly method: string;
  readonly url: string;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

async function listenOnLoopback(server: net.Server): Promise<number> {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as net.AddressInfo).port;
}

/** Answers every request with what it received, as JSON, without a content-length (so chunked). */
async function startHttpEcho(): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const echoed: Echoed = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(parts).toString('utf8') };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(echoed));
    });
  });
  return { server, port: await listenOnLoopback(server) };
}

/** Sends back every byte it receives and ends when its peer ends. */
async function startTcpEcho(): Promise<{ server: net.Server; port: number }> {
  const server = net.createServer((socket) => {
    socket.on('error', () => socket.destroy());
    socket.pipe(socket);
  });
  return { server, port: await listenOnLoopback(server) };
}

interface Reply {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** One plain-HTTP request through the proxy at `socketPath`, as an HTTP_PROXY client sends it. */
function viaProxy(
  socketPath: string,
  url: string,
  {
    credential,
    method = 'GET',
    headers = {},
    body,
  }: { credential?: string; method?: string; headers?: Record<string, string>; body?: string | readonly string[] } = {},
): Promise<Reply> {
  const sent = new Promise<Reply>((resolve, reject) => {
    const request = http.request({
      socketPath,
      path: url,
      method,
      agent: false,
      headers: { ...(credential === undefined ? {} : { 'proxy-authorization': basic(credential) }), ...headers },
    });
    request.on('error', reject);
    request.on('response', (response) => {
      const parts: Buffer[] = [];
      response.on('data', (chunk: Buffer) => parts.push(chunk));
      response.on('error', reject);
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(parts).toString('utf8') }));
    });
    // A body given in pieces goes out chunked, as a streaming client sends it.
    if (Array.isArray(body)) {
      for (const piece of body) request.write(piece);
      request.end();
    } else request.end(body);
  });
  return within(sent, `answer to ${method} ${url}`);
}

const echoed = (reply: Reply): Echoed => JSON.parse(reply.body) as Echoed;

/** Everything a raw socket received, and waits on it. */
function track(socket: net.Socket) {
  let data = Buffer.alloc(0);
  let ended = false;
  const waiters = new Set<() => void>();
  const wake = () => {
    for (const waiter of [...waiters]) waiter();
  };
  socket.on('data', (chunk: Buffer) => {
    data = Buffer.concat([data, chunk]);
    wake();
  });
  for (const event of ['end', 'close', 'error']) {
    socket.on(event, () => {
      ended = true;
      wake();
    });
  }
  const wait = (done: () => boolean, failed: () => boolean, what: string) =>
    within(
      new Promise<string>((resolve, reject) => {
        const check = () => {
          if (done()) resolve(data.toString('utf8'));
          else if (failed()) reject(new Error(`the connection ended before ${what}: ${data.toString('utf8')}`));
          else return;
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      }),
      what,
    );
  return {
    /** Resolves with all text received once `test` holds for it. */
    until: (test: (text: string) => boolean, what: string) =>
      wait(
        () => test(data.toString('utf8')),
        () => ended,
        what,
      ),
    /** Resolves with all text received once the peer has ended or closed the connection. */
    ended: () =>
      wait(
        () => ended,
        () => false,
        'the end of the connection',
      ),
  };
}

/** A raw CONNECT through the proxy; on 200 `socket` is the open tunnel. */
async function connectVia(socketPath: string, target: string, credential?: string) {
  const socket = net.connect({ path: socketPath });
  const received = track(socket);
  await within(once(socket, 'connect'), 'connection to the proxy');
  const auth = credential === undefined ? '' : `Proxy-Authorization: ${basic(credential)}\r\n`;
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
  const head = await received.until((text) => text.includes('\r\n\r\n'), `an answer to CONNECT ${target}`);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
  return { status, head, socket, received };
}

async function exists(path: string): Promise<boolean> {
  return lstat(path).then(
    () => true,
    () => false,
  );
}

let dir: string;
let upstream: { server: http.Server; port: number };
let other: { server: http.Server; port: number };
let tcpEcho: { server: net.Server; port: number };
/** A loopback port nothing listens on. */
let downPort: number;

/** What the injected resolver answers; names not in it fail with ENOTFOUND. */
const answers = new Map<string, readonly string[]>();
/** Names the proxy asked the resolver for, in order. */
const lookups: string[] = [];
const lookup: EgressLookup = async (hostname) => {
  lookups.push(hostname);
  if (hostname === 'slow.example.test') return new Promise(() => {});
  const found = answers.get(hostname);
  if (found === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
  return found.map((address) => ({ address, family: net.isIPv6(address) ? 6 : 4 }));
};

let proxy: EgressProxy;
let logs: string[];
let aSock: string;
let bSock: string;

async function startProxy(options: Partial<EgressProxyOptions> = {}): Promise<void> {
  logs = [];
  proxy = createEgressProxy({ logger: createLogger('debug', {}, (line) => logs.push(line)), lookup, ...options });
  aSock = join(dir, 'a.sock');
  bSock = join(dir, 'b.sock');
  await proxy.listen(aSock, 'A');
  await proxy.listen(bSock, 'B');
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'egress-proxy-'));
  upstream = await startHttpEcho();
  other = await startHttpEcho();
  tcpEcho = await startTcpEcho();
  const probe = net.createServer();
  downPort = await listenOnLoopback(probe);
  await new Promise((resolve) => probe.close(resolve));
});

afterAll(async () => {
  upstream.server.closeAllConnections();
  other.server.closeAllConnections();
  await Promise.all([upstream.server, other.server, tcpEcho.server].map((server) => new Promise((resolve) => server.close(resolve))));
  await rm(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  answers.clear();
  lookups.length = 0;
  await startProxy();
});

afterEach(async () => {
  await proxy.close();
});

describe('plain HTTP', () => {
  it('forwards a GET to an allowed host:port and streams the answer back', async () => {
    // Prepare
    const run = proxy.openRun('A', { allowHosts: [`127.0.0.1:${upstream.port}`] });

    // Act
    const reply = await viaProxy(aSock, `http://127.0.0.1:${upstream.port}/hello?x=1`, { credential: run.credential });

    // Assess
    expect(reply.status).toBe(200);
    expect(echoed(reply)).toMatchObject({ method: 'GET', url: '/hello?x=1', body: '' });
    expect(echoed(reply).headers).toMatchObject({ host: `127.0.0.1:${upstream.port}`, connection: 'close' });
  });

  it('streams a large chunked POST body to the upstream and its answer back', async () => {
    // Prepare
    const run = proxy.openRun('A', { allowHosts: [`127.0.0.1:${upstream.port}`] });
    const pieces = Array.from({ length: 64 }, (_, i) => String.fromCharCode(97 + (i % 26)).repeat(32 * 1024));
    const body = pieces.join('');

    // Act
    const reply = await viaProxy(aSock, `http://127.0.0.1:${upstream.port}/upload`, { credential: run.credential, method: 'POST', body: pieces });

    // Assess
    expect(reply.status).toBe(200);
    const seen = echoed(reply);
    expect(seen.method).toBe('POST');
    expect(seen.headers['transfer-encoding']).toBe('chunked');
    expect(seen.body.length).toBe(body.length);
    expect(seen.body === body).toBe(true);
  });

  it('adds the platform headers to calls to platform hosts only, without overriding the request', async () => {
    // Prepare
    const run = proxy.openRun('A', {
      allowHosts: [`127.0.0.1:${upstream.port}`, `127.0.0.1:${other.port}`],
      platformCalls: { hosts: [`127.0.0.1:${upstream.port}`], headers: { authorization: 'Bearer run-token', 'x-lineage': 'lineage-1' } },
    });

    // Act
    const toPlatform = await viaProxy(aSock, `http://127.0.0.1:${upstream.port}/mcp`, { credential: run.credential });
    const elsewhere = await viaProxy(aSock, `http://127.0.0.1:${other.port}/`, { credential: run.credential });
    const ownAuth = await viaProxy(aSock, `http://127.0.0.1:${upstream.port}/mcp`, { credential: run.credential, headers: { Authorization: 'Bearer mine' } });

    // Assess
    expect(echoed(toPlatform).headers).toMatchObject({ authorization: 'Bearer run-token', 'x-lineage': 'lineage-1' });
    expect(echoed(elsewhere).headers.authorization).toBeUndefined();
    expect(echoed(elsewhere).headers['x-lineage']).toBeUndefined();
    expect(echoed(ownAuth).headers).toMatchObject({ authorization: 'Bearer mine', 'x-lineage': 'lineage-1' });
  });

  it('never forwards Proxy-Authorization or hop-by-hop headers', async () => {
    // Prepare
    const run = proxy.openRun('A', { allowHosts: [`127.0.0.1:${upstream.port}`] });
    const headers = { 'Proxy-Connection': 'keep-alive', 'Keep-Alive': 'timeout=5', Connection: 'keep-alive, X-Hop', 'X-Hop': 'one hop only', 'X-Kept': 'kept' };

    // Act
    const reply = await viaProxy(aSock, `http://127.0.0.1:${upstream.port}/`, { credential: run.credential, headers });

    // Assess
    const seen = echoed(reply).headers;
    expect(seen['x-kept']).toBe('kept');
    for (const name of ['proxy-authorization', 'proxy-connection', 'keep-alive', 'x-hop']) expect(seen[name]).toBeUndefined();
    expect(JSON.stringify(seen)).not.toContain(run.credential);
  });

  it('answers 400 to a request that is not an absolute http:// URL', async () => {
    // Prepare
    const run = proxy.openRun('A', { allowHosts: [`127.0.0.1:${upstream.port}`] });

    // Act
    const originForm = await viaProxy(aSock, '/hello', { credential: run.credential });
    const https = await viaProxy(aSock, `https://127.0.0.1:${upstream.port}/`, { credential: run.credential });

    // Assess
    expect(originForm.status).toBe(400);
    expect(https.status).toBe(400);
  });
});

describe('CONNECT tunnels', () => {
  it('carries bytes both ways to an allowed host:port and passes a half-close through', async () => {
    // Prepare
    const run = proxy.openRun('A', { allowHosts: [`127.0.0.1:${tcpEcho.port}`] });
    const tunnel = await connectVia(aSock, `127.0.0.1:${tcpEcho.port}`, run.credential);

    // Act
    tunnel.socket.write('ping');
    const echoedBack = await tunnel.received.until((text) => text.endsWith('ping'), 'the echo');
    tunnel.socket.end('pong');
    const all = await tunnel.received.ended();

    // Assess
    expect(tunnel.status).toBe(200);
    expect(echoedBack).toMatch(/^HTTP\/1\.1 200 .*\r\n\r\nping$/s);
    expect(all.endsWith('\r\n\r\npingpong')).toBe(true);
  });
});

describe('allowlist', () => {
  it('refuses a host that is not on the list with a 403 naming it, for both kinds, and logs it without the credential', async () => {
    // Prepare
    const run = proxy.openRun('A', { allowHosts: [`127.0.0.1:${upstream.port}`] });

    // Act
    const plain = await viaProxy(aSock, `http://127.0.0.1:${other.port}/`, { credential: run.credential });
    const tunnel = await connectVia(aSock, `127.0.0.1:${other.port}`, run.credential);
    const tunnelBody = await tunnel.received.ended();

    // Assess
    expect(plain.status).toBe(403);
    expect(plain.body).toContain(`127.0.0.1:${other.port} is not allowed for this run`);
    expect(tunnel.status).toBe(403);
    expect(tunnelBody).toContain(`127.0.0.1:${other.port} is not allowed for this run`);
    const refusals = logs
      .map((line) => JSON.parse(line) as Record<string, unknown>)
      .filter((entry) => entry.message === 'egress refused: host not allowed for this run');
    expect(refusals).toHaveLength(2);
    expect(refusals[0]).toMatchObject({ level: 'info', tenantKey: 'A', host: `127.0.0.1:${other.port}` });
    expect(logs.join('\n')).not.toContain(run.credential);
  });

  it('lets a wildcard match any subdomain on the default port, case-insensitively, but not the apex or other ports', async () => {
    // Prepare (allowed names are resolved; unknown ones fail to resolve, which answers 502, not 403)
    const run = proxy.openRun('A', { allowHosts: ['*.Example.test'] });
    const connect = async (target: string) => (await connectVia(aSock, target, run.credential)).status;

    // Act
    const statuses = {
      subdomain: await connect('sub.example.test:443'),
      deeper: await connect('a.b.example.test:443'),
      upperCase: await connect('SUB.EXAMPLE.TEST:443'),
      apex: await connect('example.test:443'),
      otherPort: await connect('sub.example.test:8443'),
      lookalike: await connect('sub.notexample.test:443'),
      plainSubdomain: (await viaProxy(aSock, 'http://sub.example.test/', { credential: run.credential })).status,
      plainApex: (await viaProxy(aSock, 'http://example.test/', { credential: run.credential })).status,
      plainTlsPort: (await viaProxy(aSock, 'http://sub.example.test:443/', { credential: run.credential })).status,
    };

    // Assess
    expect(statuses).toEqual({
      subdomain: 502,
      deeper: 502,
      upperCase: 502,
      apex: 403,
      otherPort: 403,
      lookalike: 403,
      plainSubdomain: 502,
      plainApex: 403,
      plainTlsPort: 403,
    });
    expect(lookups).toEqual(['sub.example.test', 'a.b.example.test', 'sub.example.test', 'sub.example.test']);
  });

  it('lets `*` reach any public host on the default ports, never a private address or another port', async () => {
    // Prepare (a name the resolver does not know is allowed, then fails to resolve: 502, and no
    // connection ever leaves this machine)
    answers.set('sneaky.example.test', ['127.0.0.1']);
    const run = proxy.openRun('A', { allowHosts: ['*'] });

    // Act
    const statuses = {
      publicName: (await connectVia(aSock, 'unknown.example.test:443', run.credential)).status,
      privateName: (await connectVia(aSock, 'sneaky.example.test:443', run.credential)).status,
      loopbackLiteral: (await connectVia(aSock, `127.0.0.1:${tcpEcho.port}`, run.credential)).status,
      otherPort: (await connectVia(aSock, 'unknown.example.test:8443', run.credential)).status,
    };

    // Assess
    expect(statuses).toEqual({ publicName: 502, privateName: 403, loopbackLiteral: 403, otherPort: 403 });
  });

  it('matches bare host entries on the default port and IPv6 entries in brackets', async () => {
    // Prepare
    const run = proxy.openRun('A', { allowHosts: ['api.example.test', `[::1]:${downPort}`] });

    // Act
    const bare = (await connectVia(aSock, 'api.example.test:443', run.credential)).status;
    const bareOtherPort = (await connectVia(aSock, 'api.example.test:444', run.credential)).status;
    const subdomainOfBare = (await connectVia(aSock, 'x.api.example.test:443', run.credential)).status;
    const ipv6 = (await connectVia(aSock, `[0:0::1]:${downPort}`, run.credential)).status;

    // Assess (502: allowed, then nothing to reach)
    expect({ bare, bareOtherPort, subdomainOfBare, ipv6 }).toEqual({ bare: 502, bareOtherPort: 403, subdomainOfBare: 403, ipv6: 502 });
  });

  it.each(['127.0.0.1', '10.1.2.3', '172.16.5.4', '192.168.1.1', '100.64.0.1', '169.254.169.254', '0.0.0.0', '::1', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1'])(
    'refuses a name that resolves to the private address %s, for both kinds',
    async (address) => {
      // Prepare
      answers.set('internal.example.test', [address]);
      answers.set('plain.test', ['203.0.113.7', address]);
      const run = proxy.openRun('A', { allowHosts: ['*.example.test', 'plain.test'] });

      // Act
      const plain = await viaProxy(aSock, 'http://internal.example.test/', { credential: run.credential });
      const tunnel = await connectVia(aSock, 'internal.example.test:443', run.credential);
      const mixed = await connectVia(aSock, 'plain.test:443', run.credential);

      // Assess
      expect(plain.status).toBe(403);
      expect(plain.body).toContain('internal.example.test:80 resolves to a private address');
      expect(tunnel.status).toBe(403);
      expect(mixed.status).toBe(403);
    },
  );
});

describe('credentials', () => {
  it('answers 407 with a Basic challenge without a credential or with a wrong one', async () => {
    // Prepare
    proxy.openRun('A', { allowHosts: [`127.0.0.1:${upstream.port}`] });
    const url = `http://127.0.0.1:${upstream.port}/`;

    // Act
    const none = await viaProxy(aSock, url);
    const wrong = await viaProxy(aSock, url, { credential: 'not-a-credential' });
    const notBasic = await viaProxy(aSock, url, { headers: { 'Proxy-Authorization': 'Bearer something' } });
    const tunnel = await connectVia(aSock, `127.0.0.1:${tcpEcho.port}`);

    // Assess
    for (const reply of [none, wrong, notBasic]) {
      expect(reply.status).toBe(407);
      expect(reply.headers['proxy-authenticate']).toBe('Basic realm="platform"');
    }
    expect(tunnel.status).toBe(407);
    expect(tunnel.head).toContain('Proxy-Authenticate: Basic realm="platform"');
  });

  it("refuses a tenant's credential on another tenant's socket", async () => {
    // Prepare
    const run = proxy.openRun('A', { allowHosts: [`127.0.0.1:${upstream.port}`, `127.0.0.1:${tcpEcho.port}`] });
    const url = `http://127.0.0.1:${upstream.port}/`;

    // Act
    const onB = await viaProxy(bSock, url, { credential: run.credential });
    const tunnelOnB = await connectVia(bSock, `127.0.0.1:${tcpEcho.port}`, run.credential);
    const onA = await viaProxy(aSock, url, { credential: run.credential });

    // Assess
    expect(onB.status).toBe(407);
    expect(tunnelOnB.status).toBe(407);
    expect(onA.status).toBe(200);
  });

  it('revokes a released credential at once and ends its open tunnels', async () => {
    // Prepare
    const run = proxy.openRun('A', { allowHosts: [`127.0.0.1:${upstream.port}`, `127.0.0.1:${tcpEcho.port}`] });
    const tunnel = await connectVia(aSock, `127.0.0.1:${tcpEcho.port}`, run.credential);

    // Act
    run.release();
    await tunnel.received.ended();
    const after = await viaProxy(aSock, `http://127.0.0.1:${upstream.port}/`, { credential: run.credential });

    // Assess
    expect(tunnel.status).toBe(200);
    expect(after.status).toBe(407);
  });

  it('makes each credential random, url-safe and at least 32 bytes long', () => {
    // Act
    const first = proxy.openRun('A', { allowHosts: [] }).credential;
    const second = proxy.openRun('A', { allowHosts: [] }).credential;

    // Assess
    expect(first).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    expect(second).not.toBe(first);
  });
});

describe('limits and failures', () => {
  it("answers 503 once a tenant's connections are all in use, without affecting other tenants", async () => {
    // Prepare
    await proxy.close();
    await startProxy({ maxConnectionsPerTenant: 1 });
    const runA = proxy.openRun('A', { allowHosts: [`127.0.0.1:${upstream.port}`, `127.0.0.1:${tcpEcho.port}`] });
    const runB = proxy.openRun('B', { allowHosts: [`127.0.0.1:${upstream.port}`] });
    // Finished requests give their slot back.
    const before = [
      await viaProxy(aSock, `http://127.0.0.1:${upstream.port}/`, { credential: runA.credential }),
      await viaProxy(aSock, `http://127.0.0.1:${upstream.port}/`, { credential: runA.credential }),
    ];
    const held = await connectVia(aSock, `127.0.0.1:${tcpEcho.port}`, runA.credential);

    // Act
    const plain = await viaProxy(aSock, `http://127.0.0.1:${upstream.port}/`, { credential: runA.credential });
    const tunnel = await connectVia(aSock, `127.0.0.1:${tcpEcho.port}`, runA.credential);
    const otherTenant = await viaProxy(bSock, `http://127.0.0.1:${upstream.port}/`, { credential: runB.credential });

    // Assess
    expect(before.map((reply) => reply.status)).toEqual([200, 200]);
    expect(held.status).toBe(200);
    expect(plain.status).toBe(503);
    expect(tunnel.status).toBe(503);
    expect(otherTenant.status).toBe(200);
    held.socket.destroy();
  });

  it('answers 502 when the upstream is down, for both kinds', async () => {
    // Prepare
    const run = proxy.openRun('A', { allowHosts: [`127.0.0.1:${downPort}`] });

    // Act
    const plain = await viaProxy(aSock, `http://127.0.0.1:${downPort}/`, { credential: run.credential });
    const tunnel = await connectVia(aSock, `127.0.0.1:${downPort}`, run.credential);
    const tunnelBody = await tunnel.received.ended();

    // Assess
    expect(plain.status).toBe(502);
    expect(plain.body).toContain(`could not connect to 127.0.0.1:${downPort}`);
    expect(tunnel.status).toBe(502);
    expect(tunnelBody).toContain('ECONNREFUSED');
  });

  it('answers 502 when reaching the upstream takes longer than the connect timeout', async () => {
    // Prepare
    await proxy.close();
    await startProxy({ connectTimeoutMs: 100 });
    const run = proxy.openRun('A', { allowHosts: ['slow.example.test'] });

    // Act
    const tunnel = await connectVia(aSock, 'slow.example.test:443', run.credential);
    const body = await tunnel.received.ended();

    // Assess
    expect(tunnel.status).toBe(502);
    expect(body).toContain('timed out after 100 ms');
  });

  it('closes a tunnel that stays idle', async () => {
    // Prepare
    await proxy.close();
    await startProxy({ idleTimeoutMs: 100 });
    const run = proxy.openRun('A', { allowHosts: [`127.0.0.1:${tcpEcho.port}`] });
    const tunnel = await connectVia(aSock, `127.0.0.1:${tcpEcho.port}`, run.credential);

    // Act
    const received = await tunnel.received.ended();

    // Assess
    expect(tunnel.status).toBe(200);
    expect(received).toMatch(/^HTTP\/1\.1 200 [^\r]*\r\n\r\n$/);
  });
});

describe('sockets', () => {
  it('makes the socket file reachable by the sandbox uid', async () => {
    // Act
    const mode = (await stat(aSock)).mode & 0o777;

    // Assess
    expect(mode).toBe(0o666);
  });

  it('replaces a stale socket file and refuses to replace anything else', async () => {
    // Prepare: a socket file no server listens on any more (renamed away from its server).
    const stale = join(dir, 'stale.sock');
    const abandoned = net.createServer();
    abandoned.listen(join(dir, 'abandoned.sock'));
    await once(abandoned, 'listening');
    await rename(join(dir, 'abandoned.sock'), stale);
    await new Promise((resolve) => abandoned.close(resolve));
    const regular = join(dir, 'regular.sock');
    await writeFile(regular, 'not a socket');
    const run = proxy.openRun('A', { allowHosts: [`127.0.0.1:${upstream.port}`] });

    // Act
    await proxy.listen(stale, 'A');
    const reply = await viaProxy(stale, `http://127.0.0.1:${upstream.port}/`, { credential: run.credential });
    const refused = proxy.listen(regular, 'A');

    // Assess
    expect(reply.status).toBe(200);
    await expect(refused).rejects.toThrow('exists and is not a socket');
    expect(await readFile(regular, 'utf8')).toBe('not a socket');
  });

  it('closes one listener and its socket file while the others keep serving', async () => {
    // Prepare
    const extra = join(dir, 'extra.sock');
    const listener = await proxy.listen(extra, 'A');
    const run = proxy.openRun('A', { allowHosts: [`127.0.0.1:${upstream.port}`] });

    // Act
    await listener.close();
    const reply = await viaProxy(aSock, `http://127.0.0.1:${upstream.port}/`, { credential: run.credential });

    // Assess
    expect(await exists(extra)).toBe(false);
    expect(reply.status).toBe(200);
  });

  it('close() ends open tunnels, removes the socket files and refuses later use', async () => {
    // Prepare
    const run = proxy.openRun('A', { allowHosts: [`127.0.0.1:${tcpEcho.port}`] });
    const tunnel = await connectVia(aSock, `127.0.0.1:${tcpEcho.port}`, run.credential);

    // Act
    await within(proxy.close(), 'close()');
    await tunnel.received.ended();

    // Assess
    expect(tunnel.status).toBe(200);
    expect(await exists(aSock)).toBe(false);
    expect(await exists(bSock)).toBe(false);
    await expect(proxy.listen(join(dir, 'late.sock'), 'A')).rejects.toThrow('closed');
    expect(() => proxy.openRun('A', { allowHosts: [] })).toThrow('closed');
  });
});

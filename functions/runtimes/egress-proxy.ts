/**
 * The platform's HTTP proxy for sandboxed user code (see os-sandbox.ts). A sandbox has no network
 * of its own: its one way out is this proxy, on a Unix socket bind-mounted into it (a forwarder
 * inside maps 127.0.0.1:<port> to that socket, so user code sees an ordinary `HTTP_PROXY`).
 *
 * Every request names its run by a credential in `Proxy-Authorization`. The proxy then lets it
 * reach only the run's `allowHosts`, refuses names that resolve to private addresses (so that a DNS
 * answer cannot aim a sandbox at the platform's own loopback ports), and adds the run's platform
 * headers (the owner's run token, the lineage) to its plain-HTTP calls to the platform's own hosts,
 * so those values exist outside the sandbox only. HTTPS goes through CONNECT tunnels the proxy
 * cannot read, so no header is ever added to them.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { LookupAddress } from 'node:dns';
import { lookup as dnsLookup } from 'node:dns/promises';
import { chmod, lstat, rm } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import { pipeline, type Duplex } from 'node:stream';
import { createLogger, type Logger } from '../core/logger.ts';

/** What one run may reach, and the headers the platform adds to its calls to the platform's own hosts. */
export interface EgressGrant {
  /**
   * `*` (any host whose addresses are public), `*.example.com` (any subdomain, not the apex),
   * `host` (that host) on the default port of the
   * request's kind (443 for CONNECT, 80 for plain HTTP), or `host:port` / `[v6]:port` for exactly
   * that address, which is how the platform's own local hosts are given and the only form that may
   * point at a private address.
   */
  readonly allowHosts: readonly string[];
  /**
   * Headers added to plain-HTTP requests to `hosts` (matched like `allowHosts`) unless the request
   * carries them already; they hold credentials that must never enter the sandbox.
   */
  readonly platformCalls?: { readonly hosts: readonly string[]; readonly headers: Readonly<Record<string, string>> };
}

/** Resolves a host name as `dns.promises.lookup(name, { all: true })` does; tests inject their own answers. */
export type EgressLookup = (hostname: string) => Promise<readonly LookupAddress[]>;

/** Tuning of an egress proxy; the defaults suit the local platform. */
export interface EgressProxyOptions {
  /** Receives refusals (at info, never a credential) and upstream failures (at debug). */
  readonly logger?: Logger;
  /** Longest time to resolve and connect to an upstream before answering 502 (default 10 s). */
  readonly connectTimeoutMs?: number;
  /** A tunnel or request with no traffic for this long is closed (default 5 min). */
  readonly idleTimeoutMs?: number;
  /**
   * Most tunnels and requests in flight at once per tenant (default 64); more are answered 503.
   * Each listener also accepts at most twice as many client connections plus a few (idle
   * keep-alive ones and ones still closing included) and drops the rest, so that no sandbox can
   * exhaust the platform's file descriptors.
   */
  readonly maxConnectionsPerTenant?: number;
  /** Name resolution for entries that are not an exact `host:port` (default `dns.promises.lookup`). */
  readonly lookup?: EgressLookup;
}

/** One sandbox's socket; the sandbox's process pool closes it with the process. */
export interface EgressListener {
  /** Stops accepting, ends the listener's connections and removes its socket file. */
  close(): Promise<void>;
}

/** A run's access through the proxy, valid until released. */
export interface EgressRun {
  /** Goes into the run's proxy URL (`http://run:<credential>@…`); treat it as a secret. */
  readonly credential: string;
  /** Revokes the credential at once and ends the run's open tunnels and requests. */
  release(): void;
}

/** The platform's egress proxy: one listener per sandbox, one credential per run. */
export interface EgressProxy {
  /**
   * Serves one sandbox of `tenantKey` on a Unix socket at `socketPath`, replacing a stale socket
   * file there. The socket is made mode 0o666 because the sandbox's uid differs from the
   * platform's; what keeps other sandboxes and users out is the directory holding it (made by
   * `OsSandbox.makeControlDir`, entered only by the platform and that sandbox), and a request still
   * needs a credential of this tenant's runs.
   */
  listen(socketPath: string, tenantKey: string): Promise<EgressListener>;
  /** Registers a run of `tenantKey`; its credential works only on that tenant's listeners. */
  openRun(tenantKey: string, grant: EgressGrant): EgressRun;
  /** Stops every listener and open connection and revokes every run; later `listen`/`openRun` calls fail. */
  close(): Promise<void>;
}

/** One `allowHosts` or `platformCalls.hosts` entry. */
interface HostRule {
  /** A lower-case host name or IP address (IPv6 without brackets); for a wildcard, the suffix `.example.com`. */
  readonly host: string;
  readonly wildcard: boolean;
  /** Null for the default port of the request's kind. */
  readonly port: number | null;
}

/**
 * How a request that matched a rule is connected: `direct` for an exact `host:port` entry (the
 * operator named that address, private or not), `resolve` for names whose addresses are checked.
 */
type Route = 'direct' | 'resolve';

interface Run {
  readonly tenantKey: string;
  readonly allow: readonly HostRule[];
  readonly platformHosts: readonly HostRule[];
  readonly platformHeaders: readonly (readonly [string, string])[];
  readonly exchanges: Set<Exchange>;
}

interface Listener {
  readonly tenantKey: string;
  readonly socketPath: string;
  readonly server: http.Server;
  readonly sockets: Set<net.Socket>;
  /** The socket file's inode, so that closing never removes a file someone else made since. */
  inode: number | null;
  closing: Promise<void> | null;
}

/** A tunnel or a plain request in flight; it holds one of its tenant's connection slots. */
interface Exchange {
  readonly listener: Listener;
  readonly run: Run;
  ended: boolean;
  /** Tears it down at once (its run was released, its listener or the proxy closed, it went idle). */
  readonly destroy: () => void;
}

/** Where a request goes. */
interface Target {
  /** Lower case, IPv6 without brackets. */
  readonly host: string;
  readonly port: number;
  /** `host:port` as messages and logs show it (IPv6 in brackets). */
  readonly label: string;
}

type Reached = { readonly kind: 'connected'; readonly socket: net.Socket } | { readonly kind: 'refused'; readonly status: number; readonly message: string };

const REALM = 'Basic realm="platform"';

/**
 * Addresses a name-based entry must not lead to: this machine, private networks, link-local (cloud
 * metadata at 169.254.169.254), carrier-grade NAT, multicast and reserved ranges. IPv4-mapped IPv6
 * addresses are checked against the IPv4 ranges by BlockList itself.
 */
const PRIVATE_ADDRESSES = (() => {
  const list = new net.BlockList();
  const ipv4: readonly (readonly [string, number])[] = [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.168.0.0', 16],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ];
  // ::/96 holds the unspecified address, ::1 and the deprecated IPv4-compatible addresses.
  const ipv6: readonly (readonly [string, number])[] = [
    ['::', 96],
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
  ];
  for (const [address, prefix] of ipv4) list.addSubnet(address, prefix, 'ipv4');
  for (const [address, prefix] of ipv6) list.addSubnet(address, prefix, 'ipv6');
  return list;
})();

/** Request headers that concern only the hop to the proxy, or that the proxy sets itself. */
const DROPPED_REQUEST_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'te',
  'trailer',
  'upgrade',
  'transfer-encoding',
  'host',
  'expect',
]);
/** Response headers that concern only the hop from the upstream; Node frames the body anew. */
const DROPPED_RESPONSE_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'te', 'trailer', 'upgrade', 'transfer-encoding']);

/**
 * One proxy serves every sandbox of a platform process: its runs and connection counts are shared
 * by all listeners, so a tenant's limit holds however many sockets it is given.
 */
export function createEgressProxy(options: EgressProxyOptions = {}): EgressProxy {
  const logger = options.logger ?? createLogger('silent');
  const connectTimeoutMs = options.connectTimeoutMs ?? 10_000;
  const idleTimeoutMs = options.idleTimeoutMs ?? 5 * 60_000;
  const maxConnections = options.maxConnectionsPerTenant ?? 64;
  const lookup: EgressLookup = options.lookup ?? ((hostname) => dnsLookup(hostname, { all: true }));
  /** Open runs by the SHA-256 digest of their credential: a map lookup leaks nothing about near misses. */
  const runs = new Map<string, Run>();
  const listeners = new Set<Listener>();
  const exchanges = new Set<Exchange>();
  /** Exchanges in flight per tenant. */
  const inFlight = new Map<string, number>();
  let closed = false;

  function authenticate(listener: Listener, req: http.IncomingMessage): Run | null {
    const credential = credentialOf(req.headers['proxy-authorization']);
    const run = credential === null ? undefined : runs.get(digest(credential));
    if (run === undefined || run.tenantKey !== listener.tenantKey) {
      logger.debug('egress proxy: request without a valid credential', { tenantKey: listener.tenantKey });
      return null;
    }
    return run;
  }

  function notAllowed(listener: Listener, target: Target): string {
    logger.info('egress refused: host not allowed for this run', { tenantKey: listener.tenantKey, host: target.label });
    return `${target.label} is not allowed for this run`;
  }

  /** Takes one of the tenant's slots; null when they are all taken. */
  function begin(listener: Listener, run: Run, destroy: () => void): Exchange | null {
    const count = inFlight.get(listener.tenantKey) ?? 0;
    if (count >= maxConnections) {
      logger.info('egress refused: too many connections', { tenantKey: listener.tenantKey, limit: maxConnections });
      return null;
    }
    inFlight.set(listener.tenantKey, count + 1);
    const exchange: Exchange = { listener, run, ended: false, destroy };
    exchanges.add(exchange);
    run.exchanges.add(exchange);
    return exchange;
  }

  /** Gives the slot back; safe to call more than once. */
  function end(exchange: Exchange): void {
    if (exchange.ended) return;
    exchange.ended = true;
    exchanges.delete(exchange);
    exchange.run.exchanges.delete(exchange);
    const { tenantKey } = exchange.listener;
    const count = (inFlight.get(tenantKey) ?? 1) - 1;
    if (count > 0) inFlight.set(tenantKey, count);
    else inFlight.delete(tenantKey);
  }

  /**
   * Opens the upstream connection within the connect timeout. A name is resolved here, checked,
   * and the checked address is what is connected to, so a second DNS answer cannot differ.
   */
  async function reach(listener: Listener, target: Target, route: Route, allowHalfOpen: boolean): Promise<Reached> {
    const deadline = Date.now() + connectTimeoutMs;
    let addresses: readonly string[] = [target.host];
    if (route === 'resolve') {
      let found: readonly LookupAddress[];
      try {
        found = await beforeDeadline(lookup(target.host), deadline);
      } catch (error) {
        logger.debug('egress proxy: lookup failed', { tenantKey: listener.tenantKey, host: target.label, error: reasonOf(error) });
        return { kind: 'refused', status: 502, message: `could not resolve ${target.host}: ${reasonOf(error)}` };
      }
      if (found.length === 0) return { kind: 'refused', status: 502, message: `could not resolve ${target.host}: no addresses` };
      const inside = found.find(({ address }) => isPrivateAddress(address));
      if (inside) {
        logger.info('egress refused: host resolves to a private address', { tenantKey: listener.tenantKey, host: target.label, address: inside.address });
        return { kind: 'refused', status: 403, message: `${target.label} resolves to a private address, which is not allowed for this run` };
      }
      addresses = found.map(({ address }) => address);
    }
    let failure: unknown = new Error(`timed out after ${connectTimeoutMs} ms`);
    for (const address of addresses) {
      if (Date.now() >= deadline) break;
      try {
        return { kind: 'connected', socket: await connectBefore(address, target.port, deadline, allowHalfOpen) };
      } catch (error) {
        failure = error;
      }
    }
    logger.debug('egress proxy: upstream unreachable', { tenantKey: listener.tenantKey, host: target.label, error: reasonOf(failure) });
    return { kind: 'refused', status: 502, message: `could not connect to ${target.label}: ${reasonOf(failure)}` };
  }

  function beforeDeadline<T>(work: Promise<T>, deadline: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${connectTimeoutMs} ms`)), Math.max(0, deadline - Date.now()));
    });
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }

  function connectBefore(host: string, port: number, deadline: number, allowHalfOpen: boolean): Promise<net.Socket> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port, allowHalfOpen });
      let settled = false;
      const settle = (error: Error | null) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error === null) resolve(socket);
        else {
          socket.destroy();
          reject(error);
        }
      };
      const timer = setTimeout(() => settle(new Error(`timed out after ${connectTimeoutMs} ms`)), Math.max(0, deadline - Date.now()));
      // Stays attached for the socket's life: a late error must never become an uncaught one.
      socket.on('error', (error) => settle(error));
      socket.once('connect', () => settle(null));
    });
  }

  /** A CONNECT request: an opaque two-way tunnel once the run may reach the target. */
  async function tunnel(listener: Listener, req: http.IncomingMessage, client: net.Socket, head: Buffer): Promise<void> {
    // Node hands the socket over without its error handler or timeout listener.
    client.on('error', () => client.destroy());
    client.setTimeout(idleTimeoutMs, () => client.destroy());
    const run = authenticate(listener, req);
    if (run === null) return refuseTunnel(client, 407, 'proxy authentication required', [`Proxy-Authenticate: ${REALM}`]);
    const target = parseConnectTarget(req.url ?? '');
    if (target === null) return refuseTunnel(client, 400, 'CONNECT needs host:port');
    const route = matchRules(run.allow, target, 443);
    if (route === null) return refuseTunnel(client, 403, notAllowed(listener, target));
    let upstream: net.Socket | null = null;
    const exchange = begin(listener, run, () => {
      client.destroy();
      upstream?.destroy();
    });
    if (exchange === null) return refuseTunnel(client, 503, `too many connections for this tenant (at most ${maxConnections})`);
    const reached = await reach(listener, target, route, true);
    if (reached.kind === 'refused') {
      end(exchange);
      return refuseTunnel(client, reached.status, reached.message);
    }
    upstream = reached.socket;
    if (client.destroyed) {
      upstream.destroy();
      end(exchange);
      return;
    }
    let open = 2;
    const closedOne = () => {
      if (--open === 0) end(exchange);
    };
    client.once('close', closedOne);
    upstream.once('close', closedOne);
    client.setTimeout(idleTimeoutMs, exchange.destroy);
    upstream.setTimeout(idleTimeoutMs, exchange.destroy);
    client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
    if (head.length > 0) upstream.write(head);
    // Each direction ends on its own (half-close passes through); an error in either ends both.
    const onDone = (error: Error | null | undefined) => {
      if (error) exchange.destroy();
    };
    pipeline(client, upstream, onDone);
    pipeline(upstream, client, onDone);
  }

  /** An absolute-form plain-HTTP request, streamed both ways. */
  async function forward(listener: Listener, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const run = authenticate(listener, req);
    if (run === null) return refuse(res, 407, 'proxy authentication required', { 'proxy-authenticate': REALM });
    const request = parseAbsoluteHttp(req.url ?? '');
    if (request === null) return refuse(res, 400, 'this proxy forwards absolute http:// URLs and CONNECT tunnels only');
    const { target } = request;
    const route = matchRules(run.allow, target, 80);
    if (route === null) return refuse(res, 403, notAllowed(listener, target));
    let upstream: net.Socket | null = null;
    const exchange = begin(listener, run, () => {
      res.destroy();
      upstream?.destroy();
    });
    if (exchange === null) return refuse(res, 503, `too many connections for this tenant (at most ${maxConnections})`);
    let reaching = true;
    let gone = false;
    res.once('close', () => {
      gone = true;
      upstream?.destroy();
      if (!reaching) end(exchange);
    });
    const reached = await reach(listener, target, route, false);
    reaching = false;
    if (reached.kind === 'refused') {
      end(exchange);
      return refuse(res, reached.status, reached.message);
    }
    const socket = reached.socket;
    upstream = socket;
    if (gone) {
      socket.destroy();
      end(exchange);
      return;
    }
    socket.setTimeout(idleTimeoutMs, () => socket.destroy(new Error(`idle for ${idleTimeoutMs} ms`)));
    const extra = matchRules(run.platformHosts, target, 80) === null ? [] : run.platformHeaders;
    const outgoing = http.request({
      method: req.method ?? 'GET',
      path: request.path,
      headers: requestHeaders(req, request.authority, extra),
      setHost: false,
      // No agent: one upstream connection per request, to the address that was checked.
      createConnection: () => socket,
    });
    outgoing.on('response', (incoming) => {
      res.writeHead(incoming.statusCode ?? 502, incoming.statusMessage ?? '', responseHeaders(incoming.rawHeaders));
      pipeline(incoming, res, (error) => {
        if (error) res.destroy();
      });
    });
    outgoing.on('error', (error) => {
      logger.debug('egress proxy: upstream request failed', { tenantKey: listener.tenantKey, host: target.label, error: reasonOf(error) });
      refuse(res, 502, `${target.label} failed: ${reasonOf(error)}`);
    });
    // pipe, not pipeline: a failed upstream must not tear down the client socket before its 502.
    req.on('error', () => outgoing.destroy());
    req.pipe(outgoing);
  }

  async function listen(socketPath: string, tenantKey: string): Promise<EgressListener> {
    if (closed) throw new Error('the egress proxy is closed');
    await removeStaleSocket(socketPath);
    // Slow uploads are bounded by the idle timeout, not by a total request time.
    const server = http.createServer({ requestTimeout: 0 });
    server.maxConnections = maxConnections * 2 + 8;
    server.setTimeout(idleTimeoutMs);
    const listener: Listener = { tenantKey, socketPath, server, sockets: new Set(), inode: null, closing: null };
    server.on('connection', (socket: net.Socket) => {
      listener.sockets.add(socket);
      socket.once('close', () => listener.sockets.delete(socket));
    });
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
      forward(listener, req, res).catch((error: unknown) => {
        logger.error('egress proxy: request failed', { tenantKey, error: reasonOf(error) });
        refuse(res, 502, 'the egress proxy failed');
      });
    });
    server.on('connect', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      // A listener on a Unix socket only ever hands over net.Sockets.
      const client = socket as net.Socket;
      tunnel(listener, req, client, head).catch((error: unknown) => {
        logger.error('egress proxy: tunnel failed', { tenantKey, error: reasonOf(error) });
        client.destroy();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => {
        server.off('error', reject);
        resolve();
      });
    });
    server.on('error', (error) => logger.warn('egress proxy: listener error', { tenantKey, error: reasonOf(error) }));
    listeners.add(listener);
    try {
      await chmod(socketPath, 0o666);
      listener.inode = (await lstat(socketPath)).ino;
    } catch (error) {
      await closeListener(listener);
      throw error;
    }
    if (closed) {
      await closeListener(listener);
      throw new Error('the egress proxy is closed');
    }
    return { close: () => closeListener(listener) };
  }

  function closeListener(listener: Listener): Promise<void> {
    listener.closing ??= (async () => {
      listeners.delete(listener);
      const stopped = new Promise<void>((resolve) => listener.server.close(() => resolve()));
      for (const exchange of [...exchanges]) if (exchange.listener === listener) exchange.destroy();
      for (const socket of listener.sockets) socket.destroy();
      await stopped;
      // Node removes the file itself; this covers a server that never got that far.
      const current = await lstat(listener.socketPath).catch(() => null);
      if (current !== null && current.isSocket() && current.ino === listener.inode) await rm(listener.socketPath, { force: true });
    })();
    return listener.closing;
  }

  function openRun(tenantKey: string, grant: EgressGrant): EgressRun {
    if (closed) throw new Error('the egress proxy is closed');
    const credential = randomBytes(32).toString('base64url');
    const key = digest(credential);
    const run: Run = {
      tenantKey,
      allow: parseRules(grant.allowHosts),
      platformHosts: parseRules(grant.platformCalls?.hosts ?? []),
      platformHeaders: Object.entries(grant.platformCalls?.headers ?? {}),
      exchanges: new Set(),
    };
    runs.set(key, run);
    return {
      credential,
      release() {
        if (runs.get(key) !== run) return;
        runs.delete(key);
        for (const exchange of [...run.exchanges]) exchange.destroy();
      },
    };
  }

  async function close(): Promise<void> {
    closed = true;
    runs.clear();
    await Promise.all([...listeners].map(closeListener));
    for (const exchange of [...exchanges]) exchange.destroy();
  }

  return { listen, openRun, close };
}

/** The credential of `Proxy-Authorization: Basic base64("run:" + credential)`, or null. */
function credentialOf(header: string | undefined): string | null {
  const match = /^basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header ?? '');
  if (!match) return null;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0 || decoded.slice(0, colon) !== 'run') return null;
  return decoded.slice(colon + 1);
}

function digest(credential: string): string {
  return createHash('sha256').update(credential).digest('base64url');
}

function parseRules(entries: readonly string[]): HostRule[] {
  const rules: HostRule[] = [];
  for (const entry of entries) {
    // `*`: any public host on the default ports (every address is still checked).
    if (entry.trim() === '*') {
      rules.push({ host: '', wildcard: true, port: null });
      continue;
    }
    const parsed = splitHostPort(entry.trim().toLowerCase(), true);
    if (parsed === null) continue;
    rules.push(
      parsed.host.startsWith('.') ? { host: parsed.host, wildcard: true, port: parsed.port } : { host: parsed.host, wildcard: false, port: parsed.port },
    );
  }
  return rules;
}

/** Which route the first matching rule allows (an exact `host:port` wins); null when none matches. */
function matchRules(rules: readonly HostRule[], target: Target, defaultPort: number): Route | null {
  let route: Route | null = null;
  for (const rule of rules) {
    const hostMatches = rule.wildcard ? target.host.endsWith(rule.host) : target.host === rule.host;
    if (!hostMatches || target.port !== (rule.port ?? defaultPort)) continue;
    if (!rule.wildcard && rule.port !== null) return 'direct';
    route = 'resolve';
  }
  return route;
}

/**
 * `host`, `host:port`, `[v6]`, `[v6]:port` or a bare IPv6 address, lower case, as a checked host
 * and a port (null when none is given). With `wildcard`, `*.name` is accepted and comes back as
 * the suffix `.name`.
 */
function splitHostPort(text: string, wildcard: boolean): { host: string; port: number | null } | null {
  let host: string;
  let portText: string | null = null;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) return null;
    host = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest !== '') {
      if (!rest.startsWith(':')) return null;
      portText = rest.slice(1);
    }
    if (!net.isIPv6(host)) return null;
  } else if (net.isIPv6(text)) {
    host = text;
  } else {
    const colon = text.lastIndexOf(':');
    host = colon < 0 ? text : text.slice(0, colon);
    portText = colon < 0 ? null : text.slice(colon + 1);
  }
  let port: number | null = null;
  if (portText !== null) {
    if (!/^\d{1,5}$/.test(portText)) return null;
    port = Number(portText);
    if (port < 1 || port > 65535) return null;
  }
  if (net.isIPv6(host)) {
    const canonical = canonicalIPv6(host);
    return canonical === null ? null : { host: canonical, port };
  }
  host = host.replace(/\.$/, '');
  if (wildcard && host.startsWith('*.')) {
    const suffix = host.slice(1);
    return HOST_NAME.test(suffix.slice(1)) ? { host: suffix, port } : null;
  }
  return HOST_NAME.test(host) ? { host, port } : null;
}

const HOST_NAME = /^[a-z0-9_-]+(?:\.[a-z0-9_-]+)*$/;

/** The one spelling of an IPv6 address, so that `[0:0::1]` and `[::1]` match the same rules; null for zone ids. */
function canonicalIPv6(address: string): string | null {
  try {
    return new URL(`http://[${address}]/`).hostname.slice(1, -1);
  } catch {
    return null;
  }
}

function targetOf(host: string, port: number): Target {
  return { host, port, label: `${host.includes(':') ? `[${host}]` : host}:${port}` };
}

function parseConnectTarget(authority: string): Target | null {
  const parsed = splitHostPort(authority.toLowerCase(), false);
  return parsed === null || parsed.port === null ? null : targetOf(parsed.host, parsed.port);
}

/** The target, origin-form path and `Host` value of `GET http://host[:port]/path`; null for any other form. */
function parseAbsoluteHttp(url: string): { target: Target; path: string; authority: string } | null {
  const match = /^http:\/\/([^/?#]*)([^#]*)/i.exec(url);
  if (!match) return null;
  const authority = match[1]!;
  const rest = match[2]!;
  // User info in a proxied URL is not the proxy's to pass on.
  if (authority.includes('@')) return null;
  const parsed = splitHostPort(authority.toLowerCase(), false);
  if (parsed === null) return null;
  const path = rest === '' ? '/' : rest.startsWith('/') ? rest : `/${rest}`;
  return { target: targetOf(parsed.host, parsed.port ?? 80), path, authority };
}

function isPrivateAddress(address: string): boolean {
  const family = net.isIPv4(address) ? 'ipv4' : net.isIPv6(address) ? 'ipv6' : null;
  // Anything that is not a plain address (a zone id, garbage) is refused rather than guessed at.
  if (family === null) return true;
  try {
    return PRIVATE_ADDRESSES.check(address, family);
  } catch {
    return true;
  }
}

/** Names listed in `Connection` headers, which are hop-by-hop too. */
function connectionListed(raw: readonly string[]): Set<string> {
  const names = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (raw[i]!.toLowerCase() !== 'connection') continue;
    for (const name of raw[i + 1]!.split(',')) names.add(name.trim().toLowerCase());
  }
  return names;
}

/** The request's end-to-end headers, `Host` set from the target, platform headers it lacks added. */
function requestHeaders(req: http.IncomingMessage, authority: string, extra: readonly (readonly [string, string])[]): string[] {
  const raw = req.rawHeaders;
  const listed = connectionListed(raw);
  // One upstream connection per request (see `forward`): say so, so that the upstream closes it too.
  const headers = ['Host', authority, 'Connection', 'close'];
  const present = new Set<string>();
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (DROPPED_REQUEST_HEADERS.has(lower) || listed.has(lower)) continue;
    headers.push(name, raw[i + 1]!);
    present.add(lower);
  }
  // Node decoded the chunks; it frames the body anew when told it is chunked.
  if (req.headers['transfer-encoding'] !== undefined) headers.push('Transfer-Encoding', 'chunked');
  for (const [name, value] of extra) if (!present.has(name.toLowerCase())) headers.push(name, value);
  return headers;
}

function responseHeaders(raw: readonly string[]): string[] {
  const listed = connectionListed(raw);
  const headers: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const lower = raw[i]!.toLowerCase();
    if (!DROPPED_RESPONSE_HEADERS.has(lower) && !listed.has(lower)) headers.push(raw[i]!, raw[i + 1]!);
  }
  return headers;
}

function refuse(res: http.ServerResponse, status: number, text: string, extra: Readonly<Record<string, string>> = {}): void {
  if (res.headersSent || res.destroyed) {
    res.destroy();
    return;
  }
  const body = `${text}\n`;
  // An unread request body is discarded by Node after the response, keeping the connection usable.
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), ...extra });
  res.end(body);
}

function refuseTunnel(client: net.Socket, status: number, text: string, extra: readonly string[] = []): void {
  if (client.destroyed) return;
  const body = `${text}\n`;
  const head = [
    `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}`,
    ...extra,
    'Content-Type: text/plain; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  // Read (and drop) whatever the client still sends, so that its FIN closes the socket.
  client.resume();
  client.end(`${head.join('\r\n')}\r\n\r\n${body}`);
}

/** Replaces a socket file left by an earlier listener; anything else at the path is an error. */
async function removeStaleSocket(socketPath: string): Promise<void> {
  const existing = await lstat(socketPath).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return null;
    throw error;
  });
  if (existing === null) return;
  if (!existing.isSocket()) throw new Error(`${socketPath} exists and is not a socket`);
  await rm(socketPath, { force: true });
}

function reasonOf(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as NodeJS.ErrnoException).code;
    return code ?? error.message;
  }
  return String(error);
}

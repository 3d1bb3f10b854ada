import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { APIGatewayProxyResult } from 'aws-lambda';
import type { Host, RouteSpec } from '../manifest/types.ts';
import { CORS_ALLOWED_HEADERS } from '../manifest/http.ts';
import type { RestHandler } from '../../functions/core/http/api-gateway.ts';
import { createFallbackHandler } from '../../functions/core/http/not-found.ts';
import type { BoundRoute, BoundStreamRoute } from '../../functions/core/http/route.ts';
import { refuseUpgrade, type StartedService } from '../../functions/core/entry/service.ts';
import { errorBody } from '../../functions/core/http/envelope.ts';
import { toErrorResponse } from '../../functions/core/http/error-response.ts';
import { lineageOf } from '../../functions/core/http/lineage.ts';
import { handleRequest } from '../../functions/core/http/pipeline.ts';
import { fromRestEvent } from '../../functions/core/http/request.ts';
import { commonHeaders, json } from '../../functions/core/http/response.ts';
import type { LocalAssets } from './assets.ts';
import { RouteTable } from '../../functions/core/http/route-table.ts';
import { PayloadTooLargeError } from '../../functions/core/errors.ts';
import type { Ports } from '../../functions/ports.ts';
import { createStreamHandler, type StreamingLambdaHandler } from '../../functions/core/http/lambda-stream.ts';
import type { LazyRoute } from './handlers.ts';
import { requestOrigin } from './forwarded.ts';
import { toRestEvent } from './rest-event.ts';
import { installStreamingShim, LocalResponseStream } from './streaming-shim.ts';
import { toUrlEvent } from './url-event.ts';

/**
 * Path prefix of each host on the API's local port; the base and MCP hosts are the root. The site
 * host has none: it is served on a port of its own (`LOCAL_OWN_PORT_HOSTS`).
 */
export const LOCAL_HOST_PREFIX: Record<Host, string> = {
  base: '',
  mcp: '',
  stream: '/stream',
  voice: '/voice',
  cdn: '/cdn',
  site: '',
  code: '/code',
};

/**
 * Hosts served on a port of their own, whole, rather than under a prefix of the API's port: users'
 * sites, whose scripts must run on another origin than the API's so they can never act on it
 * with a visitor's credentials for the API.
 */
export const LOCAL_OWN_PORT_HOSTS: ReadonlySet<Host> = new Set(['site']);

interface Located {
  readonly host: Host;
  readonly path: string;
}

/** Which host a local path belongs to, and the path relative to that host. */
function locate(pathname: string): Located {
  for (const [host, prefix] of Object.entries(LOCAL_HOST_PREFIX) as [Host, string][]) {
    if (prefix !== '' && (pathname === prefix || pathname.startsWith(prefix + '/'))) return { host, path: pathname.slice(prefix.length) || '/' };
  }
  return { host: 'base', path: pathname };
}

export interface LocalServerOptions {
  /** Their handler modules are imported on each route's first call (handlers.ts). */
  readonly routes: readonly LazyRoute<BoundRoute>[];
  readonly streamRoutes: readonly LazyRoute<BoundStreamRoute>[];
  /** Null until the stores are up: requests meanwhile get 503. */
  readonly ports: () => Ports | null;
  /**
   * Hosts served whole by a service (lib/local/services.ts): their requests and upgrades go to the
   * running service with the host's prefix removed; null before it starts and while it stops (503).
   */
  readonly services?: { readonly hosts: ReadonlySet<Host>; forHost(host: Host): StartedService | null };
  /** Serve this host alone, at the root of the port (one of `LOCAL_OWN_PORT_HOSTS`); every host by prefix otherwise. */
  readonly only?: Host;
  /** The areas' browser assets (the widget on the CDN host), answered before the routes. */
  readonly assets?: LocalAssets;
}

/**
 * The local HTTP front door: it plays API Gateway's and the function URLs' part. It matches the
 * manifest route, refuses oversized bodies before reading them, builds the REST (buffered) or
 * function URL (streaming) event and calls the same handler a cloud function would. A route's
 * handler module is imported on its first call; when that fails, the call gets a 500 in the route's
 * envelope, the failure is logged, and the next call tries again.
 */
export function createLocalServer(options: LocalServerOptions): Server {
  installStreamingShim();
  const ready = () => {
    const ports = options.ports();
    if (ports === null) throw new Error('platform not ready');
    return ports;
  };
  const onHost = (spec: RouteSpec, host: Host) => spec.host === host || (host === 'base' && spec.host === 'mcp');
  const tables = new Map<Host, RouteTable<RouteSpec>>();
  const fallbacks = new Map<Host, RestHandler>();
  for (const host of Object.keys(LOCAL_HOST_PREFIX) as Host[]) {
    const specs = [...options.routes, ...options.streamRoutes].map((r) => r.spec).filter((spec) => onHost(spec, host));
    tables.set(host, new RouteTable(specs));
    fallbacks.set(
      host,
      createFallbackHandler(specs, () => options.ports()?.log ?? null),
    );
  }
  // Keyed by the spec the route table matched, so a match finds its route without a second lookup.
  const buffered = new Map(options.routes.map((r) => [r.spec, r]));
  const streaming = new Map(options.streamRoutes.map((r) => [r.spec, r]));
  // A function URL's handler per streaming route, made once its module is loaded; it matches the
  // path again against that one route, which costs microseconds and keeps the cloud code path.
  const streamHandlers = new Map<RouteSpec, StreamingLambdaHandler>();
  const streamHandlerFor = async (route: LazyRoute<BoundStreamRoute>) => {
    let handler = streamHandlers.get(route.spec);
    if (handler === undefined) {
      handler = createStreamHandler([await route.load()], ready);
      streamHandlers.set(route.spec, handler);
    }
    return handler;
  };
  const services = options.services;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      options.ports()?.log.error('local server failure', { error });
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'Internal server error.' }));
    });
  });
  // Only with a service: Node handles an upgrade request as a plain one when nobody listens, and
  // routes have no use for upgrades (API Gateway REST and function URLs take none either).
  if (services !== undefined && services.hosts.size > 0) {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const url = new URL(req.url ?? '/', 'http://local');
      const located = locate(url.pathname);
      if (!services.hosts.has(located.host)) return refuseUpgrade(socket, 404);
      const service = services.forHost(located.host);
      if (service === null) return refuseUpgrade(socket, 503);
      req.url = located.path + url.search;
      service.upgrade(req, socket, head);
    });
  }
  return server;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = randomUUID();
    const url = new URL(req.url ?? '/', 'http://local');
    const method = (req.method ?? 'GET').toUpperCase();
    const located: Located =
      options.only === undefined
        ? locate(url.pathname)
        : // A site's root on its own origin (`alice.localhost:3001/`) is asked for as its index, as the
          // cloud's viewer-request function asks for every folder: `/{site+}` takes one segment or more.
          { host: options.only, path: options.only === 'site' && url.pathname === '/' ? '/index.html' : url.pathname };
    // A service answers its whole host itself, preflights included, as its load balancer passes them on.
    if (services?.hosts.has(located.host)) {
      const service = services.forHost(located.host);
      if (service === null) return send(res, json(503, { error: 'The service is not running.', requestId }, commonHeaders(requestId)));
      req.url = located.path + url.search;
      return service.request(req, res);
    }
    if (method === 'OPTIONS') return preflight(res, requestId);
    if ((method === 'GET' || method === 'HEAD') && options.assets) {
      const asset = await options.assets(located.host, located.path);
      if (asset !== null) {
        req.resume();
        res.writeHead(asset.status ?? 200, {
          ...commonHeaders(requestId),
          ...asset.headers,
          'content-type': asset.contentType,
          'cache-control': asset.cacheControl,
          'content-length': Buffer.byteLength(asset.body),
        });
        return void res.end(method === 'HEAD' ? undefined : asset.body);
      }
    }
    const ports = options.ports();
    if (ports === null) return send(res, json(503, { error: 'The platform is starting.', requestId }, commonHeaders(requestId)));
    const origin = requestOrigin(req, ports.config.TRUST_FORWARDED_HEADERS);

    const match = tables.get(located.host)!.match(method, located.path);
    if (match.kind !== 'found') {
      req.resume();
      const proxy = { proxy: located.path.replace(/^\//, '') };
      return send(
        res,
        await fallbacks.get(located.host)!(
          // The full path, host prefix included, as API Gateway's `path` is what the client sent.
          toRestEvent(req, { requestId, path: url.pathname, resource: '/{proxy+}', pathParameters: proxy, query: url.searchParams, body: null, origin }),
        ),
      );
    }
    const limit = match.route.maxBodyBytes;
    const declared = Number(req.headers['content-length'] ?? 0);
    if (declared > limit) return refuseTooLarge(req, res, requestId, limit);
    const body = await readBody(req, limit);
    if (body === 'too-large') return refuseTooLarge(req, res, requestId, limit);

    if (match.route.mode === 'streaming') {
      const handler = await streamHandlerFor(streaming.get(match.route)!).catch((error: unknown) =>
        answerNotLoaded(res, match.route, requestId, error, options.ports()),
      );
      if (handler === null) return;
      const event = toUrlEvent(req, { requestId, path: located.path, query: url.searchParams, rawQuery: rawQueryOf(req), body, origin });
      const stream = new LocalResponseStream(res);
      return handler(event, stream);
    }
    const bound = await buffered
      .get(match.route)!
      .load()
      .catch((error: unknown) => answerNotLoaded(res, match.route, requestId, error, options.ports()));
    if (bound === null) return;
    const event = toRestEvent(req, {
      requestId,
      path: located.path,
      resource: match.route.path,
      pathParameters: match.params,
      query: url.searchParams,
      body,
      origin,
    });
    // API Gateway REST keeps only the decoded parameters, so its event has no place for the raw query:
    // the front door adds it to the request it builds from the event, as a function URL's event carries it.
    send(res, await handleRequest(bound, { ...fromRestEvent(event), rawQuery: rawQueryOf(req) }, ready()));
  }
}

/** The query exactly as the client sent it, without the `?` (`new URL` would re-encode some characters). */
function rawQueryOf(req: IncomingMessage): string {
  const target = req.url ?? '';
  const mark = target.indexOf('?');
  return mark < 0 ? '' : target.slice(mark + 1);
}

/** A handler module that could not be imported: logged with its cause, answered 500 in the route's envelope. */
function answerNotLoaded(res: ServerResponse, route: RouteSpec, requestId: string, error: unknown, ports: Ports | null): null {
  ports?.log.error('handler module failed to load', { requestId, route: route.id, error });
  const failure = toErrorResponse(error);
  send(res, json(failure.status, errorBody(route.style, failure.code, failure.message, lineageOf(requestId, undefined)), commonHeaders(requestId)));
  return null;
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer | null | 'too-large'> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let exceeded = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) exceeded = true;
      else chunks.push(chunk);
    });
    req.on('end', () => resolve(exceeded ? 'too-large' : size === 0 ? null : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function refuseTooLarge(req: IncomingMessage, res: ServerResponse, requestId: string, limit: number): void {
  const failure = toErrorResponse(new PayloadTooLargeError(limit));
  const response = json(failure.status, errorBody('B', failure.code, failure.message, lineageOf(requestId, undefined)), {
    ...commonHeaders(requestId),
    connection: 'close',
  });
  send(res, response);
  // Stop reading the rest of an oversized upload.
  req.resume();
}

function preflight(res: ServerResponse, requestId: string): void {
  res.writeHead(204, {
    ...commonHeaders(requestId),
    'access-control-allow-methods': 'GET, POST, PUT, PATCH, DELETE, OPTIONS',
    'access-control-allow-headers': CORS_ALLOWED_HEADERS.join(', '),
    'access-control-max-age': '600',
  });
  res.end();
}

function send(res: ServerResponse, result: APIGatewayProxyResult): void {
  const body = result.isBase64Encoded ? Buffer.from(result.body, 'base64') : Buffer.from(result.body, 'utf8');
  const headers: Record<string, string | number> = { ...(result.headers as Record<string, string>), 'content-length': body.length };
  res.writeHead(result.statusCode, headers);
  res.end(body);
}

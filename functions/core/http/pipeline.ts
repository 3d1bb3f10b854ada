import type * as z from 'zod';
import type { AreaModule, RouteSpec } from '../../../lib/manifest/types.ts';
import { portsForArea, type Ports } from '../../ports.ts';
import type { Release } from '../admission.ts';
import { accountKey, presentedKey } from '../admission-keys.ts';
import { anonymous, assertCallerAdmitted, type Actor } from '../auth/actor.ts';
import { resolveActor } from '../auth/resolve-actor.ts';
import { MalformedJsonError, PayloadTooLargeError, TimeoutError, UnsupportedContentTypeError, ValidationError } from '../errors.ts';
import { errorBody, successBody } from './envelope.ts';
import { toErrorResponse } from './error-response.ts';
import { jsonRpcErrorBody } from './json-rpc-error.ts';
import { LINEAGE_HEADER, lineageOf, type Lineage } from './lineage.ts';
import { publicUrls } from './public-urls.ts';
import type { HttpRequest } from './request.ts';
import { commonHeaders, json, type HttpResponse } from './response.ts';
import { Reply, type AnyRouteDefinition, type ResponseStream, type RouteContext, type BoundRoute, type BoundStreamRoute } from './route.ts';
import type { Logger } from '../logger.ts';
import { withSecretScope } from '../secret-scope.ts';

const METHODS_WITH_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Validated inputs and the caller: what both buffered and streaming handlers start from. */
async function buildContext(
  route: RouteSpec,
  definition: AnyRouteDefinition,
  area: AreaModule,
  request: HttpRequest,
  ports: Ports,
  lineage: Lineage,
  log: Logger,
  onActor: (actor: Actor) => void,
  signal: AbortSignal,
  held: Release[],
  bookkeeping: Promise<void>[],
): Promise<RouteContext<unknown, unknown, unknown, unknown>> {
  if (request.body !== null && request.body.length > route.maxBodyBytes) throw new PayloadTooLargeError(route.maxBodyBytes);
  // Admission comes first, by what the request presents: a caller over its share is refused before
  // any store call, so its refusals cost others next to nothing (functions/core/admission-keys.ts).
  const presented = presentedKey(route, area.name, request, ports.config);
  if (presented !== null) held.push(await ports.admission.admit(presented.key, presented.limits));
  const actor = await resolveActor(route.auth, request, {
    credentials: ports.credentials,
    identity: ports.identity,
    runTokens: ports.runTokens,
    now: ports.clock.now(),
    // The token's lastUsedAt write goes on beside the request, not a step before it; the answer
    // waits for it (a Lambda may be frozen once it answers). Best-effort: a failure is logged.
    afterAuth: (write) => bookkeeping.push(write.catch((error: unknown) => log.warn('token lastUsedAt not recorded', { error }))),
  });
  onActor(actor);
  const account = presented === null ? null : accountKey(actor, ports.config);
  if (account !== null) held.push(await ports.admission.admit(account.key, account.limits));
  assertCallerAdmitted(route.callers, actor);
  // The limiter's update is in flight while the request is parsed and the route's first record is
  // read (`prefetch`); nothing else starts before it admits the caller, and a limited caller gets
  // 429 whatever the parsing or the read found.
  const admitted = route.rateLimit ? consumeRateLimit(route.rateLimit, route.id, actor, request, ports) : null;
  let inputs: { body: unknown; query: unknown; params: unknown };
  try {
    inputs = {
      body: definition.body ? validate('request body', definition.body, parseJsonBody(request)) : undefined,
      query: definition.query ? validate('query parameters', definition.query, request.query) : undefined,
      params: definition.params ? validate('path parameters', definition.params, request.pathParams) : undefined,
    };
  } catch (error) {
    await admitted;
    throw error;
  }
  const ctx = { ...inputs, actor, lineage, request, ports: portsForArea(ports, area), urls: publicUrls(ports.config, request.baseUrl), log, signal };
  const read = definition.prefetch?.({ ...ctx, prefetched: undefined });
  // Dropped unread when the limiter refuses: no unhandled rejection then.
  read?.catch(() => undefined);
  await admitted;
  return { ...ctx, prefetched: await read };
}

async function consumeRateLimit(
  rateLimit: NonNullable<RouteSpec['rateLimit']>,
  routeId: string,
  actor: Actor,
  request: HttpRequest,
  ports: Ports,
): Promise<void> {
  const { bucket, anonymousLimit, limit, windowSec } = rateLimit;
  // An embed's visitors all act as its owner: each visitor (address) gets the owner's allowance of
  // its own rather than one visitor using it up for the rest and the owner.
  const subject =
    actor.kind !== 'user'
      ? `ip:${request.sourceIp}`
      : actor.embedTokenId !== undefined
        ? `embed:${actor.embedTokenId}:${request.sourceIp}`
        : `user:${actor.userId}`;
  const applied = actor.kind === 'user' ? limit : (anonymousLimit ?? limit);
  await ports.rateLimiter.consume(`${bucket ?? routeId}:${subject}`, { limit: applied, windowSec });
}

function errorResponse(route: RouteSpec, request: HttpRequest, error: unknown, lineage: Lineage, log: Logger): HttpResponse {
  const failure = toErrorResponse(error);
  if (failure.expected) log.info('request refused', { status: failure.status, code: failure.code });
  else log.error('request failed', { error });
  const body = route.errors === 'json-rpc' ? jsonRpcErrorBody(failure, request.body) : errorBody(route.style, failure.code, failure.message, lineage);
  return json(failure.status, body, { ...commonHeaders(lineage.requestId), ...failure.headers });
}

function logRequest(log: Logger, request: HttpRequest, status: number, started: number, ports: Ports, actor: Actor): void {
  log.info('request', {
    method: request.method,
    path: request.path,
    status,
    durationMs: ports.clock.now() - started,
    userId: actor.kind === 'user' ? actor.userId : null,
  });
}

/** Runs one request through a buffered route: limits, auth, parsing, validation, the handler, the envelope. */
export function handleRequest(bound: BoundRoute, request: HttpRequest, ports: Ports): Promise<HttpResponse> {
  return withSecretScope(() => runBuffered(bound, request, ports));
}

async function runBuffered({ spec: route, definition, area }: BoundRoute, request: HttpRequest, ports: Ports): Promise<HttpResponse> {
  const started = ports.clock.now();
  const lineage = lineageOf(request.requestId, request.headers[LINEAGE_HEADER]);
  const log = ports.log.child({ requestId: lineage.requestId, rootRequestId: lineage.rootRequestId, route: route.id });
  let actor: Actor = anonymous;
  let response: HttpResponse;
  const deadline = new AbortController();
  const held: Release[] = [];
  const bookkeeping: Promise<void>[] = [];
  try {
    const ctx = await buildContext(route, definition, area, request, ports, lineage, log, (a) => (actor = a), deadline.signal, held, bookkeeping);
    const result = await withTimeout(route.timeoutSec, deadline, definition.run(ctx));
    response = toSuccessResponse(route, result, lineage);
  } catch (error) {
    response = errorResponse(route, request, error, lineage, log);
  } finally {
    await Promise.all(bookkeeping);
    for (const release of held) release();
  }
  logRequest(log, request, response.statusCode, started, ports, actor);
  return response;
}

/** Where a streaming route writes: the transport of the wiring (Lambda response stream or local socket). */
export interface StreamSink {
  /** Aborted when the client goes away before the end. */
  readonly closed?: AbortSignal;
  start(status: number, headers: Record<string, string>): void;
  write(chunk: Buffer): Promise<void>;
  end(): Promise<void>;
}

/**
 * Runs one request through a streaming route. Until the handler starts the stream, failures are
 * ordinary error envelopes; after that the handler owns error reporting, and an unexpected throw
 * just ends the stream (it is logged).
 */
export function handleStreamRequest(bound: BoundStreamRoute, request: HttpRequest, ports: Ports, sink: StreamSink): Promise<void> {
  return withSecretScope(() => runStreaming(bound, request, ports, sink));
}

async function runStreaming({ spec: route, definition, area }: BoundStreamRoute, request: HttpRequest, ports: Ports, sink: StreamSink): Promise<void> {
  const started = ports.clock.now();
  const lineage = lineageOf(request.requestId, request.headers[LINEAGE_HEADER]);
  const log = ports.log.child({ requestId: lineage.requestId, rootRequestId: lineage.rootRequestId, route: route.id });
  let actor: Actor = anonymous;
  let status = 0;
  const stream: ResponseStream = {
    start(code, headers) {
      if (status !== 0) throw new Error('stream already started');
      status = code;
      sink.start(code, { ...commonHeaders(lineage.requestId), ...headers });
    },
    async write(chunk) {
      if (status === 0) throw new Error('stream.start must be called before write');
      await sink.write(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk, 'utf8'));
    },
    end: () => sink.end(),
  };
  const deadline = new AbortController();
  sink.closed?.addEventListener('abort', () => deadline.abort(new Error('client disconnected')), { once: true });
  // Held until the stream ends: a stream in progress is a request in progress.
  const held: Release[] = [];
  const bookkeeping: Promise<void>[] = [];
  try {
    const ctx = await buildContext(route, definition, area, request, ports, lineage, log, (a) => (actor = a), deadline.signal, held, bookkeeping);
    await withTimeout(route.timeoutSec, deadline, definition.run(ctx, stream));
    if (status === 0) throw new Error(`streaming route ${route.id} finished without starting its stream`);
    await Promise.all(bookkeeping);
    await sink.end();
  } catch (error) {
    await Promise.all(bookkeeping);
    if (status === 0) {
      const response = errorResponse(route, request, error, lineage, log);
      status = response.statusCode;
      sink.start(response.statusCode, response.headers);
      await sink.write(Buffer.from(response.body, 'utf8'));
    } else {
      log.error('stream failed after it started', { error });
    }
    await sink.end();
  } finally {
    for (const release of held) release();
  }
  logRequest(log, request, status, started, ports, actor);
}

function toSuccessResponse(route: RouteSpec, result: unknown, lineage: Lineage): HttpResponse {
  const headers = commonHeaders(lineage.requestId);
  if (!(result instanceof Reply)) return json(200, successBody(route.style, result, lineage), headers);
  if (result.raw !== undefined) {
    const binary = Buffer.isBuffer(result.raw.body);
    return {
      statusCode: result.status,
      headers: { ...headers, ...result.headers, 'content-type': result.raw.contentType },
      body: binary ? (result.raw.body as Buffer).toString('base64') : (result.raw.body as string),
      isBase64Encoded: binary,
    };
  }
  return json(result.status, successBody(route.style, result.data, lineage, result.meta), { ...headers, ...result.headers });
}

function parseJsonBody(request: HttpRequest): unknown {
  if (!METHODS_WITH_BODY.has(request.method) || request.body === null || request.body.length === 0) return {};
  const contentType = (request.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
  if (contentType !== 'application/json' && !contentType.endsWith('+json')) {
    throw new UnsupportedContentTypeError(`Content-Type must be application/json${contentType ? ` (got ${contentType})` : ' (none was sent)'}.`);
  }
  try {
    return JSON.parse(request.body.toString('utf8'));
  } catch (error) {
    throw new MalformedJsonError(`Request body is not valid JSON: ${(error as Error).message}.`);
  }
}

/** Parses `input` with `schema`; a failure lists every problem with the field it concerns. */
export function validate<S extends z.ZodType>(what: string, schema: S, input: unknown): z.infer<S> {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    const field = issue.path.length > 0 ? issue.path.join('.') : what;
    const missing = issue.code === 'invalid_type' && /received undefined$/.test(issue.message);
    return `${field}: ${missing ? 'is required' : issue.message}`;
  });
  throw new ValidationError(`Invalid ${what}`, issues);
}

/** Races `work` against the route's timeout; at the timeout `controller` aborts, so the work can stop too. */
async function withTimeout<T>(seconds: number, controller: AbortController, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new TimeoutError(`The request did not complete within ${seconds} seconds.`);
      controller.abort(error);
      reject(error);
    }, seconds * 1000);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

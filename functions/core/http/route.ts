import type * as z from 'zod';
import type { AreaModule, RouteSpec } from '../../../lib/manifest/types.ts';
import type { Ports } from '../../ports.ts';
import type { RequestScope } from '../request-scope.ts';
import type { HttpRequest } from './request.ts';

/**
 * What a handler receives: the parsed, validated request, the ports, and the request's scope (the
 * caller, lineage, log, public URLs and abort signal), which it hands to services whole.
 */
export interface RouteContext<B, Q, P, F = undefined> extends RequestScope {
  readonly body: B;
  readonly query: Q;
  readonly params: P;
  readonly request: HttpRequest;
  /** The ports of the route's area (`portsForArea`): the kernel's and those its module declares. */
  readonly ports: Ports;
  /** What the route's `prefetch` read while the rate limiter answered (undefined without one). */
  readonly prefetched: F;
}

/**
 * A route's first record read, started together with the rate limiter's update instead of after
 * it (one store round trip fewer on the request path). Only reads: it runs before the caller is
 * admitted, so it must write nothing, bill nothing and run nothing. A limited caller gets 429 and
 * what was read is dropped. An admitted caller whose read failed gets the read's error, as if `run`
 * had read first; a route whose checks come in another order returns settled results instead.
 */
export type Prefetch<B, Q, P, F> = (ctx: RouteContext<B, Q, P>) => Promise<F>;

/** A response other than "200 with `data` in the route's envelope". */
export class Reply {
  private constructor(
    readonly status: number,
    readonly data: unknown,
    readonly headers: Readonly<Record<string, string>>,
    readonly meta: Record<string, unknown> | undefined,
    /** When set, sent as-is instead of an envelope. */
    readonly raw: { body: string | Buffer; contentType: string } | undefined,
  ) {}

  static created(data: unknown): Reply {
    return new Reply(201, data, {}, undefined, undefined);
  }

  static ok(data: unknown, options: { status?: number; headers?: Record<string, string>; meta?: Record<string, unknown> } = {}): Reply {
    return new Reply(options.status ?? 200, data, options.headers ?? {}, options.meta, undefined);
  }

  static raw(body: string | Buffer, contentType: string, options: { status?: number; headers?: Record<string, string> } = {}): Reply {
    return new Reply(options.status ?? 200, undefined, options.headers ?? {}, undefined, { body, contentType });
  }
}

type Schema = z.ZodType;
type Out<S> = S extends z.ZodType<infer T> ? T : undefined;

/** A buffered route: schemas for what it reads and what it answers, and the use case it runs. */
export interface RouteDefinition {
  readonly kind: 'buffered';
  readonly body: Schema | undefined;
  readonly query: Schema | undefined;
  readonly params: Schema | undefined;
  /** What a success answers in its envelope's `data` (the OpenAPI document's response schema). */
  readonly response: Schema | undefined;
  /**
   * The media types of an answer sent without an envelope (`Reply.raw`), e.g. `text/markdown`;
   * several where the answer's type depends on the caller (a messaging service's webhook).
   */
  readonly rawContentType: string | readonly string[] | undefined;
  /**
   * The media types of a body the route reads itself from `ctx.request` instead of through `body`
   * (a webhook whose signature is over its bytes, in the format its service sends).
   */
  readonly rawBody: readonly string[] | undefined;
  /**
   * A `GET` whose query string is the handler's input with names of the caller's choosing (an
   * action's own parameters): what the OpenAPI document says of them, as one free-form object.
   */
  readonly openQuery: string | undefined;
  readonly prefetch: Prefetch<unknown, unknown, unknown, unknown> | undefined;
  run(ctx: RouteContext<unknown, unknown, unknown, unknown>): Promise<unknown>;
}

/** Writes a streamed response; `start` must come before the first `write`. */
export interface ResponseStream {
  start(status: number, headers: Record<string, string>): void;
  /** Resolves once the chunk is handed to the transport (backpressure). */
  write(chunk: string | Buffer): Promise<void>;
  end(): Promise<void>;
}

/** A streaming route: same parsing and auth as buffered ones, then `run` writes to the stream. */
export interface StreamRouteDefinition {
  readonly kind: 'streaming';
  readonly body: Schema | undefined;
  readonly query: Schema | undefined;
  readonly params: Schema | undefined;
  readonly prefetch: Prefetch<unknown, unknown, unknown, unknown> | undefined;
  run(ctx: RouteContext<unknown, unknown, unknown, unknown>, stream: ResponseStream): Promise<void>;
}

export type AnyRouteDefinition = RouteDefinition | StreamRouteDefinition;

/**
 * Declares a streaming handler (e.g. chat). Failures before `stream.start` become ordinary error
 * envelopes; after it, the handler reports them in-band.
 */
export function defineStreamRoute<
  BS extends Schema | undefined = undefined,
  QS extends Schema | undefined = undefined,
  PS extends Schema | undefined = undefined,
  F = undefined,
>(def: {
  body?: BS;
  query?: QS;
  params?: PS;
  prefetch?: Prefetch<Out<BS>, Out<QS>, Out<PS>, F>;
  run(ctx: RouteContext<Out<BS>, Out<QS>, Out<PS>, F>, stream: ResponseStream): Promise<void>;
}): StreamRouteDefinition {
  return {
    kind: 'streaming',
    body: def.body,
    query: def.query,
    params: def.params,
    prefetch: def.prefetch as StreamRouteDefinition['prefetch'],
    run: def.run as StreamRouteDefinition['run'],
  };
}

/**
 * Declares a handler. Handlers stay thin: the schemas do the parsing, `run` calls one service
 * function and returns its result (or a `Reply`). Auth mode, envelope, limits come from the manifest.
 */
export function defineRoute<
  BS extends Schema | undefined = undefined,
  QS extends Schema | undefined = undefined,
  PS extends Schema | undefined = undefined,
  F = undefined,
  RS extends Schema | undefined = undefined,
>(def: {
  body?: BS;
  query?: QS;
  params?: PS;
  /**
   * The schema of the success's `data`: `run` must return what it describes (or a `Reply`), and the
   * OpenAPI document declares it, so generated clients are typed by what the handler answers.
   */
  response?: RS;
  /** For a route that answers `Reply.raw`: its media type (or types), for the OpenAPI document. */
  rawContentType?: string | readonly string[];
  /** For a route that reads its body raw: the media types it accepts, for the OpenAPI document. */
  rawBody?: readonly string[];
  /** For a `GET` that reads its query string itself, names free: what it is, for the OpenAPI document. */
  openQuery?: string;
  prefetch?: Prefetch<Out<BS>, Out<QS>, Out<PS>, F>;
  run(ctx: RouteContext<Out<BS>, Out<QS>, Out<PS>, F>): Promise<Answer<RS>>;
}): RouteDefinition {
  return {
    kind: 'buffered',
    body: def.body,
    query: def.query,
    params: def.params,
    response: def.response,
    rawContentType: def.rawContentType,
    rawBody: def.rawBody,
    openQuery: def.openQuery,
    prefetch: def.prefetch as RouteDefinition['prefetch'],
    run: def.run as RouteDefinition['run'],
  };
}

/** What `run` may return: the declared response's data (as the schema reads it) or a `Reply`; anything without one. */
type Answer<RS> = RS extends z.ZodType ? z.input<RS> | Reply : unknown;

/** A route together with the definition its handler module exports and the area it belongs to. */
export interface BoundRoute {
  readonly spec: RouteSpec;
  readonly definition: RouteDefinition;
  /** Its handler sees only the ports this area declares (`portsForArea`). */
  readonly area: AreaModule;
}

/** A streaming route, bound likewise. */
export interface BoundStreamRoute {
  readonly spec: RouteSpec;
  readonly definition: StreamRouteDefinition;
  readonly area: AreaModule;
}

import type { Writable } from 'node:stream';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type { Ports } from '../../ports.ts';
import { MethodNotAllowedError, NotFoundError } from '../errors.ts';
import { errorBody } from './envelope.ts';
import { toErrorResponse } from './error-response.ts';
import { lineageOf } from './lineage.ts';
import { handleStreamRequest, type StreamSink } from './pipeline.ts';
import { commonHeaders } from './response.ts';
import { fromUrlEvent } from './request.ts';
import type { BoundStreamRoute } from './route.ts';
import { RouteTable } from './route-table.ts';

/** The Lambda runtime's streaming API (a global in Node managed runtimes; shimmed locally). */
export interface AwsLambdaStreaming {
  streamifyResponse(handler: StreamingLambdaHandler): StreamingLambdaHandler;
  HttpResponseStream: { from(stream: Writable, prelude: { statusCode: number; headers: Record<string, string> }): Writable };
}

export type StreamingLambdaHandler = (event: APIGatewayProxyEventV2, responseStream: Writable, context?: Context) => Promise<void>;

/** `@types/aws-lambda` types the global loosely; the platform uses it through this narrower view. */
function lambdaRuntime(): AwsLambdaStreaming {
  const runtime = (globalThis as unknown as { awslambda?: AwsLambdaStreaming }).awslambda;
  if (runtime === undefined) throw new Error('awslambda streaming API is not available (install the local shim first)');
  return runtime;
}

/** A sink over the Lambda response stream: the prelude (status, headers) goes first, then chunks as written. */
function lambdaSink(responseStream: Writable): StreamSink {
  let stream: Writable | undefined;
  const closed = new AbortController();
  responseStream.once('close', () => {
    if (!responseStream.writableFinished) closed.abort();
  });
  responseStream.once('error', () => closed.abort());
  return {
    closed: closed.signal,
    start(statusCode, headers) {
      stream = lambdaRuntime().HttpResponseStream.from(responseStream, { statusCode, headers });
    },
    write(chunk) {
      const target = stream;
      if (target === undefined) return Promise.reject(new Error('stream not started'));
      return new Promise((resolve) => (target.write(chunk) ? resolve() : target.once('drain', () => resolve())));
    },
    end() {
      const target = stream ?? responseStream;
      return new Promise((resolve) => {
        if (target.writableEnded) resolve();
        else target.end(() => resolve());
      });
    },
  };
}

/**
 * The handler of a response-streaming function URL. Function URLs carry no route template, so the
 * path is matched here against the manifest's streaming routes.
 */
export function createStreamHandler(bound: readonly BoundStreamRoute[], ports: () => Ports): StreamingLambdaHandler {
  const byKey = new Map(bound.map((b) => [`${b.spec.method} ${b.spec.path}`, b]));
  const table = new RouteTable(bound.map((b) => b.spec));
  return lambdaRuntime().streamifyResponse(async (event, responseStream) => {
    const method = event.requestContext.http.method.toUpperCase();
    const path = event.rawPath;
    const sink = lambdaSink(responseStream);
    const match = table.match(method, path);
    if (match.kind !== 'found') {
      const error = match.kind === 'wrong-method' ? new MethodNotAllowedError(method, match.allowed) : new NotFoundError(`No endpoint at ${method} ${path}.`);
      const failure = toErrorResponse(error);
      const requestId = event.requestContext.requestId;
      sink.start(failure.status, { ...commonHeaders(requestId), ...failure.headers, 'content-type': 'application/json; charset=utf-8' });
      await sink.write(Buffer.from(JSON.stringify(errorBody('B', failure.code, failure.message, lineageOf(requestId, undefined)))));
      await sink.end();
      return;
    }
    const route = byKey.get(`${match.route.method} ${match.route.path}`)!;
    await handleStreamRequest(route, fromUrlEvent(event, path, match.params), ports(), sink);
  });
}

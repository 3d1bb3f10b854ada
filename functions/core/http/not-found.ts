import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { RouteSpec } from '../../../lib/manifest/types.ts';
import type { Logger } from '../logger.ts';
import { MethodNotAllowedError, NotFoundError } from '../errors.ts';
import { errorBody } from './envelope.ts';
import { toErrorResponse } from './error-response.ts';
import { lineageOf, LINEAGE_HEADER } from './lineage.ts';
import { commonHeaders, json, type HttpResponse } from './response.ts';
import { RouteTable } from './route-table.ts';

// Apart from api-gateway.ts, which imports the request pipeline: the fallback function bundles
// this file alone, not the pipeline's stores, SDK clients and zod schemas it never runs.

/** A Lambda handler behind API Gateway's REST API (here, not in api-gateway.ts, which imports this file). */
export type RestHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/**
 * Answers paths no route has (404) and known paths called with the wrong method (405), in envelope
 * B. `routes` are the routes of the one host the fallback serves.
 */
export function createFallbackHandler(routes: readonly Pick<RouteSpec, 'method' | 'path'>[], log: () => Logger | null = () => null): RestHandler {
  const table = new RouteTable(routes);
  return async (event) => {
    // Matched on the path within the host (the proxy parameter), but named as the client asked
    // for it (`event.path`: with the local host prefix, `/cdn/widget.js`, or a custom domain's
    // base path), so the message points at the request that was actually sent.
    const hostPath = event.pathParameters?.['proxy'] !== undefined ? `/${event.pathParameters['proxy']}` : event.path;
    const path = event.path;
    const match = table.match(event.httpMethod, hostPath);
    const error =
      match.kind === 'wrong-method'
        ? new MethodNotAllowedError(event.httpMethod, match.allowed)
        : new NotFoundError(`No endpoint at ${event.httpMethod} ${path}.`);
    const response = notFoundResponse(event, error);
    // Probes and client mistakes show up in the logs like any other request.
    log()?.info('request', {
      requestId: event.requestContext?.requestId,
      route: 'fallback',
      method: event.httpMethod,
      path,
      status: response.statusCode,
      userId: null,
    });
    return response;
  };
}

/** A 404 or 405 in envelope B, for a request no route takes. */
export function notFoundResponse(event: APIGatewayProxyEvent, error: Error): HttpResponse {
  const requestId = event.requestContext?.requestId ?? '';
  const lineage = lineageOf(requestId, event.headers?.[LINEAGE_HEADER] ?? event.headers?.['X-Svc-Lineage']);
  const failure = toErrorResponse(error);
  return json(failure.status, errorBody('B', failure.code, failure.message, lineage), { ...commonHeaders(requestId), ...failure.headers });
}

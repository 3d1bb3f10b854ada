import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { RouteSpec } from '../../../lib/manifest/types.ts';
import type { Ports } from '../../ports.ts';
import type { Logger } from '../logger.ts';
import { MethodNotAllowedError, NotFoundError } from '../errors.ts';
import { errorBody } from './envelope.ts';
import { toErrorResponse } from './error-response.ts';
import { lineageOf, LINEAGE_HEADER } from './lineage.ts';
import { commonHeaders, handleRequest, json, type HttpResponse } from './pipeline.ts';
import { fromRestEvent } from './request.ts';
import type { BoundRoute } from './route.ts';
import { RouteTable } from './route-table.ts';

export type RestHandler = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/**
 * The Lambda handler of one area: API Gateway gives the matched template in `event.resource`, so
 * dispatch is a map lookup on `METHOD resource`.
 */
export function createRestHandler(bound: readonly BoundRoute[], platform: () => Ports): RestHandler {
  const byKey = new Map(bound.map((b) => [`${b.spec.method} ${b.spec.path}`, b]));
  return async (event) => {
    const route = byKey.get(`${event.httpMethod.toUpperCase()} ${event.resource}`);
    if (route === undefined) return notFoundResponse(event, new NotFoundError(`No route for ${event.httpMethod} ${event.resource}.`));
    return handleRequest(route, fromRestEvent(event), platform());
  };
}

/**
 * Answers paths no route has (404) and known paths called with the wrong method (405), in envelope
 * B. `routes` are the routes of the one host the fallback serves.
 */
export function createFallbackHandler(routes: readonly Pick<RouteSpec, 'method' | 'path'>[], log: () => Logger | null = () => null): RestHandler {
  const table = new RouteTable(routes);
  return async (event) => {
    const path = event.pathParameters?.['proxy'] !== undefined ? `/${event.pathParameters['proxy']}` : event.path;
    const match = table.match(event.httpMethod, path);
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

function notFoundResponse(event: APIGatewayProxyEvent, error: Error): HttpResponse {
  const requestId = event.requestContext?.requestId ?? '';
  const lineage = lineageOf(requestId, event.headers?.[LINEAGE_HEADER] ?? event.headers?.['X-Svc-Lineage']);
  const failure = toErrorResponse(error);
  return json(failure.status, errorBody('B', failure.code, failure.message, lineage), { ...commonHeaders(requestId), ...failure.headers });
}

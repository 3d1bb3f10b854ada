import type { Ports } from '../../ports.ts';
import { NotFoundError } from '../errors.ts';
import { notFoundResponse, type RestHandler } from './not-found.ts';
import { handleRequest } from './pipeline.ts';
import { fromRestEvent } from './request.ts';
import type { BoundRoute } from './route.ts';

export type { RestHandler };

/**
 * The Lambda handler of one area: API Gateway gives the matched template in `event.resource`, so
 * dispatch is a map lookup on `METHOD resource`.
 */
export function createRestHandler(bound: readonly BoundRoute[], ports: () => Ports): RestHandler {
  const byKey = new Map(bound.map((b) => [`${b.spec.method} ${b.spec.path}`, b]));
  return async (event) => {
    const route = byKey.get(`${event.httpMethod.toUpperCase()} ${event.resource}`);
    if (route === undefined) return notFoundResponse(event, new NotFoundError(`No route for ${event.httpMethod} ${event.resource}.`));
    return handleRequest(route, fromRestEvent(event), ports());
  };
}

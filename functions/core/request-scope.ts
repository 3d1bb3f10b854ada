import type { Actor } from './auth/actor.ts';
import type { Lineage } from './http/lineage.ts';
import type { PublicUrls } from './http/public-urls.ts';
import type { Logger } from './logger.ts';

/**
 * Who is asking, and under which request: what a service needs besides its input and its ports.
 * The pipeline builds it once per request; a route's context is one, so handlers pass `ctx` on.
 */
export interface RequestScope {
  readonly actor: Actor;
  /** The request's id and its place in a chain of calls (agent -> MCP -> action). */
  readonly lineage: Lineage;
  /** The request's logger (request id, route), so services' lines can be traced to it. */
  readonly log: Logger;
  /** The platform's public URLs for this request (configured, or derived from the request's base URL). */
  readonly urls: PublicUrls;
  /** Aborted when the route's timeout passes or a streaming client goes away: stop work then. */
  readonly signal: AbortSignal;
}

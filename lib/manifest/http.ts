import type { RouteSpec } from './types.ts';

/**
 * HTTP facts both wirings share. Plain data and functions only: functions/cloud.ts imports this
 * module into every Lambda bundle, so it must not pull in aws-cdk-lib or the local server.
 */

/**
 * Routes the REST API serves: buffered ones on the base host, and MCP, which lives on the base for
 * now. The CDK stack puts exactly these behind API Gateway, and the fallback function answers 404
 * and 405 against the same list.
 */
export function isRestApiRoute(route: RouteSpec): boolean {
  return route.mode === 'buffered' && (route.host === 'base' || route.host === 'mcp');
}

/**
 * Request headers a browser may send cross-origin: the CORS preflight answer of the local server,
 * the REST API and the streaming function URLs, so browsers see one platform.
 */
export const CORS_ALLOWED_HEADERS: readonly string[] = [
  'authorization',
  'content-type',
  'x-svc-userid',
  'x-svc-secretkey',
  'x-svc-lineage',
  // Browser MCP clients send these after `initialize`.
  'mcp-protocol-version',
  'mcp-session-id',
  'last-event-id',
];

/** Response headers browsers may read cross-origin: every response and the function URLs declare the same list. */
export const CORS_EXPOSED_HEADERS: readonly string[] = ['x-request-id', 'x-conversation-id', 'retry-after', 'x-mcp-server-version', 'mcp-session-id'];

import type { RouteSpec } from '../lib/manifest/types.ts';
import type { RestHandler } from './core/http/api-gateway.ts';
import { createFallbackHandler } from './core/http/not-found.ts';
import { createLogger, type LogLevel } from './core/logger.ts';

/**
 * The catch-all function behind `ANY /{proxy+}`: 404 and 405 in the platform's envelope, from the
 * method and path of every REST API route (its generated entry lists them). Apart from
 * functions/cloud.ts, whose configuration, identity verifier and adapters it does not need: it
 * answers from the route table alone, with only a log level (bad values log at info).
 */
export function fallbackHandler(routes: readonly Pick<RouteSpec, 'method' | 'path'>[]): RestHandler {
  const log = createLogger(logLevelOf(process.env['LOG_LEVEL']), { stage: process.env['STAGE'] ?? 'cloud' });
  return createFallbackHandler(routes, () => log);
}

function logLevelOf(value: string | undefined): LogLevel {
  return value === 'debug' || value === 'info' || value === 'warn' || value === 'error' || value === 'silent' ? value : 'info';
}

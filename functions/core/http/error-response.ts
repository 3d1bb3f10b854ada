import { PlatformError, MethodNotAllowedError, RateLimitedError, ValidationError, type ErrorKind } from '../errors.ts';

/** The one place failure kinds become HTTP statuses and codes. */
const HTTP_BY_KIND: Record<ErrorKind, { status: number; code: string }> = {
  'invalid-input': { status: 400, code: 'INVALID_PARAMETERS' },
  'malformed-json': { status: 400, code: 'MALFORMED_JSON' },
  'unsupported-content-type': { status: 400, code: 'UNSUPPORTED_CONTENT_TYPE' },
  'authentication-required': { status: 401, code: 'AUTHENTICATION_REQUIRED' },
  'insufficient-credits': { status: 402, code: 'INSUFFICIENT_CREDITS' },
  'access-denied': { status: 403, code: 'ACCESS_DENIED' },
  'alias-required': { status: 403, code: 'ALIAS_REQUIRED' },
  'not-found': { status: 404, code: 'NOT_FOUND' },
  'method-not-allowed': { status: 405, code: 'METHOD_NOT_ALLOWED' },
  conflict: { status: 409, code: 'CONFLICT' },
  gone: { status: 410, code: 'GONE' },
  'payload-too-large': { status: 413, code: 'PAYLOAD_TOO_LARGE' },
  'rate-limited': { status: 429, code: 'RATE_LIMITED' },
  'execution-failed': { status: 500, code: 'EXECUTION_FAILED' },
  'upstream-failed': { status: 502, code: 'UPSTREAM_FAILED' },
  unavailable: { status: 503, code: 'SERVICE_UNAVAILABLE' },
  timeout: { status: 504, code: 'TIMEOUT' },
};

export interface ErrorResponse {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  readonly headers: Record<string, string>;
  /** False for unexpected errors: they are logged with their stack and answered with a generic 500. */
  readonly expected: boolean;
}

export function toErrorResponse(error: unknown): ErrorResponse {
  if (!(error instanceof PlatformError)) {
    return { status: 500, code: 'INTERNAL_ERROR', message: 'Internal server error.', headers: {}, expected: false };
  }
  const { status, code } = HTTP_BY_KIND[error.kind];
  const headers: Record<string, string> = {};
  if (error instanceof RateLimitedError) headers['retry-after'] = String(error.retryAfterSec);
  if (error instanceof MethodNotAllowedError) headers['allow'] = error.allowed.join(', ');
  // RFC 9110 15.5.2 (and the MCP specification's authorization section): a 401 names the scheme to use.
  if (error.kind === 'authentication-required') headers['www-authenticate'] = 'Bearer realm="agent-platform"';
  const message = error instanceof ValidationError && error.issues.length > 0 ? `${error.message}: ${error.issues.join('; ')}` : error.message;
  return { status, code: error.code ?? code, message, headers, expected: true };
}

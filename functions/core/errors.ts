/**
 * One error class per failure kind. Services throw these; `http/error-response.ts` is the one
 * place that maps a kind to an HTTP status and code. Messages are written for the caller: they
 * name the problem and never carry internals.
 */
export type ErrorKind =
  | 'invalid-input'
  | 'malformed-json'
  | 'unsupported-content-type'
  | 'authentication-required'
  | 'insufficient-credits'
  | 'access-denied'
  | 'alias-required'
  | 'not-found'
  | 'method-not-allowed'
  | 'conflict'
  | 'gone'
  | 'payload-too-large'
  | 'rate-limited'
  | 'execution-failed'
  | 'upstream-failed'
  | 'unavailable'
  | 'timeout';

export abstract class PlatformError extends Error {
  abstract readonly kind: ErrorKind;
  /** Overrides the kind's default error code (e.g. `AGENT_NOT_FOUND` instead of `NOT_FOUND`). */
  readonly code: string | undefined;

  constructor(message: string, code?: string) {
    super(message);
    this.name = new.target.name;
    this.code = code;
  }
}

/** A field or parameter is missing or invalid. `issues` lists every problem found. */
export class ValidationError extends PlatformError {
  readonly kind = 'invalid-input';
  constructor(
    message: string,
    readonly issues: readonly string[] = [],
    code?: string,
  ) {
    super(message, code);
  }
}

export class MalformedJsonError extends PlatformError {
  readonly kind = 'malformed-json';
}

export class UnsupportedContentTypeError extends PlatformError {
  readonly kind = 'unsupported-content-type';
}

/** Never says which part of the credential (or of a platform's request signature) was wrong. */
export class AuthenticationRequiredError extends PlatformError {
  readonly kind = 'authentication-required';
  constructor(message = 'Authentication required: provide a valid access token or user id and secret key.', code?: string) {
    super(message, code);
  }
}

export class InsufficientCreditsError extends PlatformError {
  readonly kind = 'insufficient-credits';
  constructor(
    readonly required: number,
    readonly available: number,
  ) {
    super(`Insufficient credits: this call costs ${required} and the balance is ${available}.`);
  }
}

export class AccessDeniedError extends PlatformError {
  readonly kind = 'access-denied';
}

export class AliasRequiredError extends PlatformError {
  readonly kind = 'alias-required';
  constructor() {
    super('An alias is required before creating resources. Set one with POST /user/alias {"alias": "your-name"}.');
  }
}

export class NotFoundError extends PlatformError {
  readonly kind = 'not-found';
}

export class MethodNotAllowedError extends PlatformError {
  readonly kind = 'method-not-allowed';
  constructor(
    method: string,
    readonly allowed: readonly string[],
  ) {
    super(`Method ${method} is not allowed here; use ${allowed.join(', ')}.`);
  }
}

export class ConflictError extends PlatformError {
  readonly kind = 'conflict';
}

export class GoneError extends PlatformError {
  readonly kind = 'gone';
}

export class PayloadTooLargeError extends PlatformError {
  readonly kind = 'payload-too-large';
  /** `message` when what is too large is not the request body itself (a decoded upload). */
  constructor(
    readonly limitBytes: number,
    message = `Request body is larger than this endpoint's limit of ${limitBytes} bytes.`,
  ) {
    super(message);
  }
}

export class RateLimitedError extends PlatformError {
  readonly kind = 'rate-limited';
  /** `message` and `code` name another limit than a route's request rate (e.g. concurrency, functions/core/admission.ts). */
  constructor(
    readonly retryAfterSec: number,
    message = `Rate limit exceeded; retry after ${retryAfterSec} seconds.`,
    code?: string,
  ) {
    super(message, code);
  }
}

/**
 * A quota its owner set on a credential is spent (an embed token's credit or voice-minute limit):
 * 429 like a rate limit, but no waiting helps until the owner raises it, so no Retry-After.
 */
export class QuotaExceededError extends PlatformError {
  readonly kind = 'rate-limited';
  constructor(message: string) {
    super(message, 'QUOTA_EXCEEDED');
  }
}

/** User code failed; the message is the user's own error text, never a platform stack. */
export class ExecutionFailedError extends PlatformError {
  readonly kind = 'execution-failed';
}

/** A service the platform calls on the caller's behalf (e.g. an OAuth token endpoint) failed or gave an unusable answer. */
export class UpstreamError extends PlatformError {
  readonly kind = 'upstream-failed';
}

/**
 * Something the platform needs to serve this request is missing or not running (e.g. no Python
 * interpreter for user code): retrying will not help until the operator fixes it, and the message
 * says how. Unlike UpstreamError, nothing answered wrongly: there was nothing to ask.
 */
export class ServiceUnavailableError extends PlatformError {
  readonly kind = 'unavailable';
}

export class TimeoutError extends PlatformError {
  readonly kind = 'timeout';
}

import type { ErrorResponse } from './error-response.ts';

/**
 * JSON-RPC 2.0 error codes for the platform's refusals on a JSON-RPC route (the MCP endpoint).
 * -32700 and -32600 are JSON-RPC's own; -32000 and -32001 are the ones the MCP SDK already uses for
 * "connection closed" and "request timeout" (and which the MCP runtime answers with), so the
 * platform's other conditions take -32010..-32015 of the server-error range -32000..-32099.
 * `error.data.code` always carries the platform's code (`INSUFFICIENT_CREDITS`, `MCP_SERVER_NOT_FOUND`, ...).
 */
export const JSON_RPC_ERROR = {
  parseError: -32700,
  invalidRequest: -32600,
  internalError: -32603,
  unavailable: -32000,
  timeout: -32001,
  authenticationRequired: -32010,
  insufficientCredits: -32011,
  accessDenied: -32012,
  notFound: -32013,
  conflict: -32014,
  rateLimited: -32015,
} as const;

/** By HTTP status, which `toErrorResponse` derives from the failure's kind (one source of truth). */
function codeFor(status: number): number {
  switch (status) {
    case 400:
    case 413:
      return JSON_RPC_ERROR.invalidRequest;
    case 401:
      return JSON_RPC_ERROR.authenticationRequired;
    case 402:
      return JSON_RPC_ERROR.insufficientCredits;
    case 403:
      return JSON_RPC_ERROR.accessDenied;
    case 404:
    case 410:
      return JSON_RPC_ERROR.notFound;
    // The Streamable HTTP transport's own answer to a method it does not serve.
    case 405:
      return JSON_RPC_ERROR.unavailable;
    case 409:
      return JSON_RPC_ERROR.conflict;
    case 429:
      return JSON_RPC_ERROR.rateLimited;
    case 502:
    case 503:
      return JSON_RPC_ERROR.unavailable;
    case 504:
      return JSON_RPC_ERROR.timeout;
    default:
      return JSON_RPC_ERROR.internalError;
  }
}

/**
 * The id to answer with: a single request's own id, so the client can match the error to its call;
 * null for a batch, a notification or a body that is not JSON (as JSON-RPC prescribes).
 */
export function jsonRpcRequestId(body: Buffer | null): string | number | null {
  if (body === null || body.length === 0) return null;
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
    const id = (parsed as { id?: unknown }).id;
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
}

export interface JsonRpcErrorBody {
  readonly jsonrpc: '2.0';
  readonly id: string | number | null;
  readonly error: { readonly code: number; readonly message: string; readonly data: { readonly code: string } };
}

/** A refusal as a JSON-RPC error object; the HTTP status and headers stay those of `failure`. */
export function jsonRpcErrorBody(failure: ErrorResponse, requestBody: Buffer | null): JsonRpcErrorBody {
  const code = failure.code === 'MALFORMED_JSON' ? JSON_RPC_ERROR.parseError : codeFor(failure.status);
  return { jsonrpc: '2.0', id: jsonRpcRequestId(requestBody), error: { code, message: failure.message, data: { code: failure.code } } };
}

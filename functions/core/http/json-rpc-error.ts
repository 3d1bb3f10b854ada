import * as z from 'zod';
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
  invalidParams: -32602,
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

const jsonRpcId = z.union([z.string(), z.number()]);

/**
 * One JSON-RPC 2.0 message a client sends to an MCP server (MCP specification, "Base protocol"):
 * a request (`id`), a notification (none) or an answer to a server's request (`result` or `error`).
 * Other fields pass through untouched: the server reads them.
 */
const jsonRpcMessage = z
  .looseObject({
    jsonrpc: z.literal('2.0').describe('Always `2.0`; anything else is refused with -32600 (Invalid Request).'),
    id: jsonRpcId.optional().describe('Present on requests and answers, absent on notifications.'),
    method: z.string().min(1).optional().describe('The MCP method, e.g. `initialize`, `tools/list`, `tools/call`.'),
    params: z
      .looseObject({
        name: z.string().optional().describe('`tools/call`: the tool to call (required there; -32602 when missing).'),
        arguments: z.record(z.string(), z.unknown()).optional().describe("`tools/call`: the tool's arguments."),
      })
      .optional(),
    result: z.unknown().optional(),
    error: z.looseObject({ code: z.number().int(), message: z.string() }).optional(),
  })
  .superRefine((message, ctx) => {
    const isAnswer = message.result !== undefined || message.error !== undefined;
    if (message.method === undefined && !isAnswer) ctx.addIssue({ code: 'custom', path: ['method'], message: 'is required (or result/error for an answer)' });
    if (message.method === undefined && isAnswer && message.id === undefined)
      ctx.addIssue({ code: 'custom', path: ['id'], message: 'is required on an answer' });
    if (message.method === 'tools/call' && typeof message.params?.name !== 'string')
      ctx.addIssue({ code: 'custom', path: ['params', 'name'], message: 'is required for tools/call' });
  });

/**
 * The body of a POST to an MCP endpoint: one message, or a batch of them (protocol revisions before
 * 2025-06-18). Checked by the MCP endpoints (mcp.module.ts) before the request reaches the server, so every hosted server refuses a
 * malformed envelope with the specification's codes (`jsonRpcValidationCode`) whatever SDK it uses.
 */
export const jsonRpcBody = z.union([
  jsonRpcMessage,
  z.array(jsonRpcMessage).min(1, 'a batch must hold at least one message'),
  // What the pipeline reads for no body at all (a GET, which the transport answers 405, or an empty
  // POST, which the server answers -32700): passed on for the server to answer as it does.
  z.strictObject({}).describe('No body'),
]);

/**
 * The JSON-RPC code for a POST body that parsed as JSON but failed `jsonRpcBody`: -32602 (Invalid
 * params) when every message is a well-formed request whose only fault is its params, -32600
 * (Invalid Request) otherwise.
 */
export function jsonRpcValidationCode(parsed: unknown): -32600 | -32602 {
  const messages = Array.isArray(parsed) ? parsed : [parsed];
  if (messages.length === 0) return -32600;
  const paramsOnly = messages.every((message) => {
    if (typeof message !== 'object' || message === null) return false;
    const { jsonrpc, method } = message as { jsonrpc?: unknown; method?: unknown };
    if (jsonrpc !== '2.0' || typeof method !== 'string' || method.length === 0) return false;
    return true;
  });
  return paramsOnly && messages.some((message) => !jsonRpcMessage.safeParse(message).success) ? -32602 : -32600;
}

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

function parsedOrNull(body: Buffer | null): unknown {
  if (body === null || body.length === 0) return null;
  try {
    return JSON.parse(body.toString('utf8'));
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
  const code =
    failure.code === 'MALFORMED_JSON'
      ? JSON_RPC_ERROR.parseError
      : failure.code === 'INVALID_PARAMETERS'
        ? jsonRpcValidationCode(parsedOrNull(requestBody))
        : codeFor(failure.status);
  return { jsonrpc: '2.0', id: jsonRpcRequestId(requestBody), error: { code, message: failure.message, data: { code: failure.code } } };
}

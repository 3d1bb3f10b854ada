/**
 * What both McpRuntime adapters share: the payloads the MCP host takes (the local host's
 * `POST /inspect` and `POST /handle` bodies are the Lambda entry's events without `op`), checks
 * of its answers, and the JSON-RPC error responses a runtime failure is reported as.
 * The host itself is plain JavaScript (mcp-host/core.mjs) and builds the same shapes.
 */
import type { McpHttpRequest, McpHttpResponse, McpInspection, McpSource } from './mcp-runtime.ts';

/** JSON-RPC error codes, as the MCP SDK names them (`ErrorCode`). */
export const MCP_ERROR_CODE = {
  /** The connection to the server ended: crashes, unavailability, cancellation. */
  connectionClosed: -32000,
  requestTimeout: -32001,
  internalError: -32603,
} as const;

export interface InspectPayload {
  readonly serverId: string;
  readonly version: number;
  readonly sourceCode: string;
  readonly timeoutMs: number;
}

export interface HandlePayload extends InspectPayload {
  readonly request: McpHttpRequest;
  readonly env: Readonly<Record<string, string>>;
}

export function inspectPayload(source: McpSource, timeoutMs: number): InspectPayload {
  return { serverId: source.serverId, version: source.version, sourceCode: source.sourceCode, timeoutMs };
}

export function handlePayload(source: McpSource, request: McpHttpRequest, env: Readonly<Record<string, string>>, timeoutMs: number): HandlePayload {
  return { ...inspectPayload(source, timeoutMs), request: { method: request.method, headers: request.headers, body: request.body }, env };
}

/**
 * A JSON-RPC error answer (id null when the request had none) with an HTTP status; `data.code` is the
 * platform's code for the condition, as on the errors the platform answers itself (core/http/json-rpc-error.ts).
 */
export function jsonRpcErrorResponse(status: number, id: string | number | null, code: number, message: string, platformCode: string): McpHttpResponse {
  return {
    status,
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id, error: { code, message, data: { code: platformCode } } }),
  };
}

/** Marks an answer given before the request reached any server code (see `McpHttpResponse.notStarted`). */
export function notStarted(response: McpHttpResponse): McpHttpResponse {
  return { ...response, notStarted: true };
}

/** The id of a single JSON-RPC request body; null for notifications, batches and unparsable bodies. */
export function jsonRpcIdOf(body: string): string | number | null {
  try {
    const parsed: unknown = JSON.parse(body);
    const id = typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as { id?: unknown }).id : undefined;
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
}

/**
 * `inspect` could not be answered for reasons that are not the source's (no host process could be
 * started, the runtime function could not be invoked); `handle` reports these as 5xx responses.
 */
export class McpRuntimeUnavailableError extends Error {}

/** The host's answer was not of the agreed shape. */
export class HostProtocolError extends Error {}

/** Checks an answer to `inspect`. Throws HostProtocolError. */
export function parseInspection(value: unknown): McpInspection {
  if (typeof value !== 'object' || value === null) throw new HostProtocolError('the MCP host answered inspect with something other than an object');
  const { ok, tools, error } = value as { ok?: unknown; tools?: unknown; error?: unknown };
  if (ok === true && Array.isArray(tools) && tools.every((name) => typeof name === 'string')) return { ok: true, tools: [...(tools as string[])] };
  if (ok === false && typeof error === 'string') return { ok: false, error };
  throw new HostProtocolError('the MCP host answered inspect without {ok, tools} or {ok: false, error}');
}

/** Checks an answer to `handle`. Throws HostProtocolError. */
export function parseHttpResponse(value: unknown): McpHttpResponse {
  if (typeof value !== 'object' || value === null) throw new HostProtocolError('the MCP host answered handle with something other than an object');
  const { status, headers, body } = value as { status?: unknown; headers?: unknown; body?: unknown };
  if (typeof status !== 'number' || !Number.isInteger(status) || status < 100 || status > 599 || typeof body !== 'string') {
    throw new HostProtocolError('the MCP host answered handle without {status, headers, body}');
  }
  const flat: Record<string, string> = {};
  if (typeof headers === 'object' && headers !== null) {
    for (const [name, headerValue] of Object.entries(headers)) if (typeof headerValue === 'string') flat[name.toLowerCase()] = headerValue;
  }
  return { status, headers: flat, body };
}

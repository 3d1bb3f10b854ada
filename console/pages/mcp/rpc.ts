import { PlatformApiError, type Api } from '../../api.ts';
import { eventStreamMessages, jsonMessages } from './event-stream.ts';

/** A tool as `tools/list` describes it. */
export interface McpTool {
  readonly name: string;
  readonly title?: string;
  readonly description?: string;
  readonly inputSchema?: JsonSchema;
}

/** The part of JSON Schema a tool's `inputSchema` uses (what the console builds a form from). */
export interface JsonSchema {
  readonly type?: string | readonly string[];
  readonly properties?: Readonly<Record<string, JsonSchema>>;
  readonly required?: readonly string[];
  readonly enum?: readonly unknown[];
  readonly description?: string;
  readonly title?: string;
  readonly default?: unknown;
  readonly items?: JsonSchema;
  readonly [key: string]: unknown;
}

/** One piece of a tool's result (`text`, `image`, `resource`, ...). */
export interface McpContent {
  readonly type: string;
  readonly text?: string;
  readonly data?: string;
  readonly mimeType?: string;
  readonly [key: string]: unknown;
}

export interface McpAnswer<T> {
  readonly result: T;
  /** The snapshot that answered (`X-Mcp-Server-Version`), when the endpoint said. */
  readonly version: number | null;
}

/** The MCP endpoint of a server on the MCP host, pinned to a version when `version` is given (SPEC 4.4: `?v=N`). */
export function endpointOf(api: Api, serverId: string, version?: number | null): string {
  const base = `${api.hosts.mcpUrl.replace(/\/+$/, '')}/mcp/${encodeURIComponent(serverId)}`;
  return version === undefined || version === null ? base : `${base}?v=${version}`;
}

let nextId = 1;

/**
 * One JSON-RPC request POSTed to an MCP endpoint with the user's token, as the Streamable HTTP
 * transport has it: the `Accept` header names both JSON and an event stream, and the answer may come
 * as either (from an event stream, the message answering this request's id).
 */
export async function mcpRequest<T>(api: Api, url: string, method: string, params?: Record<string, unknown>): Promise<McpAnswer<T>> {
  const id = nextId++;
  const response = await api.fetchAuthed(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }),
  });
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const text = await response.text();
  const messages = (response.headers.get('content-type') ?? '').includes('text/event-stream') ? eventStreamMessages(text) : jsonMessages(text);
  const answer = messages.find((m) => m.id === id) ?? messages.find((m) => 'result' in m || 'error' in m);
  if (answer?.error !== undefined) {
    const data = answer.error.data as { code?: unknown } | undefined;
    const code = typeof data?.code === 'string' ? data.code : `JSON-RPC ${answer.error.code}`;
    throw new PlatformApiError(response.status, code, answer.error.message, requestId);
  }
  if (answer === undefined || !response.ok)
    throw new PlatformApiError(response.status, `HTTP_${response.status}`, text.slice(0, 300) || `HTTP ${response.status}`, requestId);
  const version = Number(response.headers.get('x-mcp-server-version'));
  return { result: answer.result as T, version: Number.isInteger(version) && version > 0 ? version : null };
}

/**
 * The MCP runtime port: runs user-authored Node.js MCP servers. A source exports
 * `createMcpServer()` returning an `McpServer` of `@modelcontextprotocol/sdk`; each MCP request is
 * handled statelessly (Streamable HTTP, JSON responses). Locally an adapter keeps one Node runtime
 * process per tenant; in the cloud a shared runtime Lambda runs in tenant-isolation mode.
 */

/** One immutable version of a server's source; built servers are cached per (serverId, version). */
export interface McpSource {
  readonly serverId: string;
  readonly version: number;
  readonly sourceCode: string;
}

/** What loading a source found: its tool names, or why it does not load. */
export type McpInspection = { readonly ok: true; readonly tools: string[] } | { readonly ok: false; readonly error: string };

export interface McpHttpRequest {
  readonly method: 'GET' | 'POST' | 'DELETE';
  /** Lower-cased names; `accept` and `content-type` matter to the MCP transport. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export interface McpHttpResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /**
   * Set by the adapter, from what it observed, when the request never reached the server's code
   * (no runtime could be had, or the caller left first): such a call costs nothing. A status alone
   * proves nothing, since the server's code chooses its answers.
   */
  readonly notStarted?: true;
}

export interface McpRuntime {
  /**
   * Loads `source` in `tenantId`'s runtime, builds the server, and lists its tools (`tools/list`).
   * A source that does not load, lacks `createMcpServer`, or throws while building is `ok: false`
   * with the error text (never a platform stack).
   */
  inspect(tenantId: string, source: McpSource): Promise<McpInspection>;
  /**
   * Handles one MCP HTTP request against `source` in `tenantId`'s runtime. `env` is the run's
   * environment (the owner's keys as `SERVICENAME_KEY`), visible to that tenant's code only.
   * Runtime failures are answered as JSON-RPC errors or 5xx responses, never thrown.
   */
  handle(tenantId: string, source: McpSource, request: McpHttpRequest, env: Readonly<Record<string, string>>, signal?: AbortSignal): Promise<McpHttpResponse>;
}

/**
 * The cloud McpRuntime adapter: a synchronous `Invoke` of the MCP runtime function, whose handler
 * is mcp-host/lambda.mjs (the local host's request handling without the HTTP server).
 *
 * - The function is created in tenant-isolation mode (`TenancyConfig: PER_TENANT`); every invoke
 *   passes `TenantId` = the server's owner, so an execution environment only runs one owner's code
 *   and keeps its loaded servers warm for that owner only (like a local host process).
 * - Payload: `{op: 'inspect' | 'handle', ...}` with the same fields as the local host's bodies
 *   (mcp-protocol.ts). Answers are JSON: `{ok, tools}` / `{ok: false, error}` or `{status, headers, body}`.
 * - A failure of the function itself (`FunctionError`: a crash such as `process.exit`, Lambda's own
 *   timeout, out of memory) makes `inspect` `ok: false` with Lambda's message (the owner's code
 *   caused it) and `handle` a 502/504 JSON-RPC error. A failure to invoke at all (throttling,
 *   permissions, network) makes `inspect` throw McpRuntimeUnavailableError and `handle` a 429/503,
 *   marked `notStarted` when Lambda refused it (a 4xx) or the caller cancelled before it was sent.
 * - Lambda limits a synchronous payload to 6 MB each way, which bounds sources plus requests.
 */
import { InvokeCommand, type InvokeCommandOutput, LambdaClient } from '@aws-sdk/client-lambda';
import { ConfigError, type Config } from '../../core/config.ts';
import {
  handlePayload,
  HostProtocolError,
  inspectPayload,
  jsonRpcErrorResponse,
  jsonRpcIdOf,
  MCP_ERROR_CODE,
  McpRuntimeUnavailableError,
  notStarted,
  parseHttpResponse,
  parseInspection,
} from '../../runtimes/mcp-protocol.ts';
import type { McpHttpRequest, McpHttpResponse, McpInspection, McpRuntime, McpSource } from '../../runtimes/mcp-runtime.ts';

export interface LambdaMcpRuntimeOptions {
  /** Only `send` is used. */
  readonly lambda: Pick<LambdaClient, 'send'>;
  /** Name or ARN of the MCP runtime function (created with `TenancyConfig: PER_TENANT`). */
  readonly functionName: string;
  /** Version or alias to invoke, if any. */
  readonly qualifier?: string;
  /** A request's time limit inside the function, answered with 504 (default 30 s; capped by the function's own timeout). */
  readonly requestTimeoutMs?: number;
}

/** What a synchronous invoke returned: the decoded JSON answer, or Lambda's report of a function failure. */
export type InvokeAnswer =
  { readonly kind: 'answer'; readonly value: unknown } | { readonly kind: 'function-error'; readonly errorType: string; readonly message: string };

/** Decodes an `Invoke` response (throws HostProtocolError when the payload is not JSON). */
export function decodeInvokeOutput(output: Pick<InvokeCommandOutput, 'FunctionError' | 'Payload'>): InvokeAnswer {
  const text = output.Payload ? Buffer.from(output.Payload).toString('utf8') : '';
  if (output.FunctionError) {
    // Lambda's error payload: {errorType, errorMessage, trace?}.
    let errorType = output.FunctionError;
    let message = text.slice(0, 500);
    try {
      const parsed = JSON.parse(text) as { errorType?: unknown; errorMessage?: unknown };
      if (typeof parsed.errorType === 'string') errorType = parsed.errorType;
      if (typeof parsed.errorMessage === 'string') message = parsed.errorMessage;
    } catch {
      // not JSON: keep the raw text
    }
    return { kind: 'function-error', errorType, message };
  }
  try {
    return { kind: 'answer', value: JSON.parse(text) };
  } catch {
    throw new HostProtocolError(`the MCP runtime function answered with a payload that is not JSON: ${text.slice(0, 200)}`);
  }
}

/** Lambda's own timeout shows as `Sandbox.Timedout` (or "Task timed out" in older runtimes). */
function isFunctionTimeout(answer: { errorType: string; message: string }): boolean {
  return /timedout|timed out/i.test(answer.errorType) || /task timed out/i.test(answer.message);
}

/**
 * The Lambda service answered the invoke with a client error (4xx), so it did not run the function.
 * A 5xx or a broken connection proves nothing either way.
 */
function isRefusal(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { $fault?: unknown }).$fault === 'client';
}

function nameOf(error: unknown): string {
  return error instanceof Error ? error.name : 'Error';
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

export function createLambdaMcpRuntime(options: LambdaMcpRuntimeOptions): McpRuntime {
  const { lambda, functionName, qualifier } = options;
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;

  function invoke(tenantId: string, payload: object, signal?: AbortSignal): Promise<InvokeCommandOutput> {
    const command = new InvokeCommand({
      FunctionName: functionName,
      ...(qualifier ? { Qualifier: qualifier } : {}),
      InvocationType: 'RequestResponse',
      TenantId: tenantId,
      Payload: new TextEncoder().encode(JSON.stringify(payload)),
    });
    return lambda.send(command, signal ? { abortSignal: signal } : {});
  }

  async function inspect(tenantId: string, source: McpSource): Promise<McpInspection> {
    let output: InvokeCommandOutput;
    try {
      output = await invoke(tenantId, { op: 'inspect', ...inspectPayload(source, requestTimeoutMs) });
    } catch (error) {
      throw new McpRuntimeUnavailableError(`the MCP runtime function could not be invoked (${nameOf(error)}: ${messageOf(error)})`);
    }
    let answer: InvokeAnswer;
    try {
      answer = decodeInvokeOutput(output);
      if (answer.kind === 'answer') return parseInspection(answer.value);
    } catch (error) {
      throw new McpRuntimeUnavailableError(messageOf(error));
    }
    if (isFunctionTimeout(answer)) return { ok: false, error: `loading the server and listing its tools did not finish in time (${answer.message})` };
    return { ok: false, error: `the server's runtime failed while the source was loaded (${answer.errorType}: ${answer.message})` };
  }

  async function handle(
    tenantId: string,
    source: McpSource,
    request: McpHttpRequest,
    env: Readonly<Record<string, string>>,
    signal?: AbortSignal,
  ): Promise<McpHttpResponse> {
    const id = jsonRpcIdOf(request.body);
    // Cancelled before it was sent: no server code ran.
    if (signal?.aborted) return notStarted(jsonRpcErrorResponse(499, id, MCP_ERROR_CODE.connectionClosed, 'the request was cancelled', 'REQUEST_CANCELLED'));
    let output: InvokeCommandOutput;
    try {
      output = await invoke(tenantId, { op: 'handle', ...handlePayload(source, request, env, requestTimeoutMs) }, signal);
    } catch (error) {
      if (signal?.aborted) return jsonRpcErrorResponse(499, id, MCP_ERROR_CODE.connectionClosed, 'the request was cancelled', 'REQUEST_CANCELLED');
      // Lambda refused the invocation (a 4xx: throttled, no such function, not allowed): no server code ran.
      const answer = (response: McpHttpResponse) => (isRefusal(error) ? notStarted(response) : response);
      if (nameOf(error) === 'TooManyRequestsException')
        return answer(
          jsonRpcErrorResponse(429, id, MCP_ERROR_CODE.connectionClosed, `the MCP runtime is throttled (${messageOf(error)})`, 'RUNTIME_THROTTLED'),
        );
      return answer(
        jsonRpcErrorResponse(
          503,
          id,
          MCP_ERROR_CODE.connectionClosed,
          `the MCP runtime function could not be invoked (${nameOf(error)}: ${messageOf(error)})`,
          'RUNTIME_UNAVAILABLE',
        ),
      );
    }
    try {
      const answer = decodeInvokeOutput(output);
      if (answer.kind === 'answer') return parseHttpResponse(answer.value);
      if (isFunctionTimeout(answer))
        return jsonRpcErrorResponse(504, id, MCP_ERROR_CODE.requestTimeout, `the MCP server did not answer in time (${answer.message})`, 'TIMEOUT');
      return jsonRpcErrorResponse(
        502,
        id,
        MCP_ERROR_CODE.connectionClosed,
        `the MCP server's runtime failed during the request (${answer.errorType}: ${answer.message})`,
        'MCP_SERVER_CRASHED',
      );
    } catch (error) {
      if (!(error instanceof HostProtocolError)) throw error;
      return jsonRpcErrorResponse(502, id, MCP_ERROR_CODE.internalError, error.message, 'MCP_RUNTIME_ERROR');
    }
  }

  return { inspect, handle };
}

/** The `mcpRuntime` port in the cloud: the MCP runtime Lambda, named by MCP_RUNTIME_FUNCTION_NAME. */
export function lambdaMcpRuntime(config: Config): McpRuntime {
  if (!config.MCP_RUNTIME_FUNCTION_NAME)
    throw new ConfigError('Invalid platform configuration: MCP_RUNTIME_FUNCTION_NAME: is required in the cloud to run MCP servers');
  return createLambdaMcpRuntime({ lambda: new LambdaClient({ region: config.AWS_REGION }), functionName: config.MCP_RUNTIME_FUNCTION_NAME });
}

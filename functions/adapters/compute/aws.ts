/**
 * The cloud Compute adapter: invokes the runtime Lambda function, which runs the same HTTP server
 * as the local adapter behind the Lambda Web Adapter (LWA) in response-stream mode.
 *
 * - Each call sends a function-URL-style (API Gateway HTTP API v2) event; LWA turns it into
 *   `POST /invoke` (or `/check`) to the server.
 * - The function is created in tenant isolation mode, so every invoke passes `TenantId`: the owner
 *   of the code, whose runs then only share execution environments with that owner's runs.
 * - In response-stream mode the function's stream is the HTTP integration format: a JSON prelude
 *   `{statusCode, headers, cookies}`, eight NUL bytes, then the body (the runtime's NDJSON).
 */
import { InvokeCommand, InvokeWithResponseStreamCommand, type InvokeWithResponseStreamResponseEvent, LambdaClient } from '@aws-sdk/client-lambda';
import { randomUUID } from 'node:crypto';
import { ConfigError, type Config } from '../../core/config.ts';
import type { BidiHandoff, BidiSessionSpec, Compute, Invocation, RemoteBidiCompute, RuntimeEvent, SourceViolation } from '../../runtimes/compute.ts';
import {
  COMPUTE_ERROR,
  errorEvent,
  invocationBody,
  notStartedEnd,
  parseCheckResult,
  RuntimeHttpError,
  runtimeEvents,
  type ErrorEvent,
} from '../../runtimes/runtime-stream.ts';

export interface LambdaComputeOptions {
  readonly lambda: LambdaClient;
  /** Name or ARN of the runtime function (created with `TenancyConfig: PER_TENANT`). */
  readonly functionName: string;
  /** Version or alias to invoke, if any. */
  readonly qualifier?: string;
  /**
   * Tenant id for `/check` calls. The check only parses the source (no user code runs), and a
   * platform-owned tenant id keeps it out of every user's execution environments.
   */
  readonly checkTenantId?: string;
}

/** Eight NUL bytes end the prelude of Lambda's HTTP integration response stream. */
const PRELUDE_DELIMITER = Buffer.alloc(8);
/** Longest prelude accepted (status and headers: a few hundred bytes in practice). */
const MAX_PRELUDE_BYTES = 64 * 1024;

/**
 * The request event LWA converts into an HTTP request to the server: the function URL (HTTP API
 * payload v2) shape. lambda_http recognises it by `requestContext.http.method`; LWA forwards
 * `rawPath`, the headers and the body. `content-length` is given because the server requires it.
 */
export function lwaRequestEvent(path: '/invoke' | '/check' | '/bidi', body: string, now = new Date()): Record<string, unknown> {
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath: path,
    rawQueryString: '',
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
      accept: path === '/invoke' ? 'application/x-ndjson' : 'application/json',
    },
    requestContext: {
      accountId: 'anonymous',
      apiId: 'platform-compute',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'platform-compute' },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
    body,
    isBase64Encoded: false,
  };
}

/** The status line and headers the server answered with, as LWA wrote them into the prelude. */
export interface HttpPrelude {
  readonly statusCode: number;
  readonly headers: Readonly<Record<string, string>>;
}

/** The stream was not in the HTTP integration format (or was cut short before its body). */
export class StreamFormatError extends Error {}

/**
 * Splits Lambda's HTTP integration response stream into its prelude and body. Chunks may end
 * anywhere, including inside the prelude or inside the eight NUL bytes.
 */
export class HttpIntegrationDecoder {
  private head: Buffer = Buffer.alloc(0);
  private preludeValue: HttpPrelude | null = null;

  get prelude(): HttpPrelude | null {
    return this.preludeValue;
  }

  /** Body bytes in `chunk` (none until the prelude is complete). Throws StreamFormatError. */
  push(chunk: Uint8Array): Uint8Array[] {
    if (this.preludeValue !== null) return chunk.byteLength > 0 ? [chunk] : [];
    this.head = Buffer.concat([this.head, chunk]);
    if (this.head.length > 0 && this.head[0] !== 0x7b) {
      throw new StreamFormatError('the runtime function did not stream an HTTP response (no prelude); is AWS_LWA_INVOKE_MODE=response_stream set?');
    }
    const end = this.head.indexOf(PRELUDE_DELIMITER);
    if (end < 0) {
      if (this.head.length > MAX_PRELUDE_BYTES)
        throw new StreamFormatError('the response prelude is too long or not delimited (is AWS_LWA_INVOKE_MODE=response_stream set?)');
      return [];
    }
    this.preludeValue = parsePrelude(this.head.subarray(0, end).toString('utf8'));
    const rest = this.head.subarray(end + PRELUDE_DELIMITER.length);
    this.head = Buffer.alloc(0);
    return rest.length > 0 ? [rest] : [];
  }

  /** Call at the end of the stream: throws StreamFormatError when no prelude came. */
  finish(): HttpPrelude {
    if (this.preludeValue !== null) return this.preludeValue;
    if (looksLikeBufferedResponse(this.head.toString('utf8'))) {
      throw new StreamFormatError('the runtime function answered without streaming (a buffered HTTP response); is AWS_LWA_INVOKE_MODE=response_stream set?');
    }
    throw new StreamFormatError('the runtime function ended its stream before the response prelude');
  }
}

/** LWA's buffered answer is one JSON object `{statusCode, headers, body, isBase64Encoded}`. */
function looksLikeBufferedResponse(text: string): boolean {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && typeof (parsed as { statusCode?: unknown }).statusCode === 'number';
  } catch {
    return false;
  }
}

function parsePrelude(text: string): HttpPrelude {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new StreamFormatError('the response prelude is not JSON');
  }
  if (typeof parsed !== 'object' || parsed === null) throw new StreamFormatError('the response prelude is not an object');
  const { statusCode, headers } = parsed as { statusCode?: unknown; headers?: unknown };
  if (typeof statusCode !== 'number') throw new StreamFormatError('the response prelude has no statusCode');
  const flat: Record<string, string> = {};
  if (typeof headers === 'object' && headers !== null) {
    for (const [name, value] of Object.entries(headers)) if (typeof value === 'string') flat[name.toLowerCase()] = value;
  }
  return { statusCode, headers: flat };
}

/** Lambda reported a failure of the function itself (timeout, crash) in `InvokeComplete`. */
class FunctionFailedError extends Error {}

/**
 * The body bytes of a streamed invoke, in order and as they arrive. A non-200 answer is read whole
 * and thrown as RuntimeHttpError; a function failure reported by Lambda is thrown too.
 */
export async function* streamedBody(events: AsyncIterable<InvokeWithResponseStreamResponseEvent>): AsyncGenerator<Uint8Array, void, undefined> {
  const decoder = new HttpIntegrationDecoder();
  const errorBody: Uint8Array[] = [];
  for await (const event of events) {
    if (event.PayloadChunk?.Payload) {
      for (const part of decoder.push(event.PayloadChunk.Payload)) {
        if (decoder.prelude?.statusCode === 200) yield part;
        else errorBody.push(part);
      }
    } else if (event.InvokeComplete?.ErrorCode) {
      const { ErrorCode, ErrorDetails } = event.InvokeComplete;
      throw new FunctionFailedError(`${ErrorCode}${ErrorDetails ? `: ${ErrorDetails}` : ''}`);
    }
  }
  const { statusCode } = decoder.finish();
  if (statusCode !== 200) throw RuntimeHttpError.fromBody(statusCode, Buffer.concat(errorBody).toString('utf8'));
}

/**
 * Status and body of a buffered (`Invoke`) answer. Accepts the streamed format (prelude, NULs,
 * body), LWA's buffered format (`{statusCode, body, isBase64Encoded}`), or a bare body.
 */
export function decodeBufferedResponse(payload: Uint8Array): { statusCode: number; body: string } {
  const bytes = Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const end = bytes[0] === 0x7b ? bytes.indexOf(PRELUDE_DELIMITER) : -1;
  if (end >= 0) {
    const prelude = parsePrelude(bytes.subarray(0, end).toString('utf8'));
    return { statusCode: prelude.statusCode, body: bytes.subarray(end + PRELUDE_DELIMITER.length).toString('utf8') };
  }
  const text = bytes.toString('utf8');
  try {
    const parsed = JSON.parse(text) as { statusCode?: unknown; body?: unknown; isBase64Encoded?: unknown };
    if (typeof parsed.statusCode === 'number' && typeof parsed.body === 'string') {
      const body = parsed.isBase64Encoded === true ? Buffer.from(parsed.body, 'base64').toString('utf8') : parsed.body;
      return { statusCode: parsed.statusCode, body };
    }
  } catch {
    // not JSON: a bare body
  }
  return { statusCode: 200, body: text };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function nameOf(error: unknown): string {
  return error instanceof Error ? error.name : 'Error';
}

export function createLambdaCompute(options: LambdaComputeOptions): Compute & RemoteBidiCompute {
  const { lambda, functionName, qualifier } = options;
  const checkTenantId = options.checkTenantId ?? 'platform-source-check';
  /** A streamed invocation of the runtime server's `path` for `tenantId` (tenant isolation). */
  const streamedRequest = (tenantId: string, path: '/invoke' | '/bidi', body: string) =>
    new InvokeWithResponseStreamCommand({
      FunctionName: functionName,
      ...(qualifier ? { Qualifier: qualifier } : {}),
      InvocationType: 'RequestResponse',
      TenantId: tenantId,
      Payload: new TextEncoder().encode(JSON.stringify(lwaRequestEvent(path, body))),
    });

  async function* invoke(tenantId: string, invocation: Invocation, signal?: AbortSignal): AsyncGenerator<RuntimeEvent, void, undefined> {
    const startedAt = Date.now();
    const cancel = new AbortController(); // the consumer stopped iterating, or the run is over
    const combined = signal ? AbortSignal.any([signal, cancel.signal]) : cancel.signal;
    const classify = (error: unknown): ErrorEvent => {
      if (error instanceof RuntimeHttpError) return errorEvent(error.code, error.message);
      if (signal?.aborted) return errorEvent(COMPUTE_ERROR.aborted, 'the invocation was aborted');
      if (error instanceof StreamFormatError) return errorEvent(COMPUTE_ERROR.protocol, error.message);
      if (error instanceof FunctionFailedError)
        return errorEvent(COMPUTE_ERROR.crashed, `the runtime function failed during the invocation (${error.message})`);
      if (nameOf(error) === 'TooManyRequestsException') return errorEvent('TOO_MANY_INVOCATIONS', `the runtime function is throttled (${messageOf(error)})`);
      return errorEvent(COMPUTE_ERROR.unavailable, `the runtime function could not be invoked (${nameOf(error)}: ${messageOf(error)})`);
    };
    try {
      let events: AsyncIterable<InvokeWithResponseStreamResponseEvent>;
      try {
        const response = await lambda.send(streamedRequest(tenantId, '/invoke', invocationBody(invocation)), { abortSignal: combined });
        if (!response.EventStream) throw new StreamFormatError('the Lambda answer carried no event stream');
        events = response.EventStream;
      } catch (error) {
        // Lambda did not take the invocation, so the runtime never saw it: nothing started.
        yield classify(error);
        yield notStartedEnd(startedAt);
        return;
      }
      yield* runtimeEvents(streamedBody(events), {
        startedAt,
        classifyFailure: classify,
        truncated: () =>
          signal?.aborted ? classify(new Error('aborted')) : errorEvent(COMPUTE_ERROR.crashed, 'the runtime function ended its stream without an end event'),
      });
    } finally {
      // Closes the HTTP stream if the run did not finish (consumer stopped, abort, failure).
      cancel.abort();
    }
  }

  async function check(source: string): Promise<{ ok: boolean; violations: SourceViolation[] }> {
    const payload = new TextEncoder().encode(JSON.stringify(lwaRequestEvent('/check', JSON.stringify({ source }))));
    const response = await lambda.send(
      new InvokeCommand({
        FunctionName: functionName,
        ...(qualifier ? { Qualifier: qualifier } : {}),
        InvocationType: 'RequestResponse',
        TenantId: checkTenantId,
        Payload: payload,
      }),
    );
    const answer = decodeBufferedResponse(response.Payload ?? new Uint8Array());
    if (response.FunctionError) throw new Error(`the runtime function failed to check the source (${response.FunctionError}): ${answer.body.slice(0, 300)}`);
    if (answer.statusCode !== 200) throw RuntimeHttpError.fromBody(answer.statusCode, answer.body);
    return parseCheckResult(answer.body);
  }

  /**
   * A voice session handed to the runtime function (bidi_relay.py): the invocation starts the
   * session's process, which connects back to the bridge for the audio, and ends with the call.
   */
  async function handOffBidiSession(tenantId: string, spec: BidiSessionSpec, handoff: BidiHandoff): Promise<void> {
    const response = await lambda.send(streamedRequest(tenantId, '/bidi', JSON.stringify({ session: spec, connect: handoff })));
    if (!response.EventStream) throw new StreamFormatError('the Lambda answer carried no event stream');
    // The answer is only the session's exit status; a refusal or a failure of the function throws here.
    for await (const chunk of streamedBody(response.EventStream)) void chunk;
  }

  return { invoke, check, handOffBidiSession };
}

/** The `compute` port in the cloud: the runtime Lambda, named by RUNTIME_FUNCTION_NAME (only functions granted it receive it). */
export function lambdaCompute(config: Config): Compute {
  if (!config.RUNTIME_FUNCTION_NAME) throw new ConfigError('Invalid platform configuration: RUNTIME_FUNCTION_NAME: is required in the cloud');
  return createLambdaCompute({ lambda: new LambdaClient({ region: config.AWS_REGION }), functionName: config.RUNTIME_FUNCTION_NAME });
}

/**
 * What only the cloud Compute adapter does, as a pure protocol test: a fake LambdaClient `send`
 * records the commands and plays back response streams, for the exact Invoke it sends and for byte
 * formats the real function does not produce on demand (splits at every byte, a stream without
 * prelude, throttling). The byte format played back is the Lambda Web Adapter's response-stream
 * format (JSON prelude, eight NUL bytes, body). What every Compute adapter promises, through the
 * real runtime behind the loopback Lambda stand-in, is the contract in test/contract/compute.contract.ts.
 */
import { InvokeCommand, InvokeWithResponseStreamCommand, type InvokeWithResponseStreamResponseEvent, type LambdaClient } from '@aws-sdk/client-lambda';
import { describe, expect, it } from 'vitest';
import type { AgentInvocation, RuntimeEvent } from '../../functions/runtimes/compute.ts';
import { createLambdaCompute, decodeBufferedResponse } from '../../functions/adapters/compute/aws.ts';

const encoder = new TextEncoder();
const NULS = new Uint8Array(8);

const invocation: AgentInvocation = {
  kind: 'agent',
  source: 'def create_agent():\n    return None\n',
  requestId: 'req-1',
  functionName: 'weather-agent',
  timeoutMs: 60_000,
  memoryMb: 512,
  env: { SVC_KEYS_JSON: '{"k":"v"}' },
  allowHosts: ['api.example.com'],
  prompt: 'Grüße ✓',
  messages: [{ role: 'user', content: [{ text: 'earlier' }] }],
};

function concat(...parts: Uint8Array[]): Uint8Array {
  return Uint8Array.from(parts.flatMap((p) => [...p]));
}

/** The bytes LWA streams for an HTTP answer: prelude, eight NUL bytes, body. */
function httpStream(statusCode: number, body: string, headers: Record<string, string> = { 'content-type': 'application/x-ndjson' }): Uint8Array {
  return concat(encoder.encode(JSON.stringify({ statusCode, headers, cookies: [] })), NULS, encoder.encode(body));
}

const ndjson = (...objects: unknown[]) => objects.map((o) => JSON.stringify(o) + '\n').join('');

const RUN_BODY = ndjson(
  { type: 'start', requestId: 'req-1', pid: 12 },
  { type: 'text', data: 'Grüße ' },
  { type: 'text', data: 'zurück ✓ 🚀' },
  { type: 'metrics', totalCycles: 1, totalTokens: 7, inputTokens: 3, outputTokens: 4, toolsUsed: [], durationMs: 20 },
  { type: 'end', durationMs: 25, maxRssKb: 1000, exitCode: 0, signal: null, sandbox: {} },
);

const EXPECTED_EVENTS: RuntimeEvent[] = [
  { type: 'text', data: 'Grüße ' },
  { type: 'text', data: 'zurück ✓ 🚀' },
  { type: 'metrics', totalCycles: 1, totalTokens: 7, inputTokens: 3, outputTokens: 4, toolsUsed: [], durationMs: 20 },
  // Timed by this side's clock from the runtime's start; the runtime's own 25 ms only for logs.
  { type: 'end', started: true, durationMs: expect.any(Number) as number, runtimeDurationMs: 25, maxRssKb: 1000 },
];

/** Lambda's event stream: the given payload chunks, then InvokeComplete. */
async function* eventStream(
  chunks: readonly Uint8Array[],
  complete: { ErrorCode?: string; ErrorDetails?: string } = {},
): AsyncGenerator<InvokeWithResponseStreamResponseEvent> {
  for (const chunk of chunks) yield { PayloadChunk: { Payload: chunk } };
  yield { InvokeComplete: complete };
}

interface Sent {
  readonly command: unknown;
  readonly options: { abortSignal?: AbortSignal } | undefined;
}

/** A LambdaClient whose `send` records its calls and answers with `answer(command)`. */
function fakeLambda(answer: (command: unknown, options: Sent['options']) => Promise<unknown>) {
  const sent: Sent[] = [];
  const client = {
    send: (command: unknown, options?: Sent['options']) => {
      sent.push({ command, options });
      return answer(command, options);
    },
  } as unknown as LambdaClient;
  return { client, sent };
}

async function all(events: AsyncIterable<RuntimeEvent>): Promise<RuntimeEvent[]> {
  const out: RuntimeEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

/** The command's payload (the adapter always sends bytes) as JSON. */
function decodePayload(payload: unknown): any {
  expect(payload).toBeInstanceOf(Uint8Array);
  return JSON.parse(new TextDecoder().decode(payload as Uint8Array));
}

describe('lambda compute: the request', () => {
  it('invokes with response streaming, the owner as tenant id, and an HTTP API v2 event for POST /invoke', async () => {
    // Prepare
    const { client, sent } = fakeLambda(async () => ({ StatusCode: 200, EventStream: eventStream([httpStream(200, RUN_BODY)]) }));
    const compute = createLambdaCompute({ lambda: client, functionName: 'platform-runtime', qualifier: 'live' });

    // Act
    await all(compute.invoke('owner-123', invocation));

    // Assess: the command
    expect(sent).toHaveLength(1);
    const { command, options } = sent[0]!;
    expect(command).toBeInstanceOf(InvokeWithResponseStreamCommand);
    const input = (command as InvokeWithResponseStreamCommand).input;
    expect(input).toMatchObject({ FunctionName: 'platform-runtime', Qualifier: 'live', TenantId: 'owner-123', InvocationType: 'RequestResponse' });
    expect(options?.abortSignal).toBeDefined();
    // Assess: the event LWA turns into the HTTP request
    const event = decodePayload(input.Payload);
    expect(event).toMatchObject({
      version: '2.0',
      routeKey: '$default',
      rawPath: '/invoke',
      rawQueryString: '',
      isBase64Encoded: false,
      requestContext: { http: { method: 'POST', path: '/invoke' }, stage: '$default' },
      headers: { 'content-type': 'application/json' },
    });
    expect(Number(event.headers['content-length'])).toBe(Buffer.byteLength(event.body));
    expect(JSON.parse(event.body)).toEqual({ ...invocation });
  });

  it('checks a source with a synchronous invoke of POST /check under the platform tenant id', async () => {
    // Prepare
    const answerBody = JSON.stringify({ ok: false, violations: [{ line: 2, col: 1, message: "import of 'os' is not allowed" }] });
    const { client, sent } = fakeLambda(async () => ({ StatusCode: 200, Payload: httpStream(200, answerBody, { 'content-type': 'application/json' }) }));
    const compute = createLambdaCompute({ lambda: client, functionName: 'platform-runtime', checkTenantId: 'checker' });

    // Act
    const result = await compute.check('import json\nimport os\n');

    // Assess
    expect(result).toEqual({ ok: false, violations: [{ line: 2, col: 1, message: "import of 'os' is not allowed" }] });
    const command = sent[0]!.command as InvokeCommand;
    expect(command).toBeInstanceOf(InvokeCommand);
    expect(command.input).toMatchObject({ FunctionName: 'platform-runtime', TenantId: 'checker', InvocationType: 'RequestResponse' });
    const event = decodePayload(command.input.Payload);
    expect(event).toMatchObject({ rawPath: '/check', requestContext: { http: { method: 'POST', path: '/check' } } });
    expect(JSON.parse(event.body)).toEqual({ source: 'import json\nimport os\n' });
  });

  it('fails a check the function could not answer', async () => {
    // Prepare
    const { client } = fakeLambda(async () => ({ StatusCode: 200, FunctionError: 'Unhandled', Payload: encoder.encode('{"errorMessage":"boom"}') }));
    const compute = createLambdaCompute({ lambda: client, functionName: 'platform-runtime' });

    // Act + Assess
    await expect(compute.check('x = 1')).rejects.toThrow(/Unhandled/);
  });
});

describe('lambda compute: decoding the response stream', () => {
  const bytes = httpStream(200, RUN_BODY);

  async function eventsFor(chunks: Uint8Array[]): Promise<RuntimeEvent[]> {
    const { client } = fakeLambda(async () => ({ StatusCode: 200, EventStream: eventStream(chunks) }));
    return all(createLambdaCompute({ lambda: client, functionName: 'f' }).invoke('owner', invocation));
  }

  it('gives the same events for a split at every byte position (prelude, NULs, body, UTF-8)', async () => {
    for (let at = 0; at <= bytes.length; at++) {
      // Act
      const events = await eventsFor([bytes.subarray(0, at), bytes.subarray(at)]);

      // Assess
      expect(events, `split at ${at}`).toEqual(EXPECTED_EVENTS);
    }
  });

  it('gives the same events for many small chunks of varying sizes', async () => {
    // Prepare: a deterministic pseudo-random sequence of chunk sizes from 1 to 9 bytes
    let seed = 7;
    const chunks: Uint8Array[] = [];
    for (let offset = 0; offset < bytes.length;) {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      const size = 1 + (seed % 9);
      chunks.push(bytes.subarray(offset, offset + size));
      offset += size;
    }

    // Act
    const events = await eventsFor(chunks);

    // Assess
    expect(events).toEqual(EXPECTED_EVENTS);
  });

  it('explains a stream without prelude (function not in response-stream mode)', async () => {
    // Act
    const events = await eventsFor([encoder.encode(JSON.stringify({ statusCode: 200, body: RUN_BODY }))]);

    // Assess
    expect(events[0]).toMatchObject({ type: 'error', code: 'RUNTIME_PROTOCOL_ERROR', message: expect.stringContaining('AWS_LWA_INVOKE_MODE') });
    expect(events.map((e) => e.type)).toEqual(['error', 'end']);
  });

  it('turns a throttled invoke into TOO_MANY_INVOCATIONS, a run that never started', async () => {
    // Prepare (the stand-in does not throttle; other refusals are the contract's)
    const throttled = fakeLambda(async () => Promise.reject(Object.assign(new Error('Rate exceeded'), { name: 'TooManyRequestsException' }))).client;

    // Act
    const events = await all(createLambdaCompute({ lambda: throttled, functionName: 'f' }).invoke('owner', invocation));

    // Assess
    expect(events).toEqual([
      { type: 'error', code: 'TOO_MANY_INVOCATIONS', message: expect.stringContaining('throttled') },
      { type: 'end', started: false, durationMs: expect.any(Number) },
    ]);
  });

  it('aborts the HTTP stream when the caller aborts', async () => {
    // Prepare: a stream that sends one event, then waits until the request is aborted
    const controller = new AbortController();
    const { client, sent } = fakeLambda(async (_command, options) => ({
      StatusCode: 200,
      EventStream: (async function* () {
        yield { PayloadChunk: { Payload: httpStream(200, ndjson({ type: 'text', data: 'first' })) } };
        const signal = options!.abortSignal!;
        if (!signal.aborted) await new Promise((resolve) => signal.addEventListener('abort', resolve));
        throw Object.assign(new Error('The operation was aborted'), { name: 'AbortError' });
      })(),
    }));

    // Act
    const events: RuntimeEvent[] = [];
    for await (const event of createLambdaCompute({ lambda: client, functionName: 'f' }).invoke('owner', invocation, controller.signal)) {
      events.push(event);
      if (event.type === 'text') controller.abort();
    }

    // Assess
    expect(events.map((e) => e.type)).toEqual(['text', 'error', 'end']);
    expect(events[1]).toMatchObject({ code: 'ABORTED' });
    expect(sent[0]!.options?.abortSignal?.aborted).toBe(true);
  });
});

describe('decodeBufferedResponse', () => {
  it("reads the streamed format, LWA's buffered format and a bare body", () => {
    expect(decodeBufferedResponse(httpStream(400, '{"x":1}'))).toEqual({ statusCode: 400, body: '{"x":1}' });
    expect(
      decodeBufferedResponse(encoder.encode(JSON.stringify({ statusCode: 200, body: Buffer.from('{"ok":true}').toString('base64'), isBase64Encoded: true }))),
    ).toEqual({ statusCode: 200, body: '{"ok":true}' });
    expect(decodeBufferedResponse(encoder.encode('{"ok":true,"violations":[]}'))).toEqual({ statusCode: 200, body: '{"ok":true,"violations":[]}' });
  });
});

/**
 * The cloud McpRuntime adapter with a fake `send`: the Invoke it sends (tenant isolation, payload)
 * and how it decodes answers and failures. moto cannot invoke Lambda functions without Docker, so
 * the round trip through the real Lambda entry (mcp-host/lambda.mjs) runs it in a child Node
 * process, started with the options the function is configured with, instead of in Lambda.
 */
import { InvokeCommand } from '@aws-sdk/client-lambda';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createLambdaMcpRuntime } from '../../functions/runtimes/mcp-lambda-runtime.ts';
import { McpRuntimeUnavailableError } from '../../functions/runtimes/mcp-protocol.ts';
import type { McpHttpRequest, McpSource } from '../../functions/runtimes/mcp-runtime.ts';

const LAMBDA_ENTRY = fileURLToPath(new URL('../../functions/runtimes/mcp-host/lambda.mjs', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const SOURCE: McpSource = {
  serverId: 'mcp-weather',
  version: 3,
  sourceCode: `import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';

export function createMcpServer() {
  const server = new McpServer({ name: 'weather', version: '3.0.0' });
  server.registerTool('forecast', { inputSchema: { city: z.string() } }, async ({ city }) => ({
    content: [{ type: 'text', text: city + ' with a key of ' + (process.env.WEATHER_KEY ?? '').length }],
  }));
  server.registerTool('env_keys', { inputSchema: {} }, async () => ({ content: [{ type: 'text', text: Object.keys(process.env).join(',') }] }));
  server.registerTool('exit', { inputSchema: {} }, async () => process.exit(1));
  return server;
}
`,
};

function toolCall(name: string, args: Record<string, unknown> = {}): McpHttpRequest {
  return {
    method: 'POST',
    headers: { accept: 'application/json, text/event-stream', 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 'call-1', method: 'tools/call', params: { name, arguments: args } }),
  };
}

/** The parts of an Invoke answer the adapter reads (the SDK's Payload is a Uint8Array with helpers). */
interface FakeOutput {
  readonly StatusCode?: number;
  readonly FunctionError?: string;
  readonly Payload?: Uint8Array;
}

/** A `send` that records each command and answers with `answer(payload)`. */
function fakeSend(answer: (payload: any) => FakeOutput | Promise<FakeOutput>) {
  const sent: InvokeCommand[] = [];
  const options: unknown[] = [];
  const send = async (command: InvokeCommand, sendOptions?: unknown) => {
    sent.push(command);
    options.push(sendOptions);
    return answer(JSON.parse(Buffer.from(command.input.Payload as Uint8Array).toString('utf8')));
  };
  return { lambda: { send } as any, sent, options };
}

const json = (value: unknown): FakeOutput => ({ Payload: new TextEncoder().encode(JSON.stringify(value)), StatusCode: 200 });

/**
 * Runs the real Lambda entry on one event in a fresh Node process, the way the function runs it:
 * NODE_OPTIONS-style flags, and the role's credentials in the environment. A process that exits
 * without answering is reported as Lambda reports it (FunctionError Unhandled, Runtime.ExitError).
 */
function runLambdaEntry(event: unknown): Promise<FakeOutput> {
  const driver = `import { handler } from ${JSON.stringify(LAMBDA_ENTRY)};
let input = '';
process.stdin.setEncoding('utf8');
for await (const chunk of process.stdin) input += chunk;
const answer = await handler(JSON.parse(input), { getRemainingTimeInMillis: () => 20000 });
process.stdout.write(JSON.stringify(answer));`;
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--experimental-vm-modules', '--disable-warning=ExperimentalWarning', '--input-type=module', '-e', driver], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', AWS_ACCESS_KEY_ID: 'AKIAFAKE', AWS_SECRET_ACCESS_KEY: 'fake-secret', AWS_SESSION_TOKEN: 'fake-token', AWS_REGION: 'eu-west-1' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(json(JSON.parse(stdout)));
      else resolve({ FunctionError: 'Unhandled', ...json({ errorType: 'Runtime.ExitError', errorMessage: `Runtime exited with error: exit status ${code} ${stderr.slice(0, 200)}` }) });
    });
    child.stdin.end(JSON.stringify(event));
  });
}

describe('Lambda MCP runtime: invoke shape and answer decoding', () => {
  it('invokes synchronously with the owner as tenant and an inspect payload', async () => {
    // Prepare
    const fake = fakeSend(() => json({ ok: true, tools: ['forecast'] }));
    const runtime = createLambdaMcpRuntime({ lambda: fake.lambda, functionName: 'mcp-runtime', qualifier: 'live', requestTimeoutMs: 12_000 });

    // Act
    const inspection = await runtime.inspect('user-owner', SOURCE);

    // Assess
    expect(inspection).toEqual({ ok: true, tools: ['forecast'] });
    expect(fake.sent).toHaveLength(1);
    expect(fake.sent[0]).toBeInstanceOf(InvokeCommand);
    const { Payload, ...input } = fake.sent[0]!.input;
    expect(input).toEqual({ FunctionName: 'mcp-runtime', Qualifier: 'live', InvocationType: 'RequestResponse', TenantId: 'user-owner' });
    expect(JSON.parse(Buffer.from(Payload as Uint8Array).toString('utf8'))).toEqual({ op: 'inspect', serverId: 'mcp-weather', version: 3, sourceCode: SOURCE.sourceCode, timeoutMs: 12_000 });
  });

  it('sends a handle payload with the request and env, passes the abort signal, and returns the HTTP answer', async () => {
    // Prepare
    const fake = fakeSend(() => json({ status: 200, headers: { 'Content-Type': 'application/json' }, body: '{"jsonrpc":"2.0","id":"call-1","result":{}}' }));
    const runtime = createLambdaMcpRuntime({ lambda: fake.lambda, functionName: 'mcp-runtime' });
    const signal = new AbortController().signal;

    // Act
    const response = await runtime.handle('user-owner', SOURCE, toolCall('forecast', { city: 'Oslo' }), { WEATHER_KEY: 'k' }, signal);

    // Assess
    expect(response).toEqual({ status: 200, headers: { 'content-type': 'application/json' }, body: '{"jsonrpc":"2.0","id":"call-1","result":{}}' });
    expect(fake.sent[0]!.input).toMatchObject({ TenantId: 'user-owner', InvocationType: 'RequestResponse' });
    expect(JSON.parse(Buffer.from(fake.sent[0]!.input.Payload as Uint8Array).toString('utf8'))).toEqual({
      op: 'handle',
      serverId: 'mcp-weather',
      version: 3,
      sourceCode: SOURCE.sourceCode,
      timeoutMs: 30_000,
      request: toolCall('forecast', { city: 'Oslo' }),
      env: { WEATHER_KEY: 'k' },
    });
    expect(fake.options[0]).toEqual({ abortSignal: signal });
  });

  it.each([
    ['a crash', { FunctionError: 'Unhandled', ...json({ errorType: 'Runtime.ExitError', errorMessage: 'Runtime exited with error: exit status 1' }) }, 502, -32000, 'Runtime.ExitError: Runtime exited with error: exit status 1'],
    ['Lambda\'s timeout', { FunctionError: 'Unhandled', ...json({ errorType: 'Sandbox.Timedout', errorMessage: 'Task timed out after 30.00 seconds' }) }, 504, -32001, 'Task timed out'],
    ['a payload that is not JSON', { Payload: new TextEncoder().encode('<html>') }, 502, -32603, 'not JSON'],
    ['an answer of the wrong shape', json({ ok: true }), 502, -32603, 'without {status, headers, body}'],
  ])('answers %s in handle with a JSON-RPC error carrying the request id', async (_case, output, status, code, message) => {
    // Prepare
    const runtime = createLambdaMcpRuntime({ lambda: fakeSend(() => output).lambda, functionName: 'mcp-runtime' });

    // Act
    const response = await runtime.handle('user-owner', SOURCE, toolCall('forecast'), {});

    // Assess
    expect(response.status).toBe(status);
    expect(JSON.parse(response.body)).toMatchObject({ jsonrpc: '2.0', id: 'call-1', error: { code, message: expect.stringContaining(message) } });
  });

  it('answers invoke failures in handle with 429 (throttled) or 503, and throws them from inspect', async () => {
    // Prepare
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'TooManyRequestsException' });
    const denied = Object.assign(new Error('not authorized to perform lambda:InvokeFunction'), { name: 'AccessDeniedException' });
    const runtimeFor = (error: Error) =>
      createLambdaMcpRuntime({
        lambda: fakeSend(() => {
          throw error;
        }).lambda,
        functionName: 'mcp-runtime',
      });

    // Act
    const limited = await runtimeFor(throttled).handle('user-owner', SOURCE, toolCall('forecast'), {});
    const unavailable = await runtimeFor(denied).handle('user-owner', SOURCE, toolCall('forecast'), {});
    const inspection = runtimeFor(denied).inspect('user-owner', SOURCE);

    // Assess
    expect(limited.status).toBe(429);
    expect(unavailable.status).toBe(503);
    expect(JSON.parse(unavailable.body).error.message).toContain('AccessDeniedException');
    await expect(inspection).rejects.toBeInstanceOf(McpRuntimeUnavailableError);
  });

  it('reports a function failure during inspect as the source\'s problem (ok: false)', async () => {
    // Prepare
    const runtime = createLambdaMcpRuntime({
      lambda: fakeSend(() => ({ FunctionError: 'Unhandled', ...json({ errorType: 'Runtime.ExitError', errorMessage: 'exit status 1' }) })).lambda,
      functionName: 'mcp-runtime',
    });

    // Act
    const inspection = await runtime.inspect('user-owner', SOURCE);

    // Assess
    expect(inspection).toEqual({ ok: false, error: "the server's runtime failed while the source was loaded (Runtime.ExitError: exit status 1)" });
  });
});

describe('Lambda MCP runtime through the real Lambda entry (mcp-host/lambda.mjs)', () => {
  it('inspects and handles an ES module server, with the request env and without the role credentials', async () => {
    // Prepare: the fake send runs each event through the entry in a Node process
    const fake = fakeSend(runLambdaEntry);
    const runtime = createLambdaMcpRuntime({ lambda: fake.lambda, functionName: 'mcp-runtime' });

    // Act
    const [inspection, forecast, keys, crash] = await Promise.all([
      runtime.inspect('user-owner', SOURCE),
      runtime.handle('user-owner', SOURCE, toolCall('forecast', { city: 'Oslo' }), { WEATHER_KEY: 'abcdef' }),
      runtime.handle('user-owner', SOURCE, toolCall('env_keys'), {}),
      runtime.handle('user-owner', SOURCE, toolCall('exit'), {}),
    ]);

    // Assess
    expect(inspection).toEqual({ ok: true, tools: ['forecast', 'env_keys', 'exit'] });
    expect(forecast.status).toBe(200);
    expect(JSON.parse(forecast.body)).toMatchObject({ id: 'call-1', result: { content: [{ type: 'text', text: 'Oslo with a key of 6' }] } });
    const names = JSON.parse(keys.body).result.content[0].text.split(',');
    expect(names).toContain('AWS_REGION');
    expect(names).not.toContain('AWS_SECRET_ACCESS_KEY');
    expect(names).not.toContain('AWS_SESSION_TOKEN');
    expect(names).not.toContain('AWS_ACCESS_KEY_ID');
    expect(crash.status).toBe(502);
    expect(JSON.parse(crash.body)).toMatchObject({ id: 'call-1', error: { code: -32000, message: expect.stringContaining('Runtime.ExitError') } });
  });
});

describe('the MCP layer', () => {
  it('declares the same package ranges as the platform and locks the same versions', () => {
    // Prepare
    const root = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8'));
    const rootLock = JSON.parse(readFileSync(`${ROOT}package-lock.json`, 'utf8'));
    const layer = JSON.parse(readFileSync(`${ROOT}layers/mcp-node/package.json`, 'utf8'));
    const layerLock = JSON.parse(readFileSync(`${ROOT}layers/mcp-node/package-lock.json`, 'utf8'));

    // Act / Assess: what servers get in the cloud is what the local runtime and these tests run
    for (const name of Object.keys(layer.dependencies)) {
      expect(layer.dependencies[name], name).toBe(root.dependencies[name]);
      expect(layerLock.packages[`node_modules/${name}`].version, name).toBe(rootLock.packages[`node_modules/${name}`].version);
    }
    expect(Object.keys(layer.dependencies).sort()).toEqual(['@modelcontextprotocol/sdk', 'zod']);
  });
});

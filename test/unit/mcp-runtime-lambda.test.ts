/**
 * What only the cloud McpRuntime adapter does, with a fake `send`: the exact Invoke it sends and
 * how it decodes answers the real function never gives (payloads that are not JSON or not of the
 * agreed shape, throttling, refusals). The round trip through the real Lambda entry
 * (mcp-host/lambda.mjs), and what every McpRuntime adapter promises, is the contract in
 * test/contract/mcp-runtime.contract.ts, run against the loopback Lambda stand-in.
 */
import { InvokeCommand } from '@aws-sdk/client-lambda';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createLambdaMcpRuntime } from '../../functions/adapters/mcp-runtime/aws.ts';
import { McpRuntimeUnavailableError } from '../../functions/runtimes/mcp-protocol.ts';
import type { McpHttpRequest, McpSource } from '../../functions/runtimes/mcp-runtime.ts';

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
  const send = async (command: InvokeCommand) => {
    sent.push(command);
    return answer(JSON.parse(Buffer.from(command.input.Payload as Uint8Array).toString('utf8')));
  };
  return { lambda: { send } as any, sent };
}

const json = (value: unknown): FakeOutput => ({ Payload: new TextEncoder().encode(JSON.stringify(value)), StatusCode: 200 });

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
    expect(JSON.parse(Buffer.from(Payload as Uint8Array).toString('utf8'))).toEqual({
      op: 'inspect',
      serverId: 'mcp-weather',
      version: 3,
      sourceCode: SOURCE.sourceCode,
      timeoutMs: 12_000,
    });
  });

  it.each([
    // A crash and Lambda's timeout are the contract's (the stand-in reports them as Lambda does).
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

  it('answers invoke failures with 429 (throttled) or 503, notStarted only when Lambda refused the invoke', async () => {
    // Prepare: service errors carry $fault; a broken connection does not
    const throttled = Object.assign(new Error('Rate exceeded'), { name: 'TooManyRequestsException', $fault: 'client' });
    const denied = Object.assign(new Error('not authorized to perform lambda:InvokeFunction'), { name: 'AccessDeniedException', $fault: 'client' });
    const serviceFailure = Object.assign(new Error('internal error'), { name: 'ServiceException', $fault: 'server' });
    const reset = Object.assign(new Error('socket hang up'), { name: 'Error', code: 'ECONNRESET' });
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
    const failed = await runtimeFor(serviceFailure).handle('user-owner', SOURCE, toolCall('forecast'), {});
    const broken = await runtimeFor(reset).handle('user-owner', SOURCE, toolCall('forecast'), {});
    const inspection = runtimeFor(denied).inspect('user-owner', SOURCE);

    // Assess: a 4xx from Lambda proves the function did not run; a 5xx or a reset proves nothing
    expect([limited.status, limited.notStarted]).toEqual([429, true]);
    expect([unavailable.status, unavailable.notStarted]).toEqual([503, true]);
    expect(JSON.parse(unavailable.body).error.message).toContain('AccessDeniedException');
    expect([failed.status, failed.notStarted]).toEqual([503, undefined]);
    expect([broken.status, broken.notStarted]).toEqual([503, undefined]);
    await expect(inspection).rejects.toBeInstanceOf(McpRuntimeUnavailableError);
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

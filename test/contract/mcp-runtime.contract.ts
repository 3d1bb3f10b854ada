/**
 * The McpRuntime port's contract (functions/runtimes/mcp-runtime.ts), one suite every adapter must
 * pass: inspecting sources, serving MCP requests statelessly (to the official client too), the
 * owner's env per request and never the platform's, versions, tenants in separate environments,
 * and failures (crash, timeout, cancellation, no runtime) answered as JSON-RPC errors, never
 * thrown, with `notStarted` where no server code ran. mcp-runtime.test.ts runs it against the
 * local adapter and against the Lambda adapter in front of the loopback Lambda stand-in.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { McpRuntimeUnavailableError } from '../../functions/runtimes/mcp-protocol.ts';
import type { McpHttpRequest, McpHttpResponse, McpRuntime, McpSource } from '../../functions/runtimes/mcp-runtime.ts';

export interface McpRuntimeUnderTest {
  readonly runtime: McpRuntime;
  /** Ids of the live execution environments (processes) that run `tenantId`'s servers. */
  environmentsOf(tenantId: string): string[];
  /**
   * Variables present where the adapter starts server code (the platform's process, the
   * function's role credentials) that server code must never see.
   */
  readonly hiddenVariables: readonly string[];
  close(): Promise<void>;
}

export interface McpRuntimeContractSetup {
  /** The request time limit the adapter is configured with; kept short so that timeouts are quick. */
  readonly requestTimeoutMs: number;
  start(): Promise<McpRuntimeUnderTest>;
  /** An adapter of the same kind that can get no runtime at all (no sandbox, no function). */
  startUnavailable(): Promise<{ readonly runtime: McpRuntime; close(): Promise<void> }>;
}

/** Two tools with zod input schemas; `key_length` reports the length of the owner's OPENAI_KEY. */
export const SAMPLE_CJS = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

module.exports = {
  createMcpServer() {
    const server = new McpServer({ name: 'sample-cjs', version: '1.0.0' });
    server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
      content: [{ type: 'text', text: String(a + b) }],
    }));
    server.registerTool('key_length', { description: 'Length of the OpenAI key', inputSchema: { label: z.string() } }, async ({ label }) => ({
      content: [{ type: 'text', text: label + ':' + (process.env.OPENAI_KEY ?? '').length }],
    }));
    return server;
  },
};
`;

const SAMPLE_ESM = `import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { EOL } from 'node:os';

export function createMcpServer() {
  const server = new McpServer({ name: 'sample-esm', version: '1.0.0' });
  server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
  }));
  server.registerTool('key_length', { description: 'Length of the OpenAI key', inputSchema: { label: z.string() } }, async ({ label }) => ({
    content: [{ type: 'text', text: label + ':' + (process.env.OPENAI_KEY ?? '').length + (EOL === '\\n' ? '' : '?') }],
  }));
  return server;
}
`;

/** Tools that misbehave on purpose. */
const UNRULY = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

const text = (value) => ({ content: [{ type: 'text', text: String(value) }] });
const loadId = Math.random().toString(36).slice(2);
let built = 0;

exports.createMcpServer = () => {
  built++;
  const server = new McpServer({ name: 'unruly', version: '1.0.0' });
  server.registerTool('spawn', { inputSchema: {} }, async () => text(require('child_process').execSync('id')));
  server.registerTool('builtin_spawn', { inputSchema: {} }, async () => text(process.getBuiltinModule('child_process').execSync('id')));
  server.registerTool('env_keys', { inputSchema: {} }, async () => text(Object.keys(process.env).sort().join(',')));
  server.registerTool('slow_key', { inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return text(process.env.OPENAI_KEY);
  });
  server.registerTool('ids', { inputSchema: {} }, async () => text(loadId + ':' + built));
  server.registerTool('exit', { inputSchema: {} }, async () => process.exit(1));
  server.registerTool('hang', { inputSchema: {} }, () => new Promise(() => {}));
  server.registerTool('spin', { inputSchema: {} }, () => { for (;;) {} });
  return server;
};
`;

/**
 * Reads a key while it is built (a source may), counts its builds (per loaded module), and reports what the SDK knows of
 * the connection: the client from `initialize`, its capabilities, and whether an info log would go out.
 */
const CAPTURING = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

const text = (value) => ({ content: [{ type: 'text', text: String(value) }] });
const loadId = Math.random().toString(36).slice(2);
let built = 0;

exports.createMcpServer = () => {
  const build = ++built;
  const captured = process.env.OPENAI_KEY ?? 'none';
  const server = new McpServer({ name: 'capturing', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerTool('captured', { inputSchema: {} }, async () => text(captured + '#' + build));
  server.registerTool('slow_build', { inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return text(loadId + ':' + build);
  });
  server.registerTool('connection', { inputSchema: {} }, async () =>
    text(JSON.stringify({
      build,
      client: server.server.getClientVersion()?.name ?? null,
      sampling: server.server.getClientCapabilities()?.sampling !== undefined,
      logged: !server.server.isMessageIgnored('info', undefined),
    })),
  );
  return server;
};
`;

export const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

function source(serverId: string, version: number, sourceCode: string): McpSource {
  return { serverId, version, sourceCode };
}

function toolCall(name: string, args: Record<string, unknown> = {}): McpHttpRequest {
  return { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } }) };
}

/** One JSON-RPC `tools/call` straight through `runtime.handle`. */
async function callTool(
  runtime: McpRuntime,
  tenantId: string,
  server: McpSource,
  name: string,
  args: Record<string, unknown> = {},
  env: Record<string, string> = {},
  signal?: AbortSignal,
): Promise<{ response: McpHttpResponse; json: any }> {
  const response = await runtime.handle(tenantId, server, toolCall(name, args), env, signal);
  return { response, json: JSON.parse(response.body) };
}

export const textOf = (json: any): string => json.result?.content?.[0]?.text;

/**
 * An HTTP front for the runtime, as the platform's MCP route would be:
 * `/mcp/{tenant}/{serverId}?v=N` runs that registered source with the tenant's env.
 */
async function startBridge(runtime: McpRuntime, sources: Map<string, string>, envs: Map<string, Record<string, string>>) {
  const server = http.createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (chunk: Buffer) => parts.push(chunk));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://bridge');
      const [, , tenantId = '', serverId = ''] = url.pathname.split('/');
      const version = Number(url.searchParams.get('v') ?? '1');
      const sourceCode = sources.get(`${serverId}@${version}`);
      if (sourceCode === undefined) {
        res.writeHead(404).end();
        return;
      }
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers[name] = value;
      void runtime
        .handle(
          tenantId,
          source(serverId, version, sourceCode),
          { method: req.method as 'GET' | 'POST' | 'DELETE', headers, body: Buffer.concat(parts).toString('utf8') },
          envs.get(tenantId) ?? {},
        )
        .then((answer) => res.writeHead(answer.status, answer.headers).end(answer.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: (tenantId: string, serverId: string, version = 1) => new URL(`http://127.0.0.1:${port}/mcp/${tenantId}/${serverId}?v=${version}`),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export function describeMcpRuntimeContract(adapterName: string, setup: McpRuntimeContractSetup): void {
  describe(`McpRuntime contract: ${adapterName}`, () => {
    const unruly = source('mcp-unruly', 1, UNRULY);
    const sample = source('mcp-cjs', 1, SAMPLE_CJS);
    let under: McpRuntimeUnderTest;
    let runtime: McpRuntime;

    beforeAll(async () => {
      under = await setup.start();
      runtime = under.runtime;
    });
    afterAll(async () => {
      await under?.close();
    });

    it('inspects CommonJS and ES module sources: ok with their tool names', async () => {
      // Act
      const [cjs, esm] = await Promise.all([runtime.inspect('tenant-a', sample), runtime.inspect('tenant-a', source('mcp-esm', 1, SAMPLE_ESM))]);

      // Assess
      expect(cjs).toEqual({ ok: true, tools: ['add', 'key_length'] });
      expect(esm).toEqual({ ok: true, tools: ['add', 'key_length'] });
    });

    it.each([
      [
        'a syntax error',
        'module.exports = {\n  createMcpServer() {\n    return oops oops;\n  },\n};\n',
        /SyntaxError: Unexpected identifier 'oops' \(line 3\)/,
      ],
      ['an ES module syntax error', "import { z } from 'zod';\nexport const = 1;\n", /SyntaxError: Unexpected token '='/],
      ['no createMcpServer', 'module.exports = { makeServer() {} };\n', /does not export a createMcpServer function \(it exports: makeServer\)/],
      [
        'a throwing factory',
        "exports.createMcpServer = () => {\n  throw new Error('no API key configured');\n};\n",
        /createMcpServer\(\) failed: Error: no API key configured \(line 2\)/,
      ],
      ['a factory returning no server', 'exports.createMcpServer = () => 42;\n', /must return an McpServer .*number/],
      [
        'child_process',
        "const { execSync } = require('child_process');\nexports.createMcpServer = () => null;\n",
        /module 'child_process' is not available to MCP servers/,
      ],
      [
        'node:child_process in an ES module',
        "import { spawn } from 'node:child_process';\nexport const createMcpServer = () => spawn;\n",
        /module 'node:child_process' is not available/,
      ],
      [
        'a package outside the allowlist',
        "const _ = require('lodash');\n",
        /module 'lodash' is not available to MCP servers: a server is one file and may use only @modelcontextprotocol\/sdk, zod/,
      ],
      [
        'an SDK path without .js',
        "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp';\nexport const createMcpServer = () => new McpServer({ name: 'x', version: '1' });\n",
        /^module '@modelcontextprotocol\/sdk\/server\/mcp' was not found \(subpaths of @modelcontextprotocol\/sdk end in \.js, e\.g\. '@modelcontextprotocol\/sdk\/server\/mcp\.js'\)$/,
      ],
      [
        "the SDK's stdio client, which starts processes",
        "const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');\nexports.createMcpServer = () => null;\n",
        /module '@modelcontextprotocol\/sdk\/client\/stdio\.js' is not available to MCP servers: the host serves every server itself/,
      ],
      [
        "the SDK's Express app in an ES module",
        "import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';\nexport const createMcpServer = () => createMcpExpressApp;\n",
        /module '@modelcontextprotocol\/sdk\/server\/express\.js' is not available to MCP servers/,
      ],
      ['a relative import', "import './helpers.js';\nexport const createMcpServer = () => null;\n", /module '.\/helpers.js' is not available/],
      ['module as a way around the allowlist', "const { createRequire } = require('module');\n", /module 'module' is not available/],
    ])('refuses a source with %s: inspect is ok:false with the reason, never a platform stack', async (_case, sourceCode, message) => {
      // Act
      const inspection = await runtime.inspect('tenant-a', source('mcp-bad', 1, sourceCode));

      // Assess
      expect(inspection.ok).toBe(false);
      const error = inspection.ok === false ? inspection.error : '';
      expect(error).toMatch(message);
      expect(error).not.toMatch(/\n\s+at /);
      expect(error).not.toContain('node_modules');
    });

    describe('through the official MCP client', () => {
      const sources = new Map([
        ['mcp-cjs@1', SAMPLE_CJS],
        ['mcp-esm@1', SAMPLE_ESM],
      ]);
      let bridge: Awaited<ReturnType<typeof startBridge>>;

      beforeAll(async () => {
        bridge = await startBridge(runtime, sources, new Map([['tenant-a', { OPENAI_KEY: 'sk-0123456789' }]]));
      });
      afterAll(async () => {
        await bridge?.close();
      });

      it.each([
        ['CommonJS', 'mcp-cjs', 'sample-cjs'],
        ['ES module', 'mcp-esm', 'sample-esm'],
      ])('serves a %s server: initialize, tools/list, tools/call, input validation; GET is not a stream', async (_kind, serverId, serverName) => {
        // Act
        const client = new Client({ name: 'contract-test', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(bridge.url('tenant-a', serverId)));
        try {
          const listed = await client.listTools();
          const sum = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
          const keyLength = await client.callTool({ name: 'key_length', arguments: { label: 'openai' } });
          const invalid = await client.callTool({ name: 'add', arguments: { a: 'two' } });
          const get = await runtime.handle(
            'tenant-a',
            source(serverId, 1, sources.get(`${serverId}@1`)!),
            { method: 'GET', headers: { accept: 'text/event-stream' }, body: '' },
            {},
          );

          // Assess: tools with their zod-derived schemas, results, input validation, no GET stream
          expect(client.getServerVersion()?.name).toBe(serverName);
          expect(listed.tools.map((t) => t.name)).toEqual(['add', 'key_length']);
          expect(listed.tools[0]!.inputSchema).toMatchObject({
            type: 'object',
            properties: { a: { type: 'number' }, b: { type: 'number' } },
            required: ['a', 'b'],
          });
          expect(sum.content).toEqual([{ type: 'text', text: '42' }]);
          expect(keyLength.content).toEqual([{ type: 'text', text: 'openai:13' }]);
          expect(invalid.isError).toBe(true);
          expect(JSON.stringify(invalid.content)).toContain('Input validation error');
          expect(get.status).toBe(405);
          expect(get.headers.allow).toBe('POST');
        } finally {
          await client.close();
        }
      });
    });

    it('refuses processes at call time as a tool error, and the server keeps serving', async () => {
      // Act
      const spawned = await callTool(runtime, 'tenant-a', unruly, 'spawn');
      const viaBuiltin = await callTool(runtime, 'tenant-a', unruly, 'builtin_spawn');
      const after = await callTool(runtime, 'tenant-a', sample, 'add', { a: 1, b: 1 });

      // Assess
      expect(spawned.json.result).toMatchObject({ isError: true, content: [{ text: expect.stringContaining("module 'child_process' is not available") }] });
      expect(viaBuiltin.json.result).toMatchObject({ isError: true, content: [{ text: expect.stringContaining("module 'child_process' is not available") }] });
      expect(textOf(after.json)).toBe('2');
    });

    it("gives each request its own env, also concurrently, and never the platform's variables", async () => {
      // Act: two overlapping requests with different keys, then one with other keys, then one without
      const [slow, fast] = await Promise.all([
        callTool(runtime, 'tenant-a', unruly, 'slow_key', { ms: 300 }, { OPENAI_KEY: 'first' }),
        callTool(runtime, 'tenant-a', unruly, 'slow_key', { ms: 10 }, { OPENAI_KEY: 'second' }),
      ]);
      const keys = await callTool(runtime, 'tenant-a', unruly, 'env_keys', {}, { WEATHER_KEY: 'w' });
      const none = await callTool(runtime, 'tenant-a', unruly, 'slow_key', { ms: 0 });

      // Assess
      expect(textOf(slow.json)).toBe('first');
      expect(textOf(fast.json)).toBe('second');
      const names = textOf(keys.json).split(',');
      expect(names).toContain('WEATHER_KEY');
      expect(names).not.toContain('OPENAI_KEY');
      expect(under.hiddenVariables.length).toBeGreaterThan(0);
      for (const hidden of under.hiddenVariables) expect(names).not.toContain(hidden);
      expect(textOf(none.json)).toBe('undefined');
    });

    it('runs each version with its own code, and reloads a version whose source changed', async () => {
      // Prepare: versions 1 and 2 of one server answer differently
      const version = (n: number, answer: string) =>
        source(
          'mcp-versions',
          n,
          `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
exports.createMcpServer = () => {
  const server = new McpServer({ name: 'versions', version: '${n}.0.0' });
  server.registerTool('which', { inputSchema: {} }, async () => ({ content: [{ type: 'text', text: '${answer}' }] }));
  return server;
};`,
        );

      // Act: interleaved, so a cached v2 must not shadow v1 or the reverse
      const answers: string[] = [];
      for (const server of [version(1, 'one'), version(2, 'two'), version(1, 'one'), version(2, 'two')])
        answers.push(textOf((await callTool(runtime, 'tenant-a', server, 'which')).json));
      const changed = textOf((await callTool(runtime, 'tenant-a', version(2, 'two, edited'), 'which')).json);

      // Assess
      expect(answers).toEqual(['one', 'two', 'one', 'two']);
      expect(changed).toBe('two, edited');
    });

    it('keeps a loaded version and its built server for later requests with the same keys', async () => {
      // Prepare: a version of its own, so nothing loaded it before
      const counting = source('mcp-counting', 1, UNRULY);

      // Act
      const first = textOf((await callTool(runtime, 'tenant-a', counting, 'ids')).json).split(':');
      const second = textOf((await callTool(runtime, 'tenant-a', counting, 'ids')).json).split(':');
      const third = textOf((await callTool(runtime, 'tenant-a', counting, 'ids')).json).split(':');

      // Assess: the same module (its load id), built once (its build count)
      expect(first[1]).toBe('1');
      expect(second).toEqual(first);
      expect(third).toEqual(first);
    });

    it('reuses a built server only under the same keys: what it read while built never reaches a request with other keys', async () => {
      // Prepare: a server that reads a key while it is built, as a careless source may
      const capturing = source('mcp-capturing', 1, CAPTURING);

      // Act
      const asOwner = textOf((await callTool(runtime, 'tenant-a', capturing, 'captured', {}, { OPENAI_KEY: 'owner-key', MAPS_KEY: 'maps' })).json);
      const asRoleToken = textOf((await callTool(runtime, 'tenant-a', capturing, 'captured', {}, { MAPS_KEY: 'maps' })).json);
      const rotated = textOf((await callTool(runtime, 'tenant-a', capturing, 'captured', {}, { OPENAI_KEY: 'new-key', MAPS_KEY: 'maps' })).json);
      const ownerAgain = textOf((await callTool(runtime, 'tenant-a', capturing, 'captured', {}, { MAPS_KEY: 'maps', OPENAI_KEY: 'owner-key' })).json);

      // Assess: each set of keys got a server of its own (build 1, 2, 3); the same set, in any order, the first one again
      expect(asOwner).toBe('owner-key#1');
      expect(asRoleToken).toBe('none#2');
      expect(rotated).toBe('new-key#3');
      expect(ownerAgain).toBe('owner-key#1');
    });

    it('gives concurrent requests servers of their own, each answering its own request', async () => {
      // Prepare
      const capturing = source('mcp-concurrent', 1, CAPTURING);
      const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'slow_build', arguments: { ms: 150 } } });

      // Act
      const answers = await Promise.all(
        [1, 2, 3].map((id) => runtime.handle('tenant-a', capturing, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(call(id)) }, {})),
      );
      const after = textOf((await callTool(runtime, 'tenant-a', capturing, 'slow_build', { ms: 0 })).json);

      // Assess
      const parsed = answers.map((a) => JSON.parse(a.body) as { id: number; result: { content: { text: string }[] } });
      expect(parsed.map((p) => p.id)).toEqual([1, 2, 3]);
      expect(new Set(parsed.map((p) => p.result.content[0]!.text)).size).toBe(3);
      // Afterwards one of those servers answers (in the cloud, in the environment that ran it): none was built for it.
      expect(parsed.map((p) => p.result.content[0]!.text)).toContain(after);
    });

    it("starts a reused server as a new one: no earlier caller's initialize or log level", async () => {
      // Prepare
      const capturing = source('mcp-forgetful', 1, CAPTURING);
      const initialize = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: { sampling: {} }, clientInfo: { name: 'first-caller', version: '9.9.9' } },
      };
      const setLevel = { jsonrpc: '2.0', id: 2, method: 'logging/setLevel', params: { level: 'emergency' } };
      const send = (message: unknown) => runtime.handle('tenant-a', capturing, { method: 'POST', headers: MCP_HEADERS, body: JSON.stringify(message) }, {});

      // Act
      const initialized = await send(initialize);
      const levelSet = await send(setLevel);
      const seen = textOf((await callTool(runtime, 'tenant-a', capturing, 'connection')).json);

      // Assess: the same server (build 1) answered all three, and remembered nothing of the first two
      expect(initialized.status).toBe(200);
      expect(levelSet.status).toBe(200);
      expect(JSON.parse(seen)).toEqual({ build: 1, client: null, sampling: false, logged: true });
    });

    it("runs different tenants' servers in different environments, each with only its own keys", async () => {
      // Act
      const [a, b] = await Promise.all([
        callTool(runtime, 'tenant-a', sample, 'key_length', { label: 'a' }, { OPENAI_KEY: 'aaaa' }),
        callTool(runtime, 'tenant-b', sample, 'key_length', { label: 'b' }),
      ]);

      // Assess
      expect(textOf(a.json)).toBe('a:4');
      expect(textOf(b.json)).toBe('b:0');
      const envA = under.environmentsOf('tenant-a');
      const envB = under.environmentsOf('tenant-b');
      expect(envA.length).toBeGreaterThan(0);
      expect(envB.length).toBeGreaterThan(0);
      expect(envA.filter((id) => envB.includes(id))).toEqual([]);
    });

    it('reports a source that ends its process while loading as ok:false, and inspects the next source', async () => {
      // Act
      const exiting = await runtime.inspect('tenant-b', source('mcp-exiting', 1, 'process.exit(1);\n'));
      const next = await runtime.inspect('tenant-b', sample);

      // Assess
      expect(exiting.ok).toBe(false);
      expect(exiting.ok === false && exiting.error).toMatch(/exit/);
      expect(next).toEqual({ ok: true, tools: ['add', 'key_length'] });
    });

    it('answers a crash of the server with 502 and the request id, and serves the next request', async () => {
      // Act
      const crashed = await callTool(runtime, 'tenant-b', unruly, 'exit');
      const next = await callTool(runtime, 'tenant-b', sample, 'add', { a: 1, b: 2 });

      // Assess
      expect(crashed.response.status).toBe(502);
      expect(crashed.json).toMatchObject({
        jsonrpc: '2.0',
        id: 7,
        error: { code: -32000, message: expect.stringContaining('exit'), data: { code: 'MCP_SERVER_CRASHED' } },
      });
      expect(crashed.response.notStarted).toBeUndefined();
      expect(textOf(next.json)).toBe('3');
    });

    it('answers a request that misses its deadline with 504, whether the server waits or blocks, and serves the next one', async () => {
      // Act: a tool that never settles, then one that never yields the event loop
      const startedAt = performance.now();
      const hanging = await callTool(runtime, 'tenant-b', unruly, 'hang');
      const spinning = await callTool(runtime, 'tenant-b', unruly, 'spin');
      const took = performance.now() - startedAt;
      const next = await callTool(runtime, 'tenant-b', sample, 'add', { a: 2, b: 2 });

      // Assess
      for (const answer of [hanging, spinning]) {
        expect(answer.response.status).toBe(504);
        expect(answer.json).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32001, data: { code: 'TIMEOUT' } } });
        expect(answer.response.notStarted).toBeUndefined();
      }
      expect(took).toBeGreaterThanOrEqual(2 * setup.requestTimeoutMs * 0.9);
      expect(textOf(next.json)).toBe('4');
    });

    it('answers a request the caller cancels with 499 at once', async () => {
      // Prepare: a tool that answers after 5 s, cancelled after 0.3 s
      const controller = new AbortController();
      let abortedAt = Number.POSITIVE_INFINITY;
      setTimeout(() => {
        abortedAt = performance.now();
        controller.abort();
      }, 300);

      // Act
      const cancelled = await callTool(runtime, 'tenant-a', unruly, 'slow_key', { ms: 5000 }, { OPENAI_KEY: 'k' }, controller.signal);
      const answeredAt = performance.now();

      // Assess
      expect(cancelled.response.status).toBe(499);
      expect(cancelled.json).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32000, data: { code: 'REQUEST_CANCELLED' } } });
      expect(answeredAt - abortedAt).toBeLessThan(2000);
    });

    it('does not run a request whose signal is already aborted: 499, notStarted', async () => {
      // Act
      const cancelled = await callTool(runtime, 'tenant-a', sample, 'add', { a: 1, b: 1 }, {}, AbortSignal.abort());

      // Assess
      expect(cancelled.response.status).toBe(499);
      expect(cancelled.response.notStarted).toBe(true);
      expect(cancelled.json).toMatchObject({ id: 7, error: { code: -32000 } });
    });

    it('answers 503 with notStarted when no runtime can be had, and inspect throws McpRuntimeUnavailableError', async () => {
      // Prepare
      const unavailable = await setup.startUnavailable();
      try {
        // Act
        const answer = await callTool(unavailable.runtime, 'tenant-none', sample, 'add', { a: 1, b: 1 });
        const inspection = unavailable.runtime.inspect('tenant-none', sample);

        // Assess
        expect(answer.response.status).toBe(503);
        expect(answer.response.notStarted).toBe(true);
        expect(answer.json).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32000 } });
        await expect(inspection).rejects.toBeInstanceOf(McpRuntimeUnavailableError);
      } finally {
        await unavailable.close();
      }
    });
  });
}

/**
 * The local McpRuntime adapter against real MCP host processes (functions/runtimes/mcp-host), with
 * the official MCP client (`Client` + `StreamableHTTPClientTransport`) talking to the runtime
 * through a tiny HTTP bridge, as a platform route would.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalMcpRuntime, type LocalMcpRuntime, type McpProcessExit } from '../../functions/runtimes/mcp-local-runtime.ts';
import type { McpHttpResponse, McpRuntime, McpSource } from '../../functions/runtimes/mcp-runtime.ts';
import { requestOverSocket } from '../support/unix-http.ts';

/** Two tools with zod input schemas; `key_length` reports the length of the owner's OPENAI_KEY. */
const SAMPLE_CJS = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
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

exports.createMcpServer = () => {
  const server = new McpServer({ name: 'unruly', version: '1.0.0' });
  server.registerTool('spawn', { inputSchema: {} }, async () => text(require('child_process').execSync('id')));
  server.registerTool('builtin_spawn', { inputSchema: {} }, async () => text(process.getBuiltinModule('child_process').execSync('id')));
  server.registerTool('write', { inputSchema: { path: z.string() } }, async ({ path }) => {
    require('fs').writeFileSync(path, 'written');
    return text('written');
  });
  server.registerTool('read_platform_file', { inputSchema: { path: z.string() } }, async ({ path }) => text(require('fs').readFileSync(path, 'utf8').length));
  server.registerTool('env_keys', { inputSchema: {} }, async () => text(Object.keys(process.env).sort().join(',')));
  server.registerTool('slow_key', { inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    return text(process.env.OPENAI_KEY);
  });
  server.registerTool('exit', { inputSchema: {} }, async () => process.exit(1));
  server.registerTool('hang', { inputSchema: {} }, () => new Promise(() => {}));
  server.registerTool('spin', { inputSchema: {} }, () => { for (;;) {} });
  return server;
};
`;

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

function source(serverId: string, version: number, sourceCode: string): McpSource {
  return { serverId, version, sourceCode };
}

/** One JSON-RPC `tools/call` straight through `runtime.handle`. */
async function callTool(
  runtime: McpRuntime,
  tenantId: string,
  server: McpSource,
  name: string,
  args: Record<string, unknown> = {},
  env: Record<string, string> = {},
): Promise<{ response: McpHttpResponse; json: any }> {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name, arguments: args } });
  const response = await runtime.handle(tenantId, server, { method: 'POST', headers: MCP_HEADERS, body }, env);
  return { response, json: JSON.parse(response.body) };
}

const textOf = (json: any): string => json.result?.content?.[0]?.text;

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
        .handle(tenantId, source(serverId, version, sourceCode), { method: req.method as 'GET' | 'POST' | 'DELETE', headers, body: Buffer.concat(parts).toString('utf8') }, envs.get(tenantId) ?? {})
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

/** Connects the official MCP client (initialize, initialized, then the optional GET stream). */
async function connectClient(url: URL): Promise<Client> {
  const client = new Client({ name: 'runtime-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(url));
  return client;
}

/** Resolves with the next host exit matching `match` (subscribe before causing it). */
function nextExit(runtime: LocalMcpRuntime, match: (exit: McpProcessExit) => boolean): Promise<McpProcessExit> {
  return new Promise((resolve) => {
    const off = runtime.onProcessExit((exit) => {
      if (!match(exit)) return;
      off();
      resolve(exit);
    });
  });
}

function pidOf(runtime: LocalMcpRuntime, tenantId: string): number | undefined {
  return runtime.stats().processes.find((p) => p.tenantId === tenantId)?.pid;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('local MCP runtime: one host process per tenant', () => {
  const SECRET_NAME = 'PLATFORM_MCP_TEST_SECRET';
  const sources = new Map<string, string>();
  const envs = new Map<string, Record<string, string>>();
  let runtime: LocalMcpRuntime;
  let bridge: Awaited<ReturnType<typeof startBridge>>;
  let scratch: string;

  beforeAll(async () => {
    // Prepare: a platform variable that must never reach a host, one runtime, one bridge
    process.env[SECRET_NAME] = 'do-not-leak';
    scratch = mkdtempSync(join(tmpdir(), 'mcp-runtime-test-'));
    runtime = createLocalMcpRuntime();
    sources.set('mcp-cjs@1', SAMPLE_CJS);
    sources.set('mcp-esm@1', SAMPLE_ESM);
    envs.set('tenant-a', { OPENAI_KEY: 'sk-0123456789' });
    bridge = await startBridge(runtime, sources, envs);
  });
  afterAll(async () => {
    delete process.env[SECRET_NAME];
    await bridge?.close();
    await runtime?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it.each([
    ['CommonJS', 'mcp-cjs'],
    ['ES module', 'mcp-esm'],
  ])('serves a %s server to the official MCP client: initialize, tools/list, tools/call', async (_kind, serverId) => {
    // Act
    const client = await connectClient(bridge.url('tenant-a', serverId));
    try {
      const listed = await client.listTools();
      const sum = await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } });
      const keyLength = await client.callTool({ name: 'key_length', arguments: { label: 'openai' } });
      const invalid = await client.callTool({ name: 'add', arguments: { a: 'two' } });

      // Assess: tools with their zod-derived schemas, results, and input validation
      expect(client.getServerVersion()?.name).toBe(serverId === 'mcp-cjs' ? 'sample-cjs' : 'sample-esm');
      expect(listed.tools.map((t) => t.name)).toEqual(['add', 'key_length']);
      expect(listed.tools[0]!.inputSchema).toMatchObject({ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] });
      expect(sum.content).toEqual([{ type: 'text', text: '42' }]);
      expect(keyLength.content).toEqual([{ type: 'text', text: 'openai:13' }]);
      expect(invalid.isError).toBe(true);
      expect(JSON.stringify(invalid.content)).toContain('Input validation error');
    } finally {
      await client.close();
    }
  });

  it('inspects a source in the owner\'s process: tool names of CommonJS and ES module servers', async () => {
    // Act
    const cjs = await runtime.inspect('tenant-a', source('mcp-cjs', 1, SAMPLE_CJS));
    const esm = await runtime.inspect('tenant-a', source('mcp-esm', 1, SAMPLE_ESM));

    // Assess
    expect(cjs).toEqual({ ok: true, tools: ['add', 'key_length'] });
    expect(esm).toEqual({ ok: true, tools: ['add', 'key_length'] });
    expect(runtime.stats().processes.map((p) => p.tenantId)).toContain('tenant-a');
  });

  it.each([
    ['a syntax error', 'module.exports = {\n  createMcpServer() {\n    return oops oops;\n  },\n};\n', /SyntaxError: Unexpected identifier 'oops' \(line 3\)/],
    ['an ES module syntax error', "import { z } from 'zod';\nexport const = 1;\n", /SyntaxError: Unexpected token '='/],
    ['no createMcpServer', 'module.exports = { makeServer() {} };\n', /does not export a createMcpServer function \(it exports: makeServer\)/],
    ['a throwing factory', "exports.createMcpServer = () => {\n  throw new Error('no API key configured');\n};\n", /createMcpServer\(\) failed: Error: no API key configured \(line 2\)/],
    ['a factory returning no server', 'exports.createMcpServer = () => 42;\n', /must return an McpServer .*number/],
    ['child_process', "const { execSync } = require('child_process');\nexports.createMcpServer = () => null;\n", /module 'child_process' is not available to MCP servers/],
    ['node:child_process in an ES module', "import { spawn } from 'node:child_process';\nexport const createMcpServer = () => spawn;\n", /module 'node:child_process' is not available/],
    ['a package outside the allowlist', "const _ = require('lodash');\n", /module 'lodash' is not available to MCP servers: a server is one file and may use only @modelcontextprotocol\/sdk, zod/],
    ['an SDK path without .js', "import { McpServer } from '@modelcontextprotocol/sdk/server/mcp';\nexport const createMcpServer = () => new McpServer({ name: 'x', version: '1' });\n", /^module '@modelcontextprotocol\/sdk\/server\/mcp' was not found \(subpaths of @modelcontextprotocol\/sdk end in \.js, e\.g\. '@modelcontextprotocol\/sdk\/server\/mcp\.js'\)$/],
    ['a relative import', "import './helpers.js';\nexport const createMcpServer = () => null;\n", /module '.\/helpers.js' is not available/],
    ['a file write while loading', "require('fs').writeFileSync('/tmp/mcp-runtime-test-should-not-exist', 'x');\n", /access denied: MCP servers may not use FileSystemWrite \(\/tmp\/mcp-runtime-test-should-not-exist\)/],
    ['module as a way around the allowlist', "const { createRequire } = require('module');\n", /module 'module' is not available/],
  ])('refuses a source with %s: inspect is ok:false with the reason', async (_case, sourceCode, message) => {
    // Act
    const inspection = await runtime.inspect('tenant-a', source('mcp-bad', 1, sourceCode));

    // Assess
    expect(inspection.ok).toBe(false);
    expect(inspection.ok === false && inspection.error).toMatch(message);
    expect(existsSync('/tmp/mcp-runtime-test-should-not-exist')).toBe(false);
  });

  it('refuses processes, file writes and reads outside its packages at call time', async () => {
    // Prepare
    const unruly = source('mcp-unruly', 1, UNRULY);
    const target = join(scratch, 'written.txt');

    // Act
    const spawned = await callTool(runtime, 'tenant-a', unruly, 'spawn');
    const viaBuiltin = await callTool(runtime, 'tenant-a', unruly, 'builtin_spawn');
    const written = await callTool(runtime, 'tenant-a', unruly, 'write', { path: target });
    const read = await callTool(runtime, 'tenant-a', unruly, 'read_platform_file', { path: join(process.cwd(), 'package.json') });
    const after = await callTool(runtime, 'tenant-a', unruly, 'env_keys');

    // Assess: each is a tool error, nothing was written, and the host still serves
    expect(spawned.json.result).toMatchObject({ isError: true, content: [{ text: expect.stringContaining("module 'child_process' is not available") }] });
    expect(viaBuiltin.json.result).toMatchObject({ isError: true, content: [{ text: expect.stringContaining("module 'child_process' is not available") }] });
    expect(written.json.result).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('Access to this API has been restricted') }] });
    expect(existsSync(target)).toBe(false);
    expect(read.json.result).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('Access to this API has been restricted') }] });
    expect(after.response.status).toBe(200);
  });

  it('keeps the platform environment out and gives each request its own keys, also concurrently', async () => {
    // Prepare
    const unruly = source('mcp-unruly', 1, UNRULY);

    // Act: two overlapping requests with different keys, then one without keys
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
    expect(names).not.toContain(SECRET_NAME);
    expect(names).not.toContain('OPENAI_KEY');
    // PWD is bubblewrap's, the working directory inside the sandbox.
    expect(names.every((name) => ['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'PWD', 'WEATHER_KEY'].includes(name))).toBe(true);
    expect(textOf(none.json)).toBe('undefined');
  });

  it('runs each version with its own code, and reloads a version whose source differs', async () => {
    // Prepare: versions 1 and 2 of one server answer differently
    const version = (n: number, answer: string) =>
      source('mcp-versions', n, `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
exports.createMcpServer = () => {
  const server = new McpServer({ name: 'versions', version: '${n}.0.0' });
  server.registerTool('which', { inputSchema: {} }, async () => ({ content: [{ type: 'text', text: '${answer}' }] }));
  return server;
};`);

    // Act: interleaved, so a cached v2 must not shadow v1 or the reverse
    const answers: string[] = [];
    for (const server of [version(1, 'one'), version(2, 'two'), version(1, 'one'), version(2, 'two')]) answers.push(textOf((await callTool(runtime, 'tenant-a', server, 'which')).json));
    const changed = textOf((await callTool(runtime, 'tenant-a', version(2, 'two, edited'), 'which')).json);

    // Assess
    expect(answers).toEqual(['one', 'two', 'one', 'two']);
    expect(changed).toBe('two, edited');
  });

  it('runs two tenants in two processes, each with only its own keys', async () => {
    // Prepare
    const sample = source('mcp-cjs', 1, SAMPLE_CJS);

    // Act
    const a = await callTool(runtime, 'tenant-a', sample, 'key_length', { label: 'a' }, { OPENAI_KEY: 'aaaa' });
    const b = await callTool(runtime, 'tenant-b', sample, 'key_length', { label: 'b' });

    // Assess
    expect(textOf(a.json)).toBe('a:4');
    expect(textOf(b.json)).toBe('b:0');
    const pidA = pidOf(runtime, 'tenant-a');
    const pidB = pidOf(runtime, 'tenant-b');
    expect(pidA).toBeDefined();
    expect(pidB).toBeDefined();
    expect(pidA).not.toBe(pidB);
  });

  it('refuses a request to a host without its token (another tenant\'s code on loopback)', async () => {
    // Prepare
    await runtime.inspect('tenant-b', source('mcp-cjs', 1, SAMPLE_CJS));
    const socketPath = runtime.stats().processes.find((p) => p.tenantId === 'tenant-b')!.socketPath;

    // Act
    const response = await requestOverSocket(socketPath, 'POST', '/handle', {
      body: JSON.stringify({ serverId: 'x', version: 1, sourceCode: 'exports.createMcpServer = () => null', request: { method: 'POST', headers: {}, body: '{}' }, env: {} }),
    });

    // Assess
    expect(response.status).toBe(401);
  });

  it('answers a crash with 502, reports it, and serves the next call from a fresh process', async () => {
    // Prepare
    const unruly = source('mcp-unruly', 1, UNRULY);
    await callTool(runtime, 'tenant-c', unruly, 'env_keys');
    const before = pidOf(runtime, 'tenant-c')!;
    const exited = nextExit(runtime, (exit) => exit.tenantId === 'tenant-c');

    // Act
    const crashed = await callTool(runtime, 'tenant-c', unruly, 'exit');
    const exit = await exited;
    const next = await callTool(runtime, 'tenant-c', source('mcp-cjs', 1, SAMPLE_CJS), 'add', { a: 1, b: 2 });

    // Assess
    expect(crashed.response.status).toBe(502);
    expect(crashed.json).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32000, message: expect.stringContaining('exit code 1') } });
    expect(exit).toMatchObject({ pid: before, reason: 'crashed', code: 1 });
    expect(isAlive(before)).toBe(false);
    expect(textOf(next.json)).toBe('3');
    expect(pidOf(runtime, 'tenant-c')).not.toBe(before);
  });

  it('starts one process for concurrent first calls of a tenant', async () => {
    // Prepare
    const exits: McpProcessExit[] = [];
    const off = runtime.onProcessExit((exit) => exits.push(exit));

    // Act
    const results = await Promise.all([1, 2, 3].map(() => runtime.inspect('tenant-d', source('mcp-cjs', 1, SAMPLE_CJS))));
    off();

    // Assess
    expect(results).toEqual([1, 2, 3].map(() => ({ ok: true, tools: ['add', 'key_length'] })));
    expect(runtime.stats().processes.filter((p) => p.tenantId === 'tenant-d')).toHaveLength(1);
    expect(exits.filter((e) => e.tenantId === 'tenant-d')).toEqual([]);
  });

  it('answers GET (no server-initiated stream in stateless mode) with 405', async () => {
    // Act
    const response = await runtime.handle('tenant-a', source('mcp-cjs', 1, SAMPLE_CJS), { method: 'GET', headers: { accept: 'text/event-stream' }, body: '' }, {});

    // Assess
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('POST');
  });
});

describe('local MCP runtime: timeouts, idle stop, LRU cap and close', () => {
  it('answers a hanging tool with 504 and ends the work with its host; kills a process whose event loop is stuck', async () => {
    // Prepare: short limits
    const runtime = createLocalMcpRuntime({ requestTimeoutMs: 800, watchdogGraceMs: 700 });
    const unruly = source('mcp-unruly', 1, UNRULY);
    try {
      await callTool(runtime, 'tenant-t', unruly, 'env_keys');
      const pid = pidOf(runtime, 'tenant-t')!;

      // Act: a tool that never settles (the host answers), then one that never yields (the watchdog answers)
      const ended = nextExit(runtime, (exit) => exit.tenantId === 'tenant-t');
      const hanging = await callTool(runtime, 'tenant-t', unruly, 'hang');
      const hangExit = await ended;
      await callTool(runtime, 'tenant-t', unruly, 'env_keys');
      const spinPid = pidOf(runtime, 'tenant-t')!;
      const killed = nextExit(runtime, (exit) => exit.tenantId === 'tenant-t');
      const spinning = await callTool(runtime, 'tenant-t', unruly, 'spin');
      const exit = await killed;
      const next = await callTool(runtime, 'tenant-t', source('mcp-cjs', 1, SAMPLE_CJS), 'add', { a: 2, b: 2 });

      // Assess: a missed deadline stops the tenant's work for real, not only the answer
      expect(hanging.response.status).toBe(504);
      expect(hanging.json).toMatchObject({ id: 7, error: { code: -32001, message: 'the MCP server did not answer within 800 ms' } });
      expect(hangExit).toMatchObject({ pid, reason: 'timed-out' });
      expect(spinPid).not.toBe(pid);
      expect(spinning.response.status).toBe(504);
      expect(spinning.json).toMatchObject({ id: 7, error: { code: -32001 } });
      expect(exit).toMatchObject({ pid: spinPid, reason: 'unresponsive' });
      expect(textOf(next.json)).toBe('4');
    } finally {
      await runtime.close();
    }
  });

  it('stops an idle process, and evicts the least recently used one at the cap', async () => {
    // Prepare: one process at most, stopped after 400 ms without requests
    const runtime = createLocalMcpRuntime({ maxProcesses: 1, idleTimeoutMs: 400 });
    const sample = source('mcp-cjs', 1, SAMPLE_CJS);
    try {
      await runtime.inspect('tenant-x', sample);
      const first = pidOf(runtime, 'tenant-x')!;
      const evicted = nextExit(runtime, (exit) => exit.pid === first);

      // Act: a second tenant needs the only place
      await runtime.inspect('tenant-y', sample);
      const second = pidOf(runtime, 'tenant-y')!;
      const idle = nextExit(runtime, (exit) => exit.pid === second);

      // Assess
      expect(await evicted).toMatchObject({ tenantId: 'tenant-x', reason: 'evicted' });
      expect(await idle).toMatchObject({ tenantId: 'tenant-y', reason: 'idle' });
      expect(isAlive(first)).toBe(false);
      expect(isAlive(second)).toBe(false);
      expect(runtime.stats()).toEqual({ processes: [], starting: 0 });
    } finally {
      await runtime.close();
    }
  });

  it('keeps a loaded version for later requests, builds a server per request, and drops the least recently used version', async () => {
    // Prepare: the module's load id shows a reload; the factory's count shows a build per request
    const counting = (version: number) =>
      source('mcp-counting', version, `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const loadId = Math.random().toString(36).slice(2);
let built = 0;
exports.createMcpServer = () => {
  built++;
  const server = new McpServer({ name: 'counting', version: '${version}.0.0' });
  server.registerTool('ids', { inputSchema: {} }, async () => ({ content: [{ type: 'text', text: loadId + ':' + built }] }));
  return server;
};`);
    const runtime = createLocalMcpRuntime({ maxModules: 1 });
    const ids = async (version: number) => textOf((await callTool(runtime, 'tenant-m', counting(version), 'ids')).json).split(':');
    try {
      // Act
      const first = await ids(1);
      const again = await ids(1);
      await ids(2);
      const reloaded = await ids(1);

      // Assess
      expect(again).toEqual([first[0], '2']);
      expect(reloaded[0]).not.toBe(first[0]);
      expect(reloaded[1]).toBe('1');
    } finally {
      await runtime.close();
    }
  });

  it('caps a host\'s memory: a server that exhausts its heap ends its process, answered 502', async () => {
    // Prepare
    const runtime = createLocalMcpRuntime({ memoryMb: 48 });
    const hog = source('mcp-hog', 1, `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
exports.createMcpServer = () => {
  const server = new McpServer({ name: 'hog', version: '1.0.0' });
  server.registerTool('hog', { inputSchema: {} }, async () => {
    const kept = [];
    for (;;) kept.push(new Array(100000).fill(Math.random()));
  });
  return server;
};`);
    try {
      await runtime.inspect('tenant-h', hog);
      const exited = nextExit(runtime, (exit) => exit.tenantId === 'tenant-h');

      // Act
      const answer = await callTool(runtime, 'tenant-h', hog, 'hog');

      // Assess
      expect(answer.response.status).toBe(502);
      expect(answer.json.error.message).toContain('ran out of memory');
      expect(await exited).toMatchObject({ reason: 'crashed' });
    } finally {
      await runtime.close();
    }
  });

  it('close() stops every process, including one still starting, and refuses later calls', async () => {
    // Prepare
    const runtime = createLocalMcpRuntime();
    const sample = source('mcp-cjs', 1, SAMPLE_CJS);
    await runtime.inspect('tenant-1', sample);
    const running = pidOf(runtime, 'tenant-1')!;
    const exits: McpProcessExit[] = [];
    runtime.onProcessExit((exit) => exits.push(exit));
    const starting = runtime.inspect('tenant-2', sample).catch((error: unknown) => error);

    // Act
    await runtime.close();
    const late = await callTool(runtime, 'tenant-1', sample, 'add', { a: 1, b: 1 });

    // Assess: every process started is gone, and said so
    await starting;
    expect(exits.map((e) => e.reason)).toEqual(exits.map(() => 'closed'));
    expect(exits.map((e) => e.tenantId).sort()).toEqual(['tenant-1', 'tenant-2']);
    for (const exit of exits) expect(isAlive(exit.pid)).toBe(false);
    expect(isAlive(running)).toBe(false);
    expect(late.response.status).toBe(503);
    await expect(runtime.inspect('tenant-1', sample)).rejects.toThrow('closed');
  });
});

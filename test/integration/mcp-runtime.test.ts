/**
 * What only the local McpRuntime adapter does, against real MCP host processes
 * (functions/runtimes/mcp-host): Node's permission model in the hosts, their clean environment,
 * their control token, and the supervision of the processes (crash, deadlines, idle stop, LRU cap,
 * memory cap, module cache size, close). What every McpRuntime adapter promises (inspection,
 * serving the official client, env per request, versions, tenants, failures as JSON-RPC errors)
 * is the contract in test/contract/mcp-runtime.contract.ts.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLocalMcpRuntime, type LocalMcpRuntime, type McpProcessExit } from '../../functions/adapters/mcp-runtime/local.ts';
import type { McpHttpResponse, McpRuntime, McpSource } from '../../functions/runtimes/mcp-runtime.ts';
import { requestOverSocket } from '../support/unix-http.ts';
import { MCP_HEADERS, SAMPLE_CJS, textOf } from '../contract/mcp-runtime.contract.ts';

/** Tools that misbehave on purpose (the contract's own source has the rest). */
const UNRULY = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

const text = (value) => ({ content: [{ type: 'text', text: String(value) }] });

exports.createMcpServer = () => {
  const server = new McpServer({ name: 'unruly', version: '1.0.0' });
  server.registerTool('write', { inputSchema: { path: z.string() } }, async ({ path }) => {
    require('fs').writeFileSync(path, 'written');
    return text('written');
  });
  server.registerTool('read_platform_file', { inputSchema: { path: z.string() } }, async ({ path }) => text(require('fs').readFileSync(path, 'utf8').length));
  server.registerTool('env_keys', { inputSchema: {} }, async () => text(Object.keys(process.env).sort().join(',')));
  server.registerTool('exit', { inputSchema: {} }, async () => process.exit(1));
  server.registerTool('hang', { inputSchema: {} }, () => new Promise(() => {}));
  server.registerTool('spin', { inputSchema: {} }, () => { for (;;) {} });
  return server;
};
`;

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
  let runtime: LocalMcpRuntime;
  let scratch: string;

  beforeAll(() => {
    // Prepare: one runtime, a scratch directory that hosts must not be able to write to
    scratch = mkdtempSync(join(tmpdir(), 'mcp-runtime-test-'));
    runtime = createLocalMcpRuntime();
  });
  afterAll(async () => {
    await runtime?.close();
    rmSync(scratch, { recursive: true, force: true });
  });

  it.each([
    // The other refusals (syntax, allowlist, factory) are the contract's; this one is Node's permission model.
    [
      'a file write while loading',
      "require('fs').writeFileSync('/tmp/mcp-runtime-test-should-not-exist', 'x');\n",
      /access denied: MCP servers may not use FileSystemWrite \(\/tmp\/mcp-runtime-test-should-not-exist\)/,
    ],
  ])('refuses a source with %s: inspect is ok:false with the reason', async (_case, sourceCode, message) => {
    // Act
    const inspection = await runtime.inspect('tenant-a', source('mcp-bad', 1, sourceCode));

    // Assess
    expect(inspection.ok).toBe(false);
    expect(inspection.ok === false && inspection.error).toMatch(message);
    expect(existsSync('/tmp/mcp-runtime-test-should-not-exist')).toBe(false);
  });

  it('refuses file writes and reads outside its packages at call time (permission model)', async () => {
    // Prepare
    const unruly = source('mcp-unruly', 1, UNRULY);
    const target = join(scratch, 'written.txt');

    // Act
    const written = await callTool(runtime, 'tenant-a', unruly, 'write', { path: target });
    const read = await callTool(runtime, 'tenant-a', unruly, 'read_platform_file', { path: join(process.cwd(), 'package.json') });
    const after = await callTool(runtime, 'tenant-a', unruly, 'env_keys');

    // Assess: each is a tool error, nothing was written, and the host still serves
    expect(written.json.result).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('Access to this API has been restricted') }] });
    expect(existsSync(target)).toBe(false);
    expect(read.json.result).toMatchObject({ isError: true, content: [{ text: expect.stringContaining('Access to this API has been restricted') }] });
    expect(after.response.status).toBe(200);
  });

  it("starts hosts with a few fixed basics as their whole environment, plus the request's keys", async () => {
    // Act
    const keys = await callTool(runtime, 'tenant-a', source('mcp-unruly', 1, UNRULY), 'env_keys', {}, { WEATHER_KEY: 'w' });

    // Assess (keys per request and the platform's own variables are the contract's).
    // PWD is bubblewrap's, the working directory inside the sandbox.
    const names = textOf(keys.json).split(',');
    expect(names).toContain('WEATHER_KEY');
    expect(names.filter((name) => !['PATH', 'HOME', 'LANG', 'LC_ALL', 'TZ', 'TMPDIR', 'PWD', 'WEATHER_KEY'].includes(name))).toEqual([]);
  });

  it("refuses a request to a host without its token (another tenant's code on loopback)", async () => {
    // Prepare
    await runtime.inspect('tenant-b', source('mcp-cjs', 1, SAMPLE_CJS));
    const socketPath = runtime.stats().processes.find((p) => p.tenantId === 'tenant-b')!.socketPath;

    // Act
    const response = await requestOverSocket(socketPath, 'POST', '/handle', {
      body: JSON.stringify({
        serverId: 'x',
        version: 1,
        sourceCode: 'exports.createMcpServer = () => null',
        request: { method: 'POST', headers: {}, body: '{}' },
        env: {},
      }),
    });

    // Assess
    expect(response.status).toBe(401);
  });

  it('reports a crashed host with its exit code, and serves the next call from a fresh process', async () => {
    // Prepare
    const unruly = source('mcp-unruly', 1, UNRULY);
    await callTool(runtime, 'tenant-c', unruly, 'env_keys');
    const before = pidOf(runtime, 'tenant-c')!;
    const exited = nextExit(runtime, (exit) => exit.tenantId === 'tenant-c');

    // Act
    const crashed = await callTool(runtime, 'tenant-c', unruly, 'exit');
    const exit = await exited;
    const next = await callTool(runtime, 'tenant-c', source('mcp-cjs', 1, SAMPLE_CJS), 'add', { a: 1, b: 2 });

    // Assess (the 502 answer itself is the contract's)
    expect(crashed.json).toMatchObject({ error: { message: expect.stringContaining('exit code 1') } });
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
});

describe('local MCP runtime: timeouts, idle stop, LRU cap and close', () => {
  it('ends the work of a request that missed its deadline with its host; kills a host whose event loop is stuck', async () => {
    // Prepare: a short deadline; a grace the host's own answer to a missed deadline fits in even on a loaded machine
    const runtime = createLocalMcpRuntime({ requestTimeoutMs: 800, watchdogGraceMs: 3000 });
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

      // Assess: a missed deadline stops the tenant's work for real, not only the answer (the 504
      // answers themselves are the contract's)
      expect(hanging.json).toMatchObject({ error: { message: 'the MCP server did not answer within 800 ms' } });
      expect(hangExit).toMatchObject({ pid, reason: 'timed-out' });
      expect(spinPid).not.toBe(pid);
      expect(spinning.response.status).toBe(504);
      expect(exit).toMatchObject({ pid: spinPid, reason: 'unresponsive' });
      expect(textOf(next.json)).toBe('4');
    } finally {
      await runtime.close();
    }
  });

  it('stops an idle process, and evicts the least recently used one at the cap', async () => {
    // Prepare: one process at most, stopped after 400 ms without requests, and any idle one may make
    // room at once (by default only one idle for 10 s may)
    const runtime = createLocalMcpRuntime({ maxProcesses: 1, idleTimeoutMs: 400, minIdleMs: 0 });
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

  it('drops the least recently used loaded version beyond maxModules', async () => {
    // Prepare: the module's load id shows a reload; the factory's count shows a build per request
    const counting = (version: number) =>
      source(
        'mcp-counting',
        version,
        `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const loadId = Math.random().toString(36).slice(2);
let built = 0;
exports.createMcpServer = () => {
  built++;
  const server = new McpServer({ name: 'counting', version: '${version}.0.0' });
  server.registerTool('ids', { inputSchema: {} }, async () => ({ content: [{ type: 'text', text: loadId + ':' + built }] }));
  return server;
};`,
      );
    const runtime = createLocalMcpRuntime({ maxModules: 1 });
    const ids = async (version: number) => textOf((await callTool(runtime, 'tenant-m', counting(version), 'ids')).json).split(':');
    try {
      // Act
      const first = await ids(1);
      await ids(2);
      const reloaded = await ids(1);

      // Assess (keeping a loaded version at all is the contract's)
      expect(first[1]).toBe('1');
      expect(reloaded[0]).not.toBe(first[0]);
      expect(reloaded[1]).toBe('1');
    } finally {
      await runtime.close();
    }
  });

  it("caps a host's memory: a server that exhausts its heap ends its process, answered 502", async () => {
    // Prepare
    const runtime = createLocalMcpRuntime({ memoryMb: 48 });
    const hog = source(
      'mcp-hog',
      1,
      `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
exports.createMcpServer = () => {
  const server = new McpServer({ name: 'hog', version: '1.0.0' });
  server.registerTool('hog', { inputSchema: {} }, async () => {
    const kept = [];
    for (;;) kept.push(new Array(100000).fill(Math.random()));
  });
  return server;
};`,
    );
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

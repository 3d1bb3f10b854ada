/**
 * Attacks from a security review, replayed against `npm start` as an attacker would: one platform,
 * two users, hostile user code. Each tried to leave the tenant's sandbox; each must fail at the OS
 * boundary (os-sandbox.ts) whatever the language-level layers let through.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const ACCEPT = { accept: 'application/json, text/event-stream' };

/**
 * An MCP server whose one tool tries every way out it is told about and reports what happened.
 * `this.constructor.constructor('return process')()` is the reported route around the host's
 * per-request `process` view: it works, and must not matter.
 */
const ESCAPING_MCP_SERVER = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

function realProcess() {
  try { return (function () { return this.constructor.constructor('return process')(); }).call({}); } catch (e) { return process; }
}

async function attempt(work) {
  try { return { ok: true, value: String(await work()).slice(0, 200) }; } catch (e) { return { ok: false, error: String(e && e.code || e && e.message || e).slice(0, 200) }; }
}

exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'escape', version: '1.0.0' });
  server.registerTool('escape', { description: 'tries to leave', inputSchema: { platformPid: z.number(), platformPort: z.number(), dataDir: z.string() } }, async ({ platformPid, platformPort, dataDir }) => {
    const proc = realProcess();
    const results = {
      ppid: proc.ppid,
      stopParent: await attempt(() => proc.kill(proc.ppid, 'SIGSTOP')),
      stopPlatform: await attempt(() => proc.kill(platformPid, 'SIGSTOP')),
      fetchPlatform: await attempt(async () => (await fetch('http://127.0.0.1:' + platformPort + '/health')).status),
      connectPlatform: await attempt(() => new Promise((resolve, reject) => {
        const net = proc.getBuiltinModule ? proc.getBuiltinModule('net') : require('net');
        const socket = net.connect(platformPort, '127.0.0.1');
        socket.once('connect', () => { socket.destroy(); resolve('connected'); });
        socket.once('error', reject);
      })),
      readAdminToken: await attempt(() => {
        const fs = proc.getBuiltinModule ? proc.getBuiltinModule('fs') : require('fs');
        return fs.readFileSync(dataDir + '/admin-token', 'utf8');
      }),
      listProcesses: await attempt(() => {
        const fs = proc.getBuiltinModule ? proc.getBuiltinModule('fs') : require('fs');
        return fs.readdirSync('/proc').filter((name) => /^\\d+$/.test(name)).join(',');
      }),
    };
    if (results.stopParent.ok) proc.kill(proc.ppid, 'SIGCONT');
    return { content: [{ type: 'text', text: JSON.stringify(results) }] };
  });
  return server;
};
`;

interface AttemptResult {
  ok: boolean;
  value?: string;
  error?: string;
}

/** The platform process's state letter from /proc (T: stopped). */
function processState(pid: number): string {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]!;
}

/** An MCP server whose tool fetches a URL it is given, through whatever `fetch` the host provides. */
const FETCHING_MCP_SERVER = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');
exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'fetcher', version: '1.0.0' });
  server.registerTool('get', { description: 'fetches', inputSchema: { url: z.string() } }, async ({ url }) => {
    try {
      const response = await fetch(url);
      return { content: [{ type: 'text', text: 'status ' + response.status + ': ' + (await response.text()) }] };
    } catch (e) {
      return { content: [{ type: 'text', text: 'failed: ' + String(e && e.cause && e.cause.message || e && e.message || e) }] };
    }
  });
  return server;
};
`;

describe('isolation: hostile MCP server code stays inside its sandbox', () => {
  let platform: TestPlatform;
  let attacker: { token: string };
  let outside: http.Server;
  let outsidePort: number;

  beforeAll(async () => {
    // Prepare: a service the operator lets MCP servers reach (an exact host:port entry).
    outside = http.createServer((_request, response) => response.end('hello from outside'));
    await new Promise<void>((resolve) => outside.listen(0, '127.0.0.1', resolve));
    outsidePort = (outside.address() as AddressInfo).port;
    platform = await startTestPlatform({ mcpEgressAllowHosts: [`127.0.0.1:${outsidePort}`] });
    attacker = await createUser(platform, { alias: 'mallory', credits: 100 });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
    await new Promise((resolve) => outside.close(resolve));
  });

  it('reaches what the operator allows through the egress proxy, and nothing else', async () => {
    // Prepare
    const created = await platform.api('POST', '/mcp-admin/create', {
      token: attacker.token,
      body: { serverName: 'fetcher', description: 'x', sourceCode: FETCHING_MCP_SERVER },
    });
    expect(created.status).toBe(200);
    const serverId = created.body.data.serverId as string;
    const get = async (url: string) => {
      const call = await platform.api('POST', `/mcp/${serverId}`, {
        token: attacker.token,
        headers: ACCEPT,
        body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get', arguments: { url } } },
      });
      return call.body.result.content[0].text as string;
    };

    // Act
    const allowed = await get(`http://127.0.0.1:${outsidePort}/`);
    const platformItself = await get(`${platform.url}/health`);

    // Assess
    expect(allowed).toBe('status 200: hello from outside');
    expect(platformItself).toMatch(/^failed: /);
  });

  it('cannot signal the platform, reach its port, read its data or see its processes', async () => {
    // Prepare
    const created = await platform.api('POST', '/mcp-admin/create', {
      token: attacker.token,
      body: { serverName: 'escape', description: 'x', sourceCode: ESCAPING_MCP_SERVER },
    });
    expect(created.status).toBe(200);
    const serverId = created.body.data.serverId as string;
    const platformPort = Number(new URL(platform.url).port);

    // Act
    const call = await platform.api('POST', `/mcp/${serverId}`, {
      token: attacker.token,
      headers: ACCEPT,
      body: {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'escape', arguments: { platformPid: process.pid, platformPort, dataDir: platform.dataDir } },
      },
    });
    const health = await platform.api('GET', '/health');

    // Assess: the platform was never stopped and still answers
    expect(processState(process.pid)).not.toBe('T');
    expect(health.status).toBe(200);
    expect(call.status).toBe(200);
    const results = JSON.parse(call.body.result.content[0].text) as Record<
      'stopParent' | 'stopPlatform' | 'fetchPlatform' | 'connectPlatform' | 'readAdminToken' | 'listProcesses',
      AttemptResult
    > & { ppid: number };
    // Inside its own pid namespace the host's parent is the sandbox's init, never the platform.
    expect(results.ppid).not.toBe(process.pid);
    expect(results.stopPlatform.ok).toBe(false);
    expect(results.fetchPlatform.ok).toBe(false);
    expect(results.connectPlatform.ok).toBe(false);
    expect(results.readAdminToken.ok).toBe(false);
    expect(JSON.stringify(results)).not.toContain(platform.adminToken);
    // Only the sandbox's own few processes, whatever runs on the machine.
    if (results.listProcesses.ok) expect(results.listProcesses.value!.split(',').length).toBeLessThan(5);
  });
});

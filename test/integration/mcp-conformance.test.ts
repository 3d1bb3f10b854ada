/**
 * MCP errors as the specification says (issue 38): -32600 for a message that is not JSON-RPC 2.0,
 * -32602 for `tools/call` without a name (seen by the official SDK client), and a 401 that names
 * its scheme in `WWW-Authenticate`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const ECHO = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');
exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'echo', version: '1.0.0' });
  server.registerTool('echo', { description: 'Echoes', inputSchema: { text: z.string() } }, async ({ text }) => ({ content: [{ type: 'text', text }] }));
  return server;
};
`;

const HEADERS = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };

describe('MCP errors by the specification', () => {
  let platform: TestPlatform;
  let owner: { userId: string; token: string };
  let serverId: string;

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await createUser(platform, { alias: 'conform-owner', credits: 100 });
    const res = await platform.api('POST', '/mcp-admin/create', {
      token: owner.token,
      body: { serverName: 'echo', description: 'for tests', sourceCode: ECHO },
    });
    if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
    serverId = res.body.data.serverId;
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('answers -32600 (Invalid Request) to "jsonrpc": "1.0" and to a message with no method', async () => {
    // Act
    const wrongVersion = await fetch(`${platform.url}/mcp/${serverId}`, {
      method: 'POST',
      headers: { ...HEADERS, authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ jsonrpc: '1.0', id: 7, method: 'tools/list' }),
    });
    const noMethod = await fetch(`${platform.url}/mcp/${serverId}`, {
      method: 'POST',
      headers: { ...HEADERS, authorization: `Bearer ${owner.token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 8 }),
    });
    // Assess
    expect(wrongVersion.status).toBe(400);
    expect(await wrongVersion.json()).toMatchObject({ jsonrpc: '2.0', id: 7, error: { code: -32600 } });
    expect(await noMethod.json()).toMatchObject({ jsonrpc: '2.0', id: 8, error: { code: -32600 } });
  });

  it('answers -32602 (Invalid params) to tools/call without a name, as the official client sees it', async () => {
    // Prepare
    const client = new Client({ name: 'conformance', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${platform.url}/mcp/${serverId}`), { requestInit: { headers: { authorization: `Bearer ${owner.token}` } } }),
    );
    // Act
    const failure = await client
      .request({ method: 'tools/call', params: { arguments: { text: 'x' } } } as never, CallToolResultSchema)
      .catch((error: unknown) => error);
    const ok = await client.callTool({ name: 'echo', arguments: { text: 'still fine' } });
    await client.close();
    // Assess
    expect(failure).toBeInstanceOf(Error);
    const code = failure instanceof McpError ? failure.code : Number(/"code":(-?\d+)/.exec(String((failure as Error).message))?.[1]);
    expect(code).toBe(-32602);
    expect(ok.content).toEqual([{ type: 'text', text: 'still fine' }]);
  });

  it('sends WWW-Authenticate with a 401', async () => {
    // Act
    const anonymous = await fetch(`${platform.url}/mcp/${serverId}`, {
      method: 'POST',
      headers: HEADERS,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const badToken = await fetch(`${platform.url}/mcp/${serverId}`, {
      method: 'POST',
      headers: { ...HEADERS, authorization: 'Bearer svc_ut_not-a-real-token' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    // Assess
    for (const answer of [anonymous, badToken]) {
      expect(answer.status).toBe(401);
      expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer /);
    }
  });
});

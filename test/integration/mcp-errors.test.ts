import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_RPC_ERROR } from '../../functions/core/http/json-rpc-error.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const ADDER = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'adder', version: '1.0.0' });
  server.registerTool('add', { description: 'Adds', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
  }));
  return server;
};
`;

const ACCEPT = { accept: 'application/json, text/event-stream' };

interface Refusal {
  readonly status: number;
  readonly body: { jsonrpc: string; id: unknown; error: { code: number; message: string; data: { code: string } } };
}

/**
 * What the official MCP client reports for a refused request: it throws StreamableHTTPError with
 * the HTTP status as `code` and the response body in its message, which must be a JSON-RPC error.
 */
async function refusalSeenByClient(
  url: string,
  token: string | undefined,
  use: (client: Client) => Promise<unknown> = async () => undefined,
): Promise<Refusal> {
  const client = new Client({ name: 'error-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {});
  try {
    await client.connect(transport);
    await use(client);
  } catch (error) {
    if (!(error instanceof StreamableHTTPError)) throw error;
    const body = /Error POSTing to endpoint: (.*)$/s.exec(error.message)?.[1];
    if (body === undefined) throw new Error(`no response body in: ${error.message}`);
    return { status: error.code ?? 0, body: JSON.parse(body) };
  } finally {
    await client.close();
  }
  throw new Error('the client was not refused');
}

describe('the MCP endpoint answers its refusals as JSON-RPC errors with the HTTP status', () => {
  let platform: TestPlatform;
  let owner: { userId: string; token: string };
  let other: { userId: string; token: string };
  let privateId: string;
  let publicId: string;

  async function create(body: Record<string, unknown>): Promise<string> {
    const res = await platform.api('POST', '/mcp-admin/create', { token: owner.token, body: { description: 'for tests', sourceCode: ADDER, ...body } });
    if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
    return res.body.data.serverId;
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await createUser(platform, { alias: 'err-owner', credits: 100 });
    other = await createUser(platform, { alias: 'err-other', credits: 100 });
    privateId = await create({ serverName: 'private-adder' });
    publicId = await create({ serverName: 'public-adder', visibility: 'public' });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('refuses the official client: unknown server or pinned version 404, anonymous 401, bad token 401, not the owner 403', async () => {
    // Act
    const unknown = await refusalSeenByClient(`${platform.url}/mcp/mcp-nosuchserver`, owner.token);
    const unknownSlug = await refusalSeenByClient(`${platform.url}/mcp/s/err-owner/nope`, owner.token);
    const unknownVersion = await refusalSeenByClient(`${platform.url}/mcp/${privateId}?v=7`, owner.token);
    const unknownVersionSlug = await refusalSeenByClient(`${platform.url}/mcp/s/err-owner/private-adder?version=7`, owner.token);
    const anonymous = await refusalSeenByClient(`${platform.url}/mcp/${privateId}`, undefined);
    const badToken = await refusalSeenByClient(`${platform.url}/mcp/${publicId}`, 'svc_ut_not-a-real-token');
    const foreign = await refusalSeenByClient(`${platform.url}/mcp/${privateId}`, other.token);
    // Assess: the client's first request is initialize, whose id the error carries
    for (const refusal of [unknown, unknownSlug, unknownVersion, unknownVersionSlug, anonymous, badToken, foreign]) {
      expect(refusal.body).toEqual({
        jsonrpc: '2.0',
        id: 0,
        error: { code: expect.any(Number), message: expect.any(String), data: { code: expect.any(String) } },
      });
    }
    expect([unknown.status, unknown.body.error.code]).toEqual([404, JSON_RPC_ERROR.notFound]);
    expect(unknown.body.error.data.code).toMatch(/NOT_FOUND$/);
    expect([unknownSlug.status, unknownSlug.body.error.code]).toEqual([404, JSON_RPC_ERROR.notFound]);
    expect([unknownVersion.status, unknownVersion.body.error.code]).toEqual([404, JSON_RPC_ERROR.notFound]);
    expect(unknownVersion.body.error.message).toMatch(/version/i);
    expect([unknownVersionSlug.status, unknownVersionSlug.body.error.code]).toEqual([404, JSON_RPC_ERROR.notFound]);
    expect(anonymous).toMatchObject({
      status: 401,
      body: { error: { code: JSON_RPC_ERROR.authenticationRequired, data: { code: 'AUTHENTICATION_REQUIRED' } } },
    });
    expect(badToken).toMatchObject({ status: 401, body: { error: { code: JSON_RPC_ERROR.authenticationRequired } } });
    expect(foreign).toMatchObject({ status: 403, body: { error: { code: JSON_RPC_ERROR.accessDenied, data: { code: 'ACCESS_DENIED' } } } });
  });

  it('refuses a tools/call without credits with 402, after a free initialize, and names the call it refused', async () => {
    // Prepare
    const broke = await createUser(platform, { alias: 'err-broke' });
    // Act
    const seen = await refusalSeenByClient(`${platform.url}/mcp/${publicId}`, broke.token, (client) =>
      client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }),
    );
    const raw = await platform.api('POST', `/mcp/${publicId}`, {
      token: broke.token,
      headers: ACCEPT,
      body: { jsonrpc: '2.0', id: 'call-7', method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } },
    });
    // Assess
    expect(seen).toMatchObject({
      status: 402,
      body: { jsonrpc: '2.0', error: { code: JSON_RPC_ERROR.insufficientCredits, data: { code: 'INSUFFICIENT_CREDITS' } } },
    });
    expect(seen.body.id).toEqual(expect.any(Number));
    expect(raw.status).toBe(402);
    expect(raw.headers.get('content-type')).toMatch(/^application\/json/);
    expect(raw.body).toEqual({
      jsonrpc: '2.0',
      id: 'call-7',
      error: { code: JSON_RPC_ERROR.insufficientCredits, message: expect.any(String), data: { code: 'INSUFFICIENT_CREDITS' } },
    });
  });

  it('answers a body that is not JSON with a parse error (id null) and runs and bills nothing; a bad version parameter is an invalid request', async () => {
    // Prepare
    const before = (await platform.api('GET', '/user/credits', { token: owner.token })).body.data.credits;
    // Act
    const notJson = await platform.api('POST', `/mcp/${privateId}`, {
      token: owner.token,
      headers: { ...ACCEPT, 'content-type': 'application/json' },
      rawBody: '{"jsonrpc": "2.0", "id": 1, "method": "tools/call"',
    });
    const badVersion = await platform.api('POST', `/mcp/${privateId}?v=latest`, {
      token: owner.token,
      headers: ACCEPT,
      body: { jsonrpc: '2.0', id: 9, method: 'tools/list' },
    });
    const logged = await platform.api('GET', `/logs/${notJson.headers.get('x-request-id')}`, { token: owner.token });
    const after = (await platform.api('GET', '/user/credits', { token: owner.token })).body.data.credits;
    // Assess
    expect(notJson.status).toBe(400);
    expect(notJson.body).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: JSON_RPC_ERROR.parseError, message: expect.any(String), data: { code: 'MALFORMED_JSON' } },
    });
    expect(logged.status).toBe(404);
    expect(after).toBe(before);
    expect(badVersion.status).toBe(400);
    expect(badVersion.body).toMatchObject({ jsonrpc: '2.0', id: 9, error: { code: JSON_RPC_ERROR.invalidRequest, data: { code: 'INVALID_PARAMETERS' } } });
  });

  it('answers the rate limit with 429, Retry-After and a JSON-RPC error carrying the id', async () => {
    // Prepare: a fresh window; 60 anonymous calls that the platform refuses cheaply still count
    platform.clock.alignToWindow(60_000);
    const garbage = await Promise.all(
      Array.from({ length: 60 }, () =>
        platform.api('POST', `/mcp/${publicId}`, { headers: { ...ACCEPT, 'content-type': 'application/json' }, rawBody: 'not json' }),
      ),
    );
    // Act
    const limited = await platform.api('POST', `/mcp/${publicId}`, { headers: ACCEPT, body: { jsonrpc: '2.0', id: 61, method: 'tools/list' } });
    // Assess
    expect(garbage.every((r) => r.status === 400 && r.body.error.code === JSON_RPC_ERROR.parseError)).toBe(true);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(limited.body).toMatchObject({ jsonrpc: '2.0', id: 61, error: { code: JSON_RPC_ERROR.rateLimited, data: { code: 'RATE_LIMITED' } } });
  });

  it('keeps the admin routes in their envelope', async () => {
    const res = await platform.api('GET', '/mcp-admin/mcp-nosuchserver', { token: owner.token });
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: expect.stringMatching(/NOT_FOUND$/), requestId: expect.any(String) });
  });
});

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { callOf, callsOn, overlapped, recordStoreCalls } from '../support/store-calls.ts';
import { calculator } from '../support/mcp-calculator.ts';

/** ES module form; reports which of the owner's keys it can see (lengths only, never values). */
const KEY_READER = `import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

export function createMcpServer() {
  const server = new McpServer({ name: 'keys', version: '1.0.0' });
  server.registerTool('env', { description: 'Which keys and request headers it sees' }, async (extra) => ({
    content: [{ type: 'text', text: JSON.stringify({
      weather: process.env.WEATHER_KEY?.length ?? null,
      maps: process.env.MAPS_API_KEY?.length ?? null,
      headers: Object.keys(extra?.requestInfo?.headers ?? {}).sort(),
    }) }],
  }));
  return server;
}
`;

const ACCEPT = { accept: 'application/json, text/event-stream' };

interface Caller {
  userId: string;
  token: string;
}

/** Connects the official MCP client (Streamable HTTP) to `url`, runs `use`, and closes it. */
async function withClient<T>(url: string, token: string | undefined, use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'platform-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {});
  await client.connect(transport);
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

function textOf(result: unknown): string | undefined {
  return (result as { content?: { type: string; text?: string }[] }).content?.[0]?.text;
}

describe('the MCP endpoint: protocol, access, billing, keys and lineage', () => {
  let platform: TestPlatform;
  let owner: Caller;
  let other: Caller;
  let privateId: string;
  let publicId: string;

  async function create(token: string, body: Record<string, unknown>): Promise<string> {
    const res = await platform.api('POST', '/mcp-admin/create', { token, body: { description: 'for tests', ...body } });
    if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
    return res.body.data.serverId;
  }

  async function rpc(path: string, message: unknown, options: { token?: string; headers?: Record<string, string> } = {}) {
    return platform.api('POST', path, { ...(options.token ? { token: options.token } : {}), headers: { ...ACCEPT, ...options.headers }, body: message });
  }

  async function credits(token: string): Promise<number> {
    return (await platform.api('GET', '/user/credits', { token })).body.data.credits;
  }

  async function usageRecord(token: string, requestId: string) {
    const res = await platform.api('GET', `/logs/${requestId}`, { token });
    return { status: res.status, record: res.body.data };
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await createUser(platform, { alias: 'tool-smith', credits: 100 });
    other = await createUser(platform, { alias: 'tool-user', credits: 100 });
    privateId = await create(owner.token, { serverName: 'calc', sourceCode: calculator('c1') });
    await platform.api('PUT', '/mcp-admin/update', { token: owner.token, body: { serverId: privateId, sourceCode: calculator('c2') } });
    publicId = await create(owner.token, { serverName: 'open-calc', sourceCode: calculator('open'), visibility: 'public' });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('serves the official MCP client by id, by slug and pinned: initialize, tools/list, tools/call', async () => {
    // Act
    const byId = await withClient(`${platform.url}/mcp/${privateId}`, owner.token, async (client) => ({
      server: client.getServerVersion(),
      tools: (await client.listTools()).tools.map((t) => t.name).sort(),
      sum: textOf(await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } })),
      which: textOf(await client.callTool({ name: 'which', arguments: {} })),
    }));
    const bySlug = await withClient(`${platform.url}/mcp/s/tool-smith/calc`, owner.token, async (client) =>
      textOf(await client.callTool({ name: 'which', arguments: {} })),
    );
    const pinned = await withClient(`${platform.url}/mcp/${privateId}?v=1`, owner.token, async (client) =>
      textOf(await client.callTool({ name: 'which', arguments: {} })),
    );
    const pinnedSlug = await withClient(`${platform.url}/mcp/s/tool-smith/calc?version=1`, owner.token, async (client) =>
      textOf(await client.callTool({ name: 'which', arguments: {} })),
    );
    const anonymousPublic = await withClient(`${platform.url}/mcp/${publicId}`, undefined, async (client) =>
      textOf(await client.callTool({ name: 'add', arguments: { a: 1, b: 1 } })),
    );
    // Assess
    expect(byId).toEqual({ server: { name: 'calculator', version: '1.0.0' }, tools: ['add', 'which'], sum: '42', which: 'c2' });
    expect(bySlug).toBe('c2');
    expect(pinned).toBe('c1');
    expect(pinnedSlug).toBe('c1');
    expect(anonymousPublic).toBe('2');
  });

  it('answers raw JSON-RPC: tools/list and tools/call without initialize, errors as JSON-RPC errors', async () => {
    // Act
    const list = await rpc(`/mcp/${privateId}`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { token: owner.token });
    const call = await rpc(
      `/mcp/${privateId}`,
      { jsonrpc: '2.0', id: 'two', method: 'tools/call', params: { name: 'add', arguments: { a: 3, b: 4 } } },
      { token: owner.token },
    );
    const badArgs = await rpc(
      `/mcp/${privateId}`,
      { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'add', arguments: { a: 'three' } } },
      { token: owner.token },
    );
    const unknownMethod = await rpc(`/mcp/${privateId}`, { jsonrpc: '2.0', id: 4, method: 'no/such/method' }, { token: owner.token });
    const withoutAccept = await platform.api('POST', `/mcp/${privateId}`, { token: owner.token, body: { jsonrpc: '2.0', id: 5, method: 'tools/list' } });
    // Assess
    expect(list.status).toBe(200);
    expect(list.headers.get('content-type')).toMatch(/application\/json/);
    expect(list.headers.get('x-request-id')).toEqual(expect.any(String));
    expect(list.body).toMatchObject({ jsonrpc: '2.0', id: 1 });
    expect(list.body.result.tools.map((t: { name: string }) => t.name).sort()).toEqual(['add', 'which']);
    expect(list.body.result.tools.find((t: { name: string }) => t.name === 'add').inputSchema.properties).toHaveProperty('a');
    expect(call.body).toMatchObject({ jsonrpc: '2.0', id: 'two', result: { content: [{ type: 'text', text: '7' }] } });
    expect(badArgs.body.result?.isError ?? badArgs.body.error).toBeTruthy();
    expect(unknownMethod.body.error.code).toBe(-32601);
    expect(withoutAccept.status).toBe(406);
  });

  it('answers GET with 405 (no server-initiated stream), after the same access and version checks', async () => {
    // Act
    const get = await platform.api('GET', `/mcp/${publicId}`, { headers: { accept: 'text/event-stream' } });
    const getPrivate = await platform.api('GET', `/mcp/${privateId}`);
    const getMissingVersion = await platform.api('GET', `/mcp/${publicId}?v=9`);
    // Assess
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(get.body.error.code).toBe(-32000);
    expect(getPrivate.status).toBe(401);
    expect(getMissingVersion.status).toBe(404);
  });

  it('lets only the owner call a private server, answers anyone on a public one, and 404s unknown servers and versions', async () => {
    // Prepare
    const list = { jsonrpc: '2.0', id: 1, method: 'tools/list' };
    const role = (await platform.api('POST', '/role-token/create', { token: owner.token, body: { name: 'mcp-caller' } })).body.data.token as string;
    // Act
    const anonymous = await rpc(`/mcp/${privateId}`, list);
    const foreign = await rpc(`/mcp/${privateId}`, list, { token: other.token });
    const badToken = await rpc(`/mcp/${publicId}`, list, { token: 'svc_ut_not-a-real-token' });
    const viaRole = await rpc(`/mcp/${privateId}`, list, { token: role });
    const viaSecretKey = await rpc(`/mcp/${privateId}`, list, { headers: { 'x-svc-userid': owner.userId, 'x-svc-secretkey': 'wrong' } });
    const anonymousPublic = await rpc(`/mcp/${publicId}`, list);
    const foreignPublic = await rpc(`/mcp/s/tool-smith/open-calc`, list, { token: other.token });
    const unknown = await rpc('/mcp/mcp-nosuchserver', list, { token: owner.token });
    const unknownSlug = await rpc('/mcp/s/tool-smith/nope', list, { token: owner.token });
    const missingVersion = await rpc(`/mcp/${privateId}?version=3`, list, { token: owner.token });
    const badVersion = await rpc(`/mcp/${privateId}?v=latest`, list, { token: owner.token });
    // Assess
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.data.code).toBe('AUTHENTICATION_REQUIRED');
    expect(foreign.status).toBe(403);
    expect(badToken.status).toBe(401);
    expect(viaRole.status).toBe(200);
    expect(viaSecretKey.status).toBe(401);
    expect(anonymousPublic.status).toBe(200);
    expect(foreignPublic.status).toBe(200);
    expect(unknown.status).toBe(404);
    expect(unknownSlug.status).toBe(404);
    expect(missingVersion.status).toBe(404);
    expect(badVersion.status).toBe(400);
  });

  it('charges one credit per tools/call to the caller (the owner for anonymous calls), nothing for other methods, 402 when short', async () => {
    // Prepare
    const poor = await createUser(platform, { alias: 'poor-caller', credits: 1 });
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } });
    const [ownerBefore, otherBefore] = [await credits(owner.token), await credits(other.token)];
    // Act
    const listed = await rpc(`/mcp/${publicId}`, { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { token: other.token });
    const paidByOther = await rpc(`/mcp/${publicId}`, call(2), { token: other.token });
    const otherAfterCall = await credits(other.token);
    const paidByOwner = await rpc(`/mcp/${publicId}`, call(3));
    const ownerAfterAnonymous = await credits(owner.token);
    const first = await rpc(`/mcp/${publicId}`, call(4), { token: poor.token });
    const refused = await rpc(`/mcp/${publicId}`, call(5), { token: poor.token });
    const otherRecord = await usageRecord(other.token, paidByOther.headers.get('x-request-id')!);
    const anonymousRecord = await usageRecord(owner.token, paidByOwner.headers.get('x-request-id')!);
    const listRecord = await usageRecord(other.token, listed.headers.get('x-request-id')!);
    // Assess
    expect(listed.status).toBe(200);
    expect(paidByOther.body.result.content[0].text).toBe('3');
    expect(otherAfterCall).toBe(otherBefore - 1);
    expect(paidByOwner.status).toBe(200);
    expect(ownerAfterAnonymous).toBe(ownerBefore - 1);
    expect(first.status).toBe(200);
    expect(refused.status).toBe(402);
    expect(refused.body.error.data.code).toBe('INSUFFICIENT_CREDITS');
    expect(otherRecord.record).toMatchObject({ resourceType: 'mcp', resourceId: publicId, requestType: 'MCP_TOOLS_CALL', status: 'success', creditsUsed: 1 });
    expect(anonymousRecord.record).toMatchObject({ resourceId: publicId, requestType: 'MCP_TOOLS_CALL', creditsUsed: 1 });
    expect(listRecord.record).toMatchObject({ requestType: 'MCP_TOOLS_LIST', creditsUsed: 0 });
  });

  it('limits anonymous callers, whose calls the owner pays for, to 60 a minute per address; signed-in callers keep 600', async () => {
    // Prepare: a fresh window, so earlier anonymous calls in this file do not count
    platform.clock.alignToWindow(60_000);
    const list = (id: number) => ({ jsonrpc: '2.0', id, method: 'tools/list' });
    // Act
    const allowed = await Promise.all(Array.from({ length: 60 }, (_, i) => rpc(`/mcp/${publicId}`, list(i))));
    const limited = await rpc(`/mcp/${publicId}`, list(61));
    const ownerBefore = await credits(owner.token);
    const { db, config } = platform.running.ports;
    const limitedCall = await recordStoreCalls(db, config.TABLE_PREFIX, () =>
      rpc(`/mcp/${publicId}`, { jsonrpc: '2.0', id: 63, method: 'tools/call', params: { name: 'add', arguments: { a: 1, b: 2 } } }),
    );
    const ownerAfter = await credits(owner.token);
    // Parsed while the limiter answers, but a limited caller hears 429 before anything about the request.
    const limitedAndInvalid = await rpc(`/mcp/${publicId}?v=not-a-number`, list(64));
    const limitedRecord = await usageRecord(owner.token, limitedCall.result.headers.get('x-request-id')!);
    const signedIn = await rpc(`/mcp/${publicId}`, list(62), { token: other.token });
    // Assess
    expect(allowed.every((r) => r.status === 200)).toBe(true);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(signedIn.status).toBe(200);
    // A limited tools/call: the server record was read while the limiter answered, and dropped:
    // nothing billed (no debit, no ledger line), nothing run (no usage record).
    expect(limitedCall.result.status).toBe(429);
    expect(limitedAndInvalid.status).toBe(429);
    expect(ownerAfter).toBe(ownerBefore);
    expect(limitedRecord.status).toBe(404);
    expect(callsOn(limitedCall.calls, 'rate-limits', 'mcp-servers', 'users', 'credit-ledger', 'keys', 'usage-logs')).toEqual([
      'rate-limits.UpdateItem',
      'mcp-servers.GetItem',
    ]);
    expect(overlapped(callOf(limitedCall.calls, 'rate-limits.UpdateItem'), callOf(limitedCall.calls, 'mcp-servers.GetItem'))).toBe(true);
  });

  it("gives the server the owner's keys as SERVICENAME_KEY, only the attached ones for a role token, never the caller's credentials", async () => {
    // Prepare
    await platform.api('POST', '/keys/store', { token: owner.token, body: { serviceName: 'weather', apiKey: 'w'.repeat(12) } });
    await platform.api('POST', '/keys/store', { token: owner.token, body: { serviceName: 'maps-api', apiKey: 'm'.repeat(7) } });
    const serverId = await create(owner.token, { serverName: 'key-reader', sourceCode: KEY_READER, visibility: 'public' });
    const role = (await platform.api('POST', '/role-token/create', { token: owner.token, body: { name: 'weather-only', keys: ['weather'] } })).body.data
      .token as string;
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'env', arguments: {} } };
    // Act
    const asOwner = await rpc(`/mcp/${serverId}`, call, { token: owner.token });
    const asRole = await rpc(`/mcp/${serverId}`, call, { token: role });
    const { db, config } = platform.running.ports;
    const { result: asOther, calls } = await recordStoreCalls(db, config.TABLE_PREFIX, () => rpc(`/mcp/${serverId}`, call, { token: other.token }));
    const record = await usageRecord(owner.token, asOwner.headers.get('x-request-id')!);
    // Assess
    const seen = (res: { body: any }) => JSON.parse(res.body.result.content[0].text);
    expect(seen(asOwner)).toMatchObject({ weather: 12, maps: 7 });
    expect(seen(asRole)).toMatchObject({ weather: 12, maps: null });
    expect(seen(asOther)).toMatchObject({ weather: 12, maps: 7 });
    expect(seen(asOwner).headers).toContain('content-type');
    expect(seen(asOwner).headers).not.toContain('authorization');
    expect(JSON.stringify(record.record)).not.toContain(owner.token);
    // The endpoint's own reads and writes: each record once, the keys in one read (their listing holds the sealed values).
    expect(callsOn(calls, 'mcp-servers', 'mcp-versions', 'keys', 'credit-ledger', 'usage-logs').sort()).toEqual([
      'credit-ledger.PutItem',
      'keys.Query',
      'mcp-servers.GetItem',
      'usage-logs.PutItem',
    ]);
  });

  it("writes one usage record per request with the caller's lineage, and nulls for direct calls", async () => {
    // Prepare: what an agent run sends when it calls a platform MCP server.
    const lineage = 'root=root-req-1;parent=chat-req-1;conversation=conv-1;agent=agent-1';
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'which', arguments: {} } };
    // Act
    const fromAgent = await rpc(`/mcp/${privateId}`, call, { token: owner.token, headers: { 'x-svc-lineage': lineage } });
    const direct = await rpc(`/mcp/${privateId}`, call, { token: owner.token });
    const failing = await rpc(`/mcp/${privateId}`, { jsonrpc: '2.0', id: 2, method: 'no/such/method' }, { token: owner.token });
    const fromAgentRecord = await usageRecord(owner.token, fromAgent.headers.get('x-request-id')!);
    const directRequestId = direct.headers.get('x-request-id')!;
    const directRecord = await usageRecord(owner.token, directRequestId);
    const failingRecord = await usageRecord(owner.token, failing.headers.get('x-request-id')!);
    const trace = await platform.api('GET', '/logs/trace/root-req-1', { token: owner.token });
    // Assess
    expect(fromAgentRecord.record).toMatchObject({
      resourceType: 'mcp',
      resourceId: privateId,
      rootRequestId: 'root-req-1',
      parentRequestId: 'chat-req-1',
      parentConversationId: 'conv-1',
      parentAgentId: 'agent-1',
      status: 'success',
    });
    expect(fromAgentRecord.record.request.body).toMatchObject({ version: 2, pinned: false });
    expect(fromAgentRecord.record.response.body).toMatchObject({ status: 200, body: { result: { content: [{ text: 'c2' }] } } });
    expect(directRecord.record).toMatchObject({ rootRequestId: directRequestId, parentRequestId: null, parentConversationId: null, parentAgentId: null });
    expect(failingRecord.record).toMatchObject({ status: 'error', requestType: 'MCP_NO_SUCH_METHOD', error: { code: 'JSONRPC_-32601' } });
    expect(trace.status).toBe(200);
    expect(JSON.stringify(trace.body.data)).toContain(fromAgent.headers.get('x-request-id')!);
  });
});

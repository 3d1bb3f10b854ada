/**
 * The platform's own MCP server, `{mcp_url}/mcp/platform` (issue 29), driven by the official MCP
 * SDK client over Streamable HTTP against a real local platform: knowledge search, actions (run
 * with the real Python runtime), skills and hosted MCP servers (run by the real MCP host), each
 * acting for the caller's credential and billed and recorded as the same call made directly.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actionCost } from '../../functions/actions/execution.rules.ts';
import { TOOL_CALL_CREDITS } from '../../functions/mcp/mcp.schema.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const ECHO = `def handler(event, context):
    return {"statusCode": 200, "body": {"params": {k: v for k, v in event.items() if k != "keys"}}}
`;

const CALCULATOR = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'calculator', version: '1.0.0' });
  server.registerTool('add', { description: 'Adds two numbers', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({
    content: [{ type: 'text', text: String(a + b) }],
  }));
  return server;
};
`;

function skillMd(name: string, body: string): string {
  return `---\nname: ${name}\ndescription: "The ${name} skill"\n---\n${body}`;
}

interface Caller {
  userId: string;
  token: string;
}

interface ToolResult {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, any>;
  isError?: boolean;
}

/** Connects the official MCP client to `url` with `token`, runs `use`, and closes it. */
async function withClient<T>(url: string, token: string, use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: 'platform-mcp-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

describe('the platform MCP server at {mcp_url}/mcp/platform', () => {
  let platform: TestPlatform;
  let owner: Caller;
  let other: Caller;
  let actionId: string;
  let othersActionId: string;
  let serverId: string;
  let url: string;

  const api = (method: string, path: string, token: string, body?: unknown) => platform.api(method, path, { token, ...(body !== undefined ? { body } : {}) });
  const credits = async (caller: Caller): Promise<number> => (await api('GET', '/user/credits', caller.token)).body.data.credits;
  const record = async (caller: Caller, requestId: string) => (await api('GET', `/logs/${requestId}`, caller.token)).body.data;
  const call = (caller: Caller, name: string, args: Record<string, unknown>) =>
    withClient(url, caller.token, async (client) => (await client.callTool({ name, arguments: args })) as ToolResult);

  async function created(res: { status: number; text: string; body: any }, pick: (body: any) => string): Promise<string> {
    if (res.status !== 200 && res.status !== 201) throw new Error(`create: ${res.status} ${res.text}`);
    return pick(res.body);
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
    url = `${platform.url}/mcp/platform`;
    owner = await createUser(platform, { alias: 'tools-owner', credits: 1000 });
    other = await createUser(platform, { alias: 'tools-other', credits: 1000 });
    const action = { description: 'echoes', runtime: 'python3.12', sourceCode: ECHO, category: 'testing' };
    actionId = await created(await api('POST', '/action/create', owner.token, { ...action, actionName: 'Echo' }), (b) => b.data.actionId);
    othersActionId = await created(await api('POST', '/action/create', other.token, { ...action, actionName: 'Hidden Echo' }), (b) => b.data.actionId);
    serverId = await created(
      await api('POST', '/mcp-admin/create', owner.token, { serverName: 'calc', description: 'a calculator', sourceCode: CALCULATOR }),
      (b) => b.data.serverId,
    );
    await created(
      await api('POST', '/mcp-admin/create', other.token, { serverName: 'secret-calc', description: 'private', sourceCode: CALCULATOR }),
      (b) => b.data.serverId,
    );
    await created(
      await api('POST', '/skills/create', owner.token, { skillMd: skillMd('triage', '# Triage\n\nSort by urgency first.\n'), visibility: 'private' }),
      (b) => b.data.skill.skillId,
    );
    await created(
      await api('POST', '/skills/create', other.token, { skillMd: skillMd('hidden-plan', '# Hidden\n\nNot for others.\n'), visibility: 'private' }),
      (b) => b.data.skill.skillId,
    );
    await created(
      await api('POST', '/knowledge/upload', owner.token, {
        fileName: 'handbook.md',
        folder: 'policies',
        content: 'Refunds are paid within fourteen days by the capybara desk.',
      }),
      (b) => b.data.key,
    );
    await created(
      await api('POST', '/knowledge/upload', other.token, { fileName: 'diary.md', content: 'The zanzibar expedition leaves at dawn.' }),
      (b) => b.data.key,
    );
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it("lists the built-in tools and the caller's hosted servers' tools, and no one else's", async () => {
    // Act
    const listed = await withClient(url, owner.token, async (client) => ({ server: client.getServerVersion(), tools: (await client.listTools()).tools }));
    const othersTools = await withClient(url, other.token, async (client) => (await client.listTools()).tools.map((t) => t.name));
    // Assess
    expect(listed.server).toMatchObject({ name: 'platform' });
    expect(listed.tools.map((t) => t.name)).toEqual(['search_knowledge', 'list_actions', 'run_action', 'list_skills', 'get_skill', 'calc__add']);
    expect(listed.tools.find((t) => t.name === 'calc__add')).toMatchObject({
      description: '[calc] Adds two numbers',
      inputSchema: { type: 'object', required: ['a', 'b'] },
    });
    expect(listed.tools.find((t) => t.name === 'search_knowledge')?.inputSchema).toMatchObject({ type: 'object', required: ['query'] });
    expect(othersTools).toContain('secret-calc__add');
    expect(othersTools).not.toContain('calc__add');
  });

  it("searches the caller's knowledge files only, with file, chunk and score, like POST /knowledge/search", async () => {
    // Act
    const found = await call(owner, 'search_knowledge', { query: 'capybara refunds' });
    const inFolder = await call(owner, 'search_knowledge', { query: 'capybara', folder: 'elsewhere' });
    const direct = await api('POST', '/knowledge/search', owner.token, { query: 'capybara refunds' });
    const othersWords = await call(owner, 'search_knowledge', { query: 'zanzibar expedition' });
    const empty = await call(owner, 'search_knowledge', { query: '' });
    // Assess
    expect(found.isError).toBeUndefined();
    expect(found.structuredContent?.hits).toEqual([
      { file: 'handbook.md', key: direct.body.data.results[0].key, chunk: expect.stringContaining('capybara desk'), score: expect.any(Number) },
    ]);
    expect(found.structuredContent?.hits[0].score).toBe(direct.body.data.results[0].score);
    expect(JSON.parse(found.content[0]!.text!)).toEqual(found.structuredContent);
    expect(inFolder.structuredContent?.hits).toEqual([]);
    expect(othersWords.structuredContent?.hits).toEqual([]);
    expect(empty.isError).toBe(true);
    expect(empty.content[0]!.text).toMatch(/^INVALID_PARAMETERS: .*query/);
  });

  it('lists and runs actions, billed and recorded exactly as a direct POST /action/{id}', async () => {
    // Prepare
    const before = await credits(owner);
    // Act
    const listed = await call(owner, 'list_actions', {});
    const viaTool = await call(owner, 'run_action', { actionId, parameters: { city: 'Oslo', days: 2 } });
    const afterTool = await credits(owner);
    const direct = await api('POST', `/action/${actionId}`, owner.token, { city: 'Oslo', days: 2 });
    const afterDirect = await credits(owner);
    const toolRecord = await record(owner, viaTool.structuredContent?.requestId);
    const directRecord = await record(owner, direct.body.meta.requestId);
    const parentRecord = await record(owner, toolRecord.parentRequestId);
    // Assess
    expect(listed.structuredContent?.actions.map((a: { actionId: string }) => a.actionId)).toEqual([actionId]);
    expect(viaTool.structuredContent).toMatchObject({ statusCode: 200, body: direct.body.data.body, creditsUsed: expect.any(Number) });
    expect(before - afterTool).toBeCloseTo(viaTool.structuredContent?.creditsUsed, 4);
    expect(afterTool - afterDirect).toBeCloseTo(direct.body.meta.creditsUsed, 4);
    for (const [run, charged] of [
      [toolRecord, viaTool.structuredContent?.creditsUsed],
      [directRecord, direct.body.meta.creditsUsed],
    ] as const) {
      expect(run.creditsUsed).toBe(charged);
      expect(run.creditsUsed).toBe(actionCost(128, run.metrics.durationMs));
    }
    const shape = (r: any) => ({
      userId: r.userId,
      resourceId: r.resourceId,
      resourceType: r.resourceType,
      requestType: r.requestType,
      status: r.status,
      memoryMb: r.metrics.memoryMb,
    });
    expect(shape(toolRecord)).toEqual(shape(directRecord));
    expect(shape(toolRecord)).toEqual({
      userId: owner.userId,
      resourceId: actionId,
      resourceType: 'action',
      requestType: 'ACTION_RUN',
      status: 'success',
      memoryMb: 128,
    });
    expect(parentRecord).toMatchObject({ resourceType: 'mcp', resourceId: 'platform', requestType: 'MCP_TOOLS_CALL', creditsUsed: 0, status: 'success' });
    expect(toolRecord.rootRequestId).toBe(parentRecord.rootRequestId);
  });

  it("hides other users' private actions, skills and servers", async () => {
    // Prepare
    const before = await credits(owner);
    // Act
    const run = await call(owner, 'run_action', { actionId: othersActionId, parameters: {} });
    const skill = await call(owner, 'get_skill', { owner: 'tools-other', name: 'hidden-plan' });
    const skills = await call(owner, 'list_skills', { scope: 'public' });
    const hosted = await withClient(url, owner.token, (client) => client.callTool({ name: 'secret-calc__add', arguments: { a: 1, b: 2 } })).catch(
      (error: Error) => error,
    );
    // Assess
    expect(run).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringMatching(/^ACCESS_DENIED: .*private/) }] });
    expect(skill).toMatchObject({ isError: true, content: [{ type: 'text', text: expect.stringMatching(/^(SKILL_)?NOT_FOUND/) }] });
    expect(skills.structuredContent?.skills).toEqual([]);
    expect(hosted).toBeInstanceOf(Error);
    expect(String(hosted)).toMatch(/-32602.*secret-calc__add/);
    expect(await credits(owner)).toBe(before);
  });

  it('reads SKILL.md by owner and name, the owner defaulting to the caller', async () => {
    // Act
    const listed = await call(owner, 'list_skills', {});
    const named = await call(owner, 'get_skill', { owner: 'tools-owner', name: 'triage' });
    const own = await call(owner, 'get_skill', { name: 'triage' });
    // Assess
    expect(listed.structuredContent?.skills).toEqual([
      { owner: 'tools-owner', name: 'triage', slug: 'tools-owner/triage', description: 'The triage skill', visibility: 'private' },
    ]);
    expect(named.content[0]!.text).toBe(skillMd('triage', '# Triage\n\nSort by urgency first.\n'));
    expect(own.content).toEqual(named.content);
  });

  it("calls a hosted server's tool through its endpoint, billed and recorded as a direct tools/call", async () => {
    // Prepare
    const before = await credits(owner);
    // Act
    const result = await call(owner, 'calc__add', { a: 2, b: 40 });
    const after = await credits(owner);
    const logs = await api('GET', `/logs?resourceId=${serverId}`, owner.token);
    // Assess
    expect(result).toEqual({ content: [{ type: 'text', text: '42' }] });
    expect(before - after).toBe(TOOL_CALL_CREDITS);
    const calls = logs.body.data.logs.filter((l: any) => l.requestType === 'MCP_TOOLS_CALL');
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ resourceType: 'mcp', status: 'success', creditsUsed: TOOL_CALL_CREDITS });
    expect((await record(owner, calls[0].parentRequestId)).resourceId).toBe('platform');
  });

  it('refuses callers without a credential (401) and answers GET with 405', async () => {
    // Act
    const anonymous = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    const sdkClient = await new Client({ name: 'anonymous', version: '1.0.0' })
      .connect(new StreamableHTTPClientTransport(new URL(url)))
      .catch((error: Error) => error);
    const stream = await fetch(url, { headers: { accept: 'text/event-stream', authorization: `Bearer ${owner.token}` } });
    // Assess
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({ jsonrpc: '2.0', error: { data: { code: 'AUTHENTICATION_REQUIRED' } } });
    expect(sdkClient).toBeInstanceOf(Error);
    expect(stream.status).toBe(405);
  });
});

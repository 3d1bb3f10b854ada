/**
 * `GET /search` (SPEC 4.7) over HTTP against the local platform: public agents, MCP servers and
 * their live tools are found by their words as soon as the request that changed them answered, and
 * a private or deleted one never is. Every test uses words of its own, since the catalogue is shared.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const ECHO = readFileSync(new URL('../../python-runtime/tests/fixtures/echo_agent.py', import.meta.url), 'utf8');

/** A CommonJS MCP server with a tool per name, each described by `about {name}`. */
function serverWithTools(...names: string[]): string {
  const tools = names
    .map((name) => `server.registerTool(${JSON.stringify(name)}, { description: 'about ${name}' }, async () => ({ content: [{ type: 'text', text: 'ok' }] }));`)
    .join('\n  ');
  return `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');

exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'search-test', version: '1.0.0' });
  ${tools}
  return server;
};
`;
}

interface SearchResult {
  resourceId: string;
  resourceType: string;
  name: string;
  description: string;
  slug: string;
  score: number;
  owner: string;
  visibility: string;
}

describe('resource search (GET /search)', () => {
  let platform: TestPlatform;
  let owner: { userId: string; token: string };
  let searcher: { userId: string; token: string };

  /** Searches as a signed-in user (a higher rate limit than anonymous callers). */
  async function search(q: string, extra = '') {
    const res = await platform.api('GET', `/search?q=${encodeURIComponent(q)}${extra}`, { token: searcher.token });
    if (res.status !== 200) throw new Error(`search ${q}: ${res.status} ${res.text}`);
    return res.body.data as { results: SearchResult[]; query: string; type: string; count: number; mode: string };
  }
  const found = async (q: string, extra = '') => (await search(q, extra)).results.map((r) => [r.resourceType, r.name]);

  async function createAgent(agentName: string, description: string, visibility: 'public' | 'private') {
    const res = await platform.api('POST', '/agent/create', { token: owner.token, body: { agentName, description, sourceCode: ECHO, visibility } });
    if (res.status !== 200) throw new Error(`create agent ${agentName}: ${res.status} ${res.text}`);
    return res.body.data.agentId as string;
  }
  async function updateAgent(body: Record<string, unknown>) {
    const res = await platform.api('PUT', '/agent/update', { token: owner.token, body });
    if (res.status !== 200) throw new Error(`update agent: ${res.status} ${res.text}`);
  }
  async function createServer(serverName: string, description: string, sourceCode: string, visibility: 'public' | 'private' = 'public') {
    const res = await platform.api('POST', '/mcp-admin/create', { token: owner.token, body: { serverName, description, sourceCode, visibility } });
    if (res.status !== 200) throw new Error(`create server ${serverName}: ${res.status} ${res.text}`);
    return res.body.data.serverId as string;
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await createUser(platform, { alias: 'finder-owner', credits: 1000 });
    searcher = await createUser(platform, { alias: 'finder', credits: 10 });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('answers anonymous callers with public agents, in the envelope, and never with private ones', async () => {
    // Prepare
    const agentId = await createAgent('heron-watcher', 'Counts herons along the river', 'public');
    await createAgent('heron-secret', 'Private herons nobody else may find', 'private');
    // Act
    const res = await platform.api('GET', '/search?q=herons');
    // Assess
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ requestId: expect.any(String), data: { query: 'herons', type: 'all', count: 1, mode: 'lexical' } });
    expect(res.body.data.results).toEqual([
      {
        resourceId: agentId,
        resourceType: 'agent',
        name: 'heron-watcher',
        description: 'Counts herons along the river',
        slug: 'finder-owner/heron-watcher',
        owner: 'finder-owner',
        visibility: 'public',
        score: expect.any(Number),
      },
    ]);
  });

  it('follows visibility, renames, deletion and restoring of an agent in the request that changes it', async () => {
    // Prepare
    const agentId = await createAgent('otter-guide', 'Guides you to otters', 'private');
    const whilePrivate = await found('otters');
    // Act and assess, step by step
    await updateAgent({ agentId, visibility: 'public' });
    expect(await found('otters')).toEqual([['agent', 'otter-guide']]);
    await updateAgent({ agentId, agentName: 'beaver-guide', description: 'Guides you to beavers' });
    expect(await found('otters')).toEqual([]);
    expect(await found('beaver')).toEqual([['agent', 'beaver-guide']]);
    const deleted = await platform.api('DELETE', '/agent/delete', { token: owner.token, body: { agentId } });
    expect(deleted.status).toBe(200);
    expect(await found('beavers')).toEqual([]);
    await updateAgent({ agentId, status: 'active' });
    expect(await found('beavers')).toEqual([['agent', 'beaver-guide']]);
    await updateAgent({ agentId, visibility: 'private' });
    expect(await found('beavers')).toEqual([]);
    expect(whilePrivate).toEqual([]);
  });

  it('finds a public MCP server and each tool of its live version, filtered by type', async () => {
    // Prepare
    const serverId = await createServer('tide-tables', 'Tide tables for harbours', serverWithTools('tide_height', 'harbour_list'));
    await createServer('tide-private', 'Private tide tables', serverWithTools('tide_secret'), 'private');
    await createAgent('tide-agent', 'Answers questions about the tide', 'public');
    // Act
    const all = await search('tide');
    const servers = await found('tide', '&type=mcp');
    const tools = await search('tide', '&type=mcp-tool');
    const agents = await found('tide', '&type=agent');
    const skills = await found('tide', '&type=skill');
    // Assess
    expect(all.results.map((r) => r.resourceType).sort()).toEqual(['agent', 'mcp', 'mcp-tool']);
    expect(servers).toEqual([['mcp', 'tide-tables']]);
    expect(tools).toMatchObject({ type: 'mcp-tool', count: 1 });
    expect(tools.results).toEqual([
      expect.objectContaining({ resourceId: serverId, resourceType: 'mcp-tool', name: 'tide_height', slug: 'finder-owner/tide-tables', visibility: 'public' }),
    ]);
    expect(agents).toEqual([['agent', 'tide-agent']]);
    expect(skills).toEqual([]);
    expect(all.results.some((r) => r.name.includes('secret') || r.name === 'tide-private')).toBe(false);
  });

  it('shows the tools of the live version after an update and a rollback, and nothing after delete', async () => {
    // Prepare
    const serverId = await createServer('lighthouse', 'Lighthouse keeper', serverWithTools('lamp_status'));
    // Act and assess, step by step
    const updated = await platform.api('PUT', '/mcp-admin/update', { token: owner.token, body: { serverId, sourceCode: serverWithTools('foghorn_status') } });
    expect(updated.status).toBe(200);
    expect(await found('lamp', '&type=mcp-tool')).toEqual([]);
    expect(await found('foghorn', '&type=mcp-tool')).toEqual([['mcp-tool', 'foghorn_status']]);
    const rolledBack = await platform.api('POST', `/mcp-admin/${serverId}/rollback`, { token: owner.token, body: { targetVersion: 1 } });
    expect(rolledBack.status).toBe(200);
    expect(await found('foghorn', '&type=mcp-tool')).toEqual([]);
    expect(await found('lamp', '&type=mcp-tool')).toEqual([['mcp-tool', 'lamp_status']]);
    const hidden = await platform.api('PUT', '/mcp-admin/update', { token: owner.token, body: { serverId, visibility: 'private' } });
    expect(hidden.status).toBe(200);
    expect(await found('lighthouse lamp')).toEqual([]);
    await platform.api('PUT', '/mcp-admin/update', { token: owner.token, body: { serverId, visibility: 'public' } });
    expect(await found('lighthouse', '&type=mcp')).toEqual([['mcp', 'lighthouse']]);
    const deleted = await platform.api('DELETE', '/mcp-admin/delete', { token: owner.token, body: { serverId } });
    expect(deleted.status).toBe(200);
    expect(await found('lighthouse lamp')).toEqual([]);
  });

  it("shows each result's owner by the alias they have now, after an alias change that re-indexed nothing", async () => {
    // Prepare: an owner of their own, so the shared owner's alias stays
    const mover = await createUser(platform, { alias: 'before-move', credits: 1000 });
    const res = await platform.api('POST', '/agent/create', {
      token: mover.token,
      body: { agentName: 'tide-table', description: 'Tide tables for harbours', sourceCode: ECHO, visibility: 'public' },
    });
    expect(res.status).toBe(200);

    // Act
    const renamed = await platform.api('POST', '/user/alias', { token: mover.token, body: { alias: 'after-move' } });
    const results = (await search('harbours tide')).results.filter((r) => r.name === 'tide-table');

    // Assess
    expect(renamed.status).toBe(200);
    expect(results).toEqual([expect.objectContaining({ owner: 'after-move', slug: 'after-move/tide-table' })]);
  });

  it('matches word forms through stemming: forecasting finds forecast', async () => {
    // Prepare
    await createAgent('squall-caller', 'A forecast of squalls for sailors', 'public');
    // Act
    const results = await found('forecasting');
    // Assess
    expect(results).toContainEqual(['agent', 'squall-caller']);
  });

  it('returns at most `limit` results, one per resource, best first', async () => {
    // Prepare: three agents, one of which says "pelican" twice
    await createAgent('pelican-one', 'Pelican pelican spotting', 'public');
    await createAgent('pelican-two', 'Pelican counts', 'public');
    await createAgent('pelican-three', 'Pelican photos', 'public');
    // Act
    const two = await search('pelican', '&limit=2');
    const all = await search('pelican');
    // Assess
    expect(two.count).toBe(2);
    expect(two.results).toHaveLength(2);
    expect(all.count).toBe(3);
    expect(new Set(all.results.map((r) => r.resourceId)).size).toBe(3);
    const scores = all.results.map((r) => r.score);
    expect(scores).toEqual([...scores].sort((a, b) => b - a));
  });

  it('refuses a missing or blank q, a limit outside 1 to 50 and an unknown type with 400 naming the parameter', async () => {
    // Act
    const missing = await platform.api('GET', '/search');
    const blank = await platform.api('GET', '/search?q=%20%20');
    const tooMany = await platform.api('GET', '/search?q=x&limit=51');
    const zero = await platform.api('GET', '/search?q=x&limit=0');
    const badType = await platform.api('GET', '/search?q=x&type=robot');
    const fifty = await platform.api('GET', '/search?q=x&limit=50');
    // Assess
    for (const res of [missing, blank, tooMany, zero, badType]) expect([res.status, res.body.code]).toEqual([400, 'INVALID_PARAMETERS']);
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/q: is required/);
    expect(blank.body.error).toMatch(/q: must not be empty/);
    expect(tooMany.body.error).toMatch(/limit: must be at most 50/);
    expect(zero.body.error).toMatch(/limit: must be at least 1/);
    expect(badType.body.error).toMatch(/type: must be one of all, agent, mcp, mcp-tool, skill/);
    expect(fifty.status).toBe(200);
  });

  it('limits anonymous callers to 60 searches a minute per address, then 429', async () => {
    // Prepare: a fresh window
    platform.clock.alignToWindow(60_000);
    // Act
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) statuses.push((await platform.api('GET', '/search?q=anything')).status);
    const limited = await platform.api('GET', '/search?q=anything');
    const signedIn = await platform.api('GET', '/search?q=anything', { token: searcher.token });
    // Assess
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    expect(signedIn.status).toBe(200);
  });
});

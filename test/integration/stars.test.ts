/**
 * Stars over HTTP (SPEC 4.14): star, unstar, list with names, check, public count; only what the
 * caller may see can be starred; counts stay exact when many users star at once; deleted or
 * hidden resources leave the star listings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const AGENT_SOURCE = `class Agent:
    def run(self, prompt):
        return prompt

def create_agent():
    return Agent()
`;
const MCP_SOURCE = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'starred', version: '1.0.0' });
  server.registerTool('ping', { description: 'Answers pong' }, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
  return server;
};
`;

describe('stars', () => {
  let platform: TestPlatform;
  let owner: { userId: string; token: string };
  let fan: { userId: string; token: string };

  async function skill(name: string, visibility: 'public' | 'private' = 'public'): Promise<string> {
    const res = await platform.api('POST', '/skills/create', {
      token: owner.token,
      body: { skillMd: `---\nname: ${name}\ndescription: ${name} skill\n---\nbody\n`, visibility },
    });
    if (res.status !== 201) throw new Error(`skill ${name}: ${res.status} ${res.text}`);
    return res.body.data.skill.skillId;
  }
  const star = (token: string, resourceId: string, resourceType: string) => platform.api('POST', '/stars', { token, body: { resourceId, resourceType } });
  const unstar = (token: string, resourceId: string, resourceType: string) => platform.api('DELETE', '/stars', { token, body: { resourceId, resourceType } });
  const count = async (resourceId: string) => (await platform.api('GET', `/stars/count/${resourceId}`)).body.data.count as number;
  const listed = async (token: string) => (await platform.api('GET', '/stars?limit=100', { token })).body.data.stars as { resourceId: string; name: string }[];

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await createUser(platform, { alias: 'maker' });
    fan = await createUser(platform, { alias: 'fan' });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('stars, checks, counts, lists with names and unstars a skill; starring twice counts once', async () => {
    // Prepare
    const skillId = await skill('starred-skill');
    // Act
    const first = await star(fan.token, skillId, 'skill');
    const second = await star(fan.token, skillId, 'skill');
    // Assess
    expect(first.status).toBe(200);
    expect(first.body.data).toMatchObject({ resourceId: skillId, starred: true, count: 1 });
    expect(second.body.data).toMatchObject({ starred: true, count: 1 });
    expect(await count(skillId)).toBe(1);
    expect((await platform.api('GET', `/stars/check?resourceId=${skillId}`, { token: fan.token })).body.data).toEqual({ resourceId: skillId, starred: true });
    expect((await platform.api('GET', `/stars/check?resourceId=${skillId}`, { token: owner.token })).body.data).toEqual({
      resourceId: skillId,
      starred: false,
    });
    expect(await listed(fan.token)).toEqual([
      expect.objectContaining({ resourceId: skillId, resourceType: 'skill', name: 'starred-skill', owner: 'maker', slug: 'maker/starred-skill' }),
    ]);

    expect((await unstar(fan.token, skillId, 'skill')).body.data).toMatchObject({ starred: false, count: 0 });
    expect((await unstar(fan.token, skillId, 'skill')).body.data).toMatchObject({ starred: false, count: 0 });
    expect(await count(skillId)).toBe(0);
    expect(await listed(fan.token)).toEqual([]);
  });

  it('gives exact counts when 20 users star at once, and when 15 of them unstar at once', async () => {
    const skillId = await skill('popular-skill');
    const users = await Promise.all(Array.from({ length: 20 }, (_, i) => createUser(platform, { alias: `crowd${i}` })));

    const starred = await Promise.all(users.map((u) => star(u.token, skillId, 'skill')));
    expect(starred.map((r) => r.status)).toEqual(users.map(() => 200));
    expect(await count(skillId)).toBe(20);

    // Starring again (all at once) and unstarring what one never starred change nothing.
    await Promise.all(users.map((u) => star(u.token, skillId, 'skill')));
    await unstar(fan.token, skillId, 'skill');
    expect(await count(skillId)).toBe(20);

    await Promise.all(users.slice(0, 15).map((u) => unstar(u.token, skillId, 'skill')));
    expect(await count(skillId)).toBe(5);
  });

  it('stars agents and MCP servers the caller may see, and 404s for another user private one', async () => {
    const agent = await platform.api('POST', '/agent/create', {
      token: owner.token,
      body: { agentName: 'star-agent', description: 'An agent to star', sourceCode: AGENT_SOURCE, visibility: 'public' },
    });
    expect(agent.status).toBe(200);
    const agentId = agent.body.data.agentId as string;
    const privateAgent = await platform.api('POST', '/agent/create', {
      token: owner.token,
      body: { agentName: 'hidden-agent', description: 'Private', sourceCode: AGENT_SOURCE },
    });
    const server = await platform.api('POST', '/mcp-admin/create', {
      token: owner.token,
      body: { serverName: 'star-server', description: 'A server to star', sourceCode: MCP_SOURCE, visibility: 'public' },
    });
    expect(server.status).toBe(200);
    const serverId = server.body.data.serverId as string;
    const privateSkill = await skill('private-skill', 'private');

    expect((await star(fan.token, agentId, 'agent')).status).toBe(200);
    expect((await star(fan.token, serverId, 'mcp')).status).toBe(200);
    expect((await star(fan.token, privateAgent.body.data.agentId, 'agent')).status).toBe(404);
    expect((await star(fan.token, privateSkill, 'skill')).status).toBe(404);
    expect((await star(fan.token, agentId, 'skill')).status).toBe(404);
    expect((await star(owner.token, privateSkill, 'skill')).status).toBe(200);
    expect((await platform.api('POST', '/stars', { body: { resourceId: agentId, resourceType: 'agent' } })).status).toBe(401);
    expect((await platform.api('POST', '/stars', { token: fan.token, body: { resourceId: agentId, resourceType: 'robot' } })).status).toBe(400);

    expect((await listed(fan.token)).map((s) => s.name).sort()).toEqual(['star-agent', 'star-server']);

    // Deleting (or hiding) a resource takes it out of the listings of those who starred it.
    await platform.api('DELETE', '/agent/delete', { token: owner.token, body: { agentId } });
    await platform.api('PUT', '/mcp-admin/update', { token: owner.token, body: { serverId, visibility: 'private' } });
    expect(await listed(fan.token)).toEqual([]);
    await platform.api('POST', '/skills/delete', { token: owner.token, body: { skillId: privateSkill } });
    expect(await listed(owner.token)).toEqual([]);
  });

  it('pages the caller stars with a cursor', async () => {
    const reader = await createUser(platform, { alias: 'pager' });
    const ids = [await skill('page-one'), await skill('page-two'), await skill('page-three')];
    for (const id of ids) await star(reader.token, id, 'skill');
    const first = await platform.api('GET', '/stars?limit=2', { token: reader.token });
    expect(first.body.data.stars).toHaveLength(2);
    const rest = await platform.api('GET', `/stars?limit=2&cursor=${encodeURIComponent(first.body.data.nextCursor)}`, { token: reader.token });
    expect(rest.body.data.stars).toHaveLength(1);
    expect(rest.body.data.nextCursor).toBeNull();
    expect([...first.body.data.stars, ...rest.body.data.stars].map((s: { resourceId: string }) => s.resourceId).sort()).toEqual([...ids].sort());
  });

  it('answers the count to anonymous callers, 0 for what nobody starred', async () => {
    const res = await platform.api('GET', '/stars/count/never-starred-id');
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ resourceId: 'never-starred-id', count: 0 });
    expect((await platform.api('GET', '/stars')).status).toBe(401);
  });
});

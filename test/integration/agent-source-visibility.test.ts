import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const ECHO = readFileSync(new URL('../../python-runtime/tests/fixtures/echo_agent.py', import.meta.url), 'utf8');

describe('agent sourceVisibility', () => {
  let platform: TestPlatform;
  let owner: { userId: string; token: string };
  let other: { userId: string; token: string };

  async function createAgent(agentName: string, extra: Record<string, unknown>) {
    const res = await platform.api('POST', '/agent/create', {
      token: owner.token,
      body: { agentName, description: `${agentName} for tests`, sourceCode: ECHO, ...extra },
    });
    if (res.status !== 200) throw new Error(`create ${agentName}: ${res.status} ${res.text}`);
    return res.body.data as { agentId: string; sourceVisibility: string };
  }

  /** The agent as the owner, another account and an anonymous caller see it, by id and by slug. */
  async function readAll(agentId: string, agentName: string) {
    const slug = `/agent/s/source-owner/${agentName}`;
    const [ownerById, ownerBySlug, otherById, otherBySlug, anonymousById, anonymousBySlug] = await Promise.all([
      platform.api('GET', `/agent/${agentId}`, { token: owner.token }),
      platform.api('GET', slug, { token: owner.token }),
      platform.api('GET', `/agent/${agentId}`, { token: other.token }),
      platform.api('GET', slug, { token: other.token }),
      platform.api('GET', `/agent/${agentId}`),
      platform.api('GET', slug),
    ]);
    return { owner: [ownerById, ownerBySlug], others: [otherById, otherBySlug, anonymousById, anonymousBySlug] };
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await createUser(platform, { alias: 'source-owner', credits: 100 });
    other = await createUser(platform, { alias: 'source-reader', credits: 100 });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('shows the source of a public agent to everyone by default', async () => {
    // Prepare
    const agent = await createAgent('open-source', { visibility: 'public' });
    // Act
    const seen = await readAll(agent.agentId, 'open-source');
    // Assess
    expect(agent.sourceVisibility).toBe('visible');
    for (const res of [...seen.owner, ...seen.others]) {
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ sourceVisibility: 'visible', sourceCode: ECHO });
    }
  });

  it('hides the source of a public agent from everyone but the owner, and still lets others chat with it', async () => {
    // Prepare
    const agent = await createAgent('closed-source', { visibility: 'public', sourceVisibility: 'hidden' });
    // Act
    const seen = await readAll(agent.agentId, 'closed-source');
    const chat = await platform.api('POST', `/agent/${agent.agentId}/chat`, { token: other.token, body: { prompt: 'hi' } });
    // Assess
    expect(agent.sourceVisibility).toBe('hidden');
    for (const res of seen.owner) {
      expect(res.status, res.text).toBe(200);
      expect(res.body.data).toMatchObject({ sourceVisibility: 'hidden', sourceCode: ECHO });
    }
    for (const res of seen.others) {
      expect(res.status, res.text).toBe(200);
      expect(res.body.data.sourceVisibility).toBe('hidden');
      expect(res.body.data).not.toHaveProperty('sourceCode');
    }
    expect(chat.status, chat.text).toBe(200);
    expect(chat.body.data.response).toBe('echo: hi');
  });

  it('changes with an update, in both directions', async () => {
    // Prepare
    const agent = await createAgent('toggled-source', { visibility: 'public' });
    // Act
    const hidden = await platform.api('PUT', '/agent/update', { token: owner.token, body: { agentId: agent.agentId, sourceVisibility: 'hidden' } });
    const whileHidden = await platform.api('GET', `/agent/${agent.agentId}`, { token: other.token });
    const shown = await platform.api('POST', '/agent/update', { token: owner.token, body: { agentId: agent.agentId, sourceVisibility: 'visible' } });
    const whileShown = await platform.api('GET', `/agent/${agent.agentId}`, { token: other.token });
    // Assess
    expect(hidden.status, hidden.text).toBe(200);
    expect(hidden.body.data.sourceVisibility).toBe('hidden');
    expect(whileHidden.body.data).not.toHaveProperty('sourceCode');
    expect(shown.body.data.sourceVisibility).toBe('visible');
    expect(whileShown.body.data.sourceCode).toBe(ECHO);
  });

  it('lists agents with their sourceVisibility and never with source', async () => {
    // Prepare
    await createAgent('listed-hidden', { visibility: 'public', sourceVisibility: 'hidden' });
    // Act
    const listed = await platform.api('GET', '/agent/list?visibility=public', { token: other.token });
    // Assess
    const entry = listed.body.data.agents.find((a: { agentName: string }) => a.agentName === 'listed-hidden');
    expect(entry).toMatchObject({ sourceVisibility: 'hidden' });
    expect(entry).not.toHaveProperty('sourceCode');
  });

  it('refuses an unknown sourceVisibility with 400 naming the field', async () => {
    // Prepare
    const agent = await createAgent('strict-source', {});
    // Act
    const onCreate = await platform.api('POST', '/agent/create', {
      token: owner.token,
      body: { agentName: 'bad-visibility', description: 'x', sourceCode: ECHO, sourceVisibility: 'secret' },
    });
    const onUpdate = await platform.api('PUT', '/agent/update', { token: owner.token, body: { agentId: agent.agentId, sourceVisibility: true } });
    // Assess
    for (const res of [onCreate, onUpdate]) {
      expect(res.status, res.text).toBe(400);
      expect(res.body.error.code).toBe('INVALID_PARAMETERS');
      expect(res.body.error.message).toContain('sourceVisibility');
    }
    expect((await platform.api('GET', '/agent/s/source-owner/bad-visibility', { token: owner.token })).status).toBe(404);
  });
});

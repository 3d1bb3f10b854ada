import { randomUUID } from 'node:crypto';
import { BatchWriteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sha256Hex } from '../../functions/core/ids.ts';
import { createUser, startTestPlatform, type ApiResponse, type TestPlatform } from '../support/local-platform.ts';

/** A CommonJS server whose `which` tool names `label`, so each version's behaviour is recognisable. */
function versioned(label: string, extraTool = ''): string {
  return `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

exports.createMcpServer = function createMcpServer() {
  const server = new McpServer({ name: 'versioned', version: '1.0.0' });
  server.registerTool('which', { description: 'Names the version' }, async () => ({ content: [{ type: 'text', text: ${JSON.stringify(label)} }] }));
  server.registerTool('add', { description: 'Adds', inputSchema: { a: z.number(), b: z.number() } }, async ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }));
  ${extraTool}
  return server;
};
`;
}
const EXTRA_TOOL = `server.registerTool('extra', { description: 'Only in some versions' }, async () => ({ content: [{ type: 'text', text: 'extra' }] }));`;
const SYNTAX_ERROR = 'exports.createMcpServer = function ( {';
const NO_FACTORY = 'exports.somethingElse = () => 1;';
const THROWS_WHILE_BUILDING = `exports.createMcpServer = function () { throw new Error('database unreachable at build time'); };`;

interface ServerData {
  serverId: string;
  serverName: string;
  slug: string;
  latestVersion: number;
  tools: string[];
  endpointUrl: string;
  slugEndpointUrl: string;
  visibility: string;
  sourceVisibility: string;
  sourceCode?: string;
  version: number | null;
}

/** One JSON-RPC call through the platform's MCP endpoint; the parsed result or error. */
async function callTool(platform: TestPlatform, path: string, token: string | undefined, name: string, args: Record<string, unknown> = {}) {
  const res = await platform.api('POST', path, {
    ...(token ? { token } : {}),
    headers: { accept: 'application/json, text/event-stream' },
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } },
  });
  return { status: res.status, body: res.body, text: res.body?.result?.content?.[0]?.text as string | undefined, headers: res.headers };
}

describe('MCP servers: CRUD, versions, rollback', () => {
  let platform: TestPlatform;
  let owner: { userId: string; token: string };
  let other: { userId: string; token: string };
  let noAlias: { userId: string; token: string };

  async function create(token: string, serverName: string, sourceCode: string, extra: Record<string, unknown> = {}): Promise<ServerData> {
    const res = await platform.api('POST', '/mcp-admin/create', { token, body: { serverName, description: `${serverName} for tests`, sourceCode, ...extra } });
    if (res.status !== 200) throw new Error(`create ${serverName}: ${res.status} ${res.text}`);
    return res.body.data;
  }

  async function update(token: string, body: Record<string, unknown>) {
    return platform.api('PUT', '/mcp-admin/update', { token, body });
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await createUser(platform, { alias: 'mcp-owner', credits: 1000 });
    other = await createUser(platform, { alias: 'mcp-other', credits: 1000 });
    noAlias = await createUser(platform, { credits: 10 });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('creates a server as version 1 with its tools, and shows it by id, by slug and in listings', async () => {
    // Act
    const created = await platform.api('POST', '/mcp-admin/create', {
      token: owner.token,
      body: { serverName: 'calc', description: 'adds', sourceCode: versioned('v1') },
    });
    const server = created.body.data as ServerData;
    const byId = await platform.api('GET', `/mcp-admin/${server.serverId}`, { token: owner.token });
    const bySlug = await platform.api('GET', '/mcp-admin/s/mcp-owner/calc', { token: owner.token });
    const list = await platform.api('GET', '/mcp-admin/list', { token: owner.token });
    // Assess: envelope B with the server record.
    expect(created.status).toBe(200);
    expect(created.body.requestId).toEqual(expect.any(String));
    expect(server).toMatchObject({
      serverName: 'calc',
      description: 'adds',
      owner: 'mcp-owner',
      slug: 'mcp-owner/calc',
      visibility: 'private',
      sourceVisibility: 'visible',
      latestVersion: 1,
      version: 1,
      authorPricing: null,
      endpointUrl: `${platform.url}/mcp/${server.serverId}`,
      slugEndpointUrl: `${platform.url}/mcp/s/mcp-owner/calc`,
    });
    expect(server.serverId).toMatch(/^mcp-[A-Za-z0-9]{20}$/);
    expect([...server.tools].sort()).toEqual(['add', 'which']);
    expect(server.sourceCode).toBeUndefined();
    expect(byId.status).toBe(200);
    expect(byId.body.data).toMatchObject({ serverId: server.serverId, latestVersion: 1, sourceCode: versioned('v1') });
    expect(bySlug.body.data.serverId).toBe(server.serverId);
    expect(list.body.data.servers.map((s: ServerData) => s.serverId)).toContain(server.serverId);
  });

  it('refuses a source that does not load, lacks createMcpServer or throws while building, with the error, and writes nothing', async () => {
    // Act
    const syntax = await platform.api('POST', '/mcp-admin/create', {
      token: owner.token,
      body: { serverName: 'broken', description: 'x', sourceCode: SYNTAX_ERROR },
    });
    const noFactory = await platform.api('POST', '/mcp-admin/create', {
      token: owner.token,
      body: { serverName: 'broken', description: 'x', sourceCode: NO_FACTORY },
    });
    const throws = await platform.api('POST', '/mcp-admin/create', {
      token: owner.token,
      body: { serverName: 'broken', description: 'x', sourceCode: THROWS_WHILE_BUILDING },
    });
    const bySlug = await platform.api('GET', '/mcp-admin/s/mcp-owner/broken', { token: owner.token });
    const list = await platform.api('GET', '/mcp-admin/list', { token: owner.token });
    // Assess
    for (const res of [syntax, noFactory, throws]) {
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('INVALID_PARAMETERS');
      expect(res.body.error).toMatch(/sourceCode: the MCP server does not load: /);
    }
    expect(noFactory.body.error).toMatch(/createMcpServer/);
    expect(throws.body.error).toMatch(/database unreachable at build time/);
    expect(bySlug.status).toBe(404);
    expect(list.body.data.servers.map((s: ServerData) => s.serverName)).not.toContain('broken');
  });

  it('refuses bad names, duplicate names, missing fields, a missing alias and anonymous callers', async () => {
    // Prepare
    await create(owner.token, 'taken', versioned('t'));
    // Act
    const badName = await platform.api('POST', '/mcp-admin/create', {
      token: owner.token,
      body: { serverName: 'Bad_Name', description: 'x', sourceCode: versioned('x') },
    });
    const duplicate = await platform.api('POST', '/mcp-admin/create', {
      token: owner.token,
      body: { serverName: 'taken', description: 'x', sourceCode: versioned('x') },
    });
    const sameNameOtherOwner = await platform.api('POST', '/mcp-admin/create', {
      token: other.token,
      body: { serverName: 'taken', description: 'x', sourceCode: versioned('x') },
    });
    const missing = await platform.api('POST', '/mcp-admin/create', { token: owner.token, body: { serverName: 'no-source' } });
    const aliasless = await platform.api('POST', '/mcp-admin/create', {
      token: noAlias.token,
      body: { serverName: 'mine', description: 'x', sourceCode: versioned('x') },
    });
    const anonymous = await platform.api('POST', '/mcp-admin/create', { body: { serverName: 'mine', description: 'x', sourceCode: versioned('x') } });
    // Assess
    expect(badName.status).toBe(400);
    expect(badName.body.error).toMatch(/serverName: must be lowercase/);
    expect(duplicate.status).toBe(409);
    expect(sameNameOtherOwner.status).toBe(200);
    expect(missing.status).toBe(400);
    expect(missing.body.error).toMatch(/description: is required; sourceCode: is required/);
    expect(aliasless.status).toBe(403);
    expect(aliasless.body.code).toBe('ALIAS_REQUIRED');
    expect(anonymous.status).toBe(401);
  });

  it('keeps private servers private, shows public ones to everyone, and hides a hidden source from non-owners', async () => {
    // Prepare
    const priv = await create(owner.token, 'private-one', versioned('p'));
    const pub = await create(owner.token, 'public-one', versioned('q'), { visibility: 'public', sourceVisibility: 'hidden' });
    // Act
    const foreignPrivate = await platform.api('GET', `/mcp-admin/${priv.serverId}`, { token: other.token });
    const anonymousPrivate = await platform.api('GET', `/mcp-admin/${priv.serverId}`);
    const foreignPrivateVersions = await platform.api('GET', `/mcp-admin/${priv.serverId}/versions`, { token: other.token });
    const anonymousPublic = await platform.api('GET', `/mcp-admin/${pub.serverId}`);
    const anonymousPublicBySlug = await platform.api('GET', '/mcp-admin/s/mcp-owner/public-one');
    const foreignVersion = await platform.api('GET', `/mcp-admin/${pub.serverId}/versions/1`, { token: other.token });
    const ownerVersion = await platform.api('GET', `/mcp-admin/${pub.serverId}/versions/1`, { token: owner.token });
    const ownerGet = await platform.api('GET', `/mcp-admin/${pub.serverId}`, { token: owner.token });
    const anonymousList = await platform.api('GET', '/mcp-admin/list');
    const otherPublicList = await platform.api('GET', '/mcp-admin/list?visibility=public', { token: other.token });
    const ownerPrivateList = await platform.api('GET', '/mcp-admin/list?visibility=private', { token: owner.token });
    const limited = await platform.api('GET', '/mcp-admin/list?limit=1', { token: owner.token });
    // Assess
    expect(foreignPrivate.status).toBe(403);
    expect(foreignPrivate.body.code).toBe('ACCESS_DENIED');
    expect(anonymousPrivate.status).toBe(403);
    expect(foreignPrivateVersions.status).toBe(403);
    expect(anonymousPublic.status).toBe(200);
    expect(anonymousPublic.body.data.sourceCode).toBeUndefined();
    expect(anonymousPublic.body.data.sourceVisibility).toBe('hidden');
    expect(anonymousPublicBySlug.body.data.serverId).toBe(pub.serverId);
    expect(foreignVersion.status).toBe(200);
    expect(foreignVersion.body.data).toMatchObject({ version: 1, tools: expect.arrayContaining(['which']) });
    expect(foreignVersion.body.data.sourceCode).toBeUndefined();
    expect(ownerVersion.body.data.sourceCode).toBe(versioned('q'));
    expect(ownerGet.body.data.sourceCode).toBe(versioned('q'));
    const anonymousIds = anonymousList.body.data.servers.map((s: ServerData) => s.serverId);
    expect(anonymousIds).toContain(pub.serverId);
    expect(anonymousIds).not.toContain(priv.serverId);
    expect(anonymousList.body.data.servers.every((s: ServerData) => s.visibility === 'public')).toBe(true);
    expect(otherPublicList.body.data.servers.map((s: ServerData) => s.serverId)).toContain(pub.serverId);
    expect(ownerPrivateList.body.data.servers.every((s: ServerData) => s.visibility === 'private')).toBe(true);
    expect(limited.body.data).toMatchObject({ count: 1, limit: 1 });
  });

  it('updates only the supplied fields, validates author pricing, and lets only the owner change a server', async () => {
    // Prepare
    const server = await create(owner.token, 'pricing', versioned('v1'));
    // Act
    const described = await update(owner.token, { serverId: server.serverId, description: 'new words' });
    const cheap = await update(owner.token, { serverId: server.serverId, authorPricing: { subscriptionPriceUsdMonthly: 0.49 } });
    const fractional = await update(owner.token, { serverId: server.serverId, authorPricing: { subscriptionPriceUsdMonthly: 0.505 } });
    const priced = await update(owner.token, { serverId: server.serverId, authorPricing: { subscriptionPriceUsdMonthly: 0.5, freeTrialQuota: 25 } });
    const publicNow = await update(owner.token, { serverId: server.serverId, visibility: 'public', sourceVisibility: 'hidden' });
    const anonymousList = await platform.api('GET', '/mcp-admin/list');
    const unpriced = await update(owner.token, { serverId: server.serverId, authorPricing: null, visibility: 'private' });
    const anonymousListAfter = await platform.api('GET', '/mcp-admin/list');
    const foreign = await update(other.token, { serverId: server.serverId, description: 'mine now' });
    const nothing = await update(owner.token, { serverId: server.serverId });
    const noteAlone = await update(owner.token, { serverId: server.serverId, changeNote: 'why' });
    const badSource = await update(owner.token, { serverId: server.serverId, sourceCode: SYNTAX_ERROR });
    const unknown = await update(owner.token, { serverId: 'mcp-doesnotexist', description: 'x' });
    const versions = await platform.api('GET', `/mcp-admin/${server.serverId}/versions`, { token: owner.token });
    // Assess
    expect(described.status).toBe(200);
    expect(described.body.data).toMatchObject({ description: 'new words', latestVersion: 1, version: null });
    expect(cheap.status).toBe(400);
    expect(cheap.body.error).toMatch(/authorPricing.subscriptionPriceUsdMonthly: must be at least 0.50 USD/);
    expect(fractional.status).toBe(400);
    expect(priced.body.data.authorPricing).toEqual({ subscriptionPriceUsdMonthly: 0.5, freeTrialQuota: 25 });
    expect(publicNow.body.data).toMatchObject({ visibility: 'public', sourceVisibility: 'hidden', authorPricing: { subscriptionPriceUsdMonthly: 0.5 } });
    expect(anonymousList.body.data.servers.map((s: ServerData) => s.serverId)).toContain(server.serverId);
    expect(unpriced.body.data).toMatchObject({ authorPricing: null, visibility: 'private' });
    expect(anonymousListAfter.body.data.servers.map((s: ServerData) => s.serverId)).not.toContain(server.serverId);
    expect(foreign.status).toBe(403);
    expect(nothing.status).toBe(400);
    expect(noteAlone.status).toBe(400);
    expect(noteAlone.body.error).toMatch(/changeNote/);
    expect(badSource.status).toBe(400);
    expect(unknown.status).toBe(404);
    expect(versions.body.data).toMatchObject({ latestVersion: 1, count: 1 });
  });

  it('writes a version per source update and per rollback, and a pinned call runs each version', async () => {
    // Prepare
    const server = await create(owner.token, 'history', versioned('v1'), { changeNote: 'first' });
    // Act
    const u2 = await update(owner.token, { serverId: server.serverId, sourceCode: versioned('v2', EXTRA_TOOL), changeNote: 'adds extra' });
    const u3 = await update(owner.token, { serverId: server.serverId, sourceCode: versioned('v3'), changeNote: 'drops extra', description: 'third' });
    const u4 = await update(owner.token, { serverId: server.serverId, sourceCode: versioned('v4') });
    const rollback = await platform.api('POST', `/mcp-admin/${server.serverId}/rollback`, { token: owner.token, body: { targetVersion: 2 } });
    const listing = await platform.api('GET', `/mcp-admin/${server.serverId}/versions`, { token: owner.token });
    const v5 = await platform.api('GET', `/mcp-admin/${server.serverId}/versions/5`, { token: owner.token });
    const v3 = await platform.api('GET', `/mcp-admin/${server.serverId}/versions/3`, { token: owner.token });
    const v9 = await platform.api('GET', `/mcp-admin/${server.serverId}/versions/9`, { token: owner.token });
    const live = await callTool(platform, `/mcp/${server.serverId}`, owner.token, 'which');
    const pinned = await Promise.all([1, 2, 3, 4, 5].map((v) => callTool(platform, `/mcp/${server.serverId}?v=${v}`, owner.token, 'which')));
    const pinnedLong = await callTool(platform, `/mcp/s/mcp-owner/history?version=3`, owner.token, 'which');
    const pinnedMissing = await callTool(platform, `/mcp/${server.serverId}?v=6`, owner.token, 'which');
    const extraInV3 = await callTool(platform, `/mcp/${server.serverId}?v=3`, owner.token, 'extra');
    // Assess: the updates.
    expect(u2.body.data).toMatchObject({ version: 2, latestVersion: 2 });
    expect(u2.body.data.tools).toContain('extra');
    expect(u3.body.data).toMatchObject({ version: 3, latestVersion: 3, description: 'third' });
    expect(u3.body.data.tools).not.toContain('extra');
    expect(u4.body.data.version).toBe(4);
    expect(rollback.status).toBe(200);
    expect(rollback.body.data).toMatchObject({ serverId: server.serverId, rolledBackTo: 2, latestVersion: 5, version: 5 });
    // Assess: the history, newest first, without sources.
    expect(listing.body.data).toMatchObject({ serverId: server.serverId, latestVersion: 5, count: 5 });
    const versions = listing.body.data.versions as Record<string, unknown>[];
    expect(versions.map((v) => v['version'])).toEqual([5, 4, 3, 2, 1]);
    expect(versions.map((v) => v['rollbackOf'])).toEqual([2, null, null, null, null]);
    expect(versions.map((v) => v['changeNote'])).toEqual(['Rollback to version 2', '', 'drops extra', 'adds extra', 'first']);
    for (const v of versions) {
      expect(v).not.toHaveProperty('sourceCode');
      expect(v).toMatchObject({ createdBy: owner.userId, createdAt: expect.any(Number), sizeBytes: expect.any(Number) });
    }
    expect(v5.body.data).toMatchObject({
      serverId: server.serverId,
      version: 5,
      rollbackOf: 2,
      sourceCode: versioned('v2', EXTRA_TOOL),
      createdBy: owner.userId,
    });
    expect(v5.body.data.tools).toContain('extra');
    expect(v3.body.data).toMatchObject({ version: 3, changeNote: 'drops extra', sourceCode: versioned('v3'), sizeBytes: Buffer.byteLength(versioned('v3')) });
    expect(v9.status).toBe(404);
    // Assess: the behaviour of each version.
    expect(live.text).toBe('v2');
    expect(live.headers.get('x-mcp-server-version')).toBe('5');
    expect(pinned.map((p) => p.text)).toEqual(['v1', 'v2', 'v3', 'v4', 'v2']);
    expect(pinnedLong.text).toBe('v3');
    expect(pinnedMissing.status).toBe(404);
    expect(pinnedMissing.body.error.message).toMatch(/Version 6 of MCP server/);
    expect(pinnedMissing.body).toMatchObject({ jsonrpc: '2.0', error: { code: -32013, data: { code: expect.stringMatching(/NOT_FOUND$/) } } });
    expect(extraInV3.body.result?.isError ?? extraInV3.body.error).toBeTruthy();
  });

  it('lets only the owner roll back, and refuses an unknown target', async () => {
    // Prepare
    const server = await create(owner.token, 'guarded', versioned('g1'), { visibility: 'public' });
    // Act
    const foreign = await platform.api('POST', `/mcp-admin/${server.serverId}/rollback`, { token: other.token, body: { targetVersion: 1 } });
    const anonymous = await platform.api('POST', `/mcp-admin/${server.serverId}/rollback`, { body: { targetVersion: 1 } });
    const unknownTarget = await platform.api('POST', `/mcp-admin/${server.serverId}/rollback`, { token: owner.token, body: { targetVersion: 7 } });
    const badTarget = await platform.api('POST', `/mcp-admin/${server.serverId}/rollback`, { token: owner.token, body: { targetVersion: 'one' } });
    const versions = await platform.api('GET', `/mcp-admin/${server.serverId}/versions`);
    // Assess
    expect(foreign.status).toBe(403);
    expect(anonymous.status).toBe(401);
    expect(unknownTarget.status).toBe(404);
    expect(badTarget.status).toBe(400);
    expect(versions.body.data).toMatchObject({ latestVersion: 1, count: 1 });
  });

  it('gives 20 concurrent updates 20 distinct consecutive versions, and mixed updates and rollbacks lose none', async () => {
    // Prepare
    const server = await create(owner.token, 'busy', versioned('c0'));
    const labels = Array.from({ length: 20 }, (_, i) => `c${i + 1}`);
    // Act
    const results = await Promise.all(
      labels.map((label) => update(owner.token, { serverId: server.serverId, sourceCode: versioned(label), changeNote: label })),
    );
    const listing = await platform.api('GET', `/mcp-admin/${server.serverId}/versions`, { token: owner.token });
    const live = await callTool(platform, `/mcp/${server.serverId}`, owner.token, 'which');
    const mixed = await Promise.all([
      ...Array.from({ length: 6 }, (_, i) => update(owner.token, { serverId: server.serverId, sourceCode: versioned(`m${i}`), changeNote: `m${i}` })),
      ...Array.from({ length: 4 }, (_, i) =>
        platform.api('POST', `/mcp-admin/${server.serverId}/rollback`, { token: owner.token, body: { targetVersion: i + 1 } }),
      ),
    ]);
    const after = await platform.api('GET', `/mcp-admin/${server.serverId}/versions`, { token: owner.token });
    // Assess: every update got its own number, 2 to 21, each holding that update's source.
    expect(results.map((r) => r.status)).toEqual(labels.map(() => 200));
    const numbers = results.map((r) => r.body.data.version as number);
    expect([...numbers].sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 2));
    const byVersion = new Map((listing.body.data.versions as { version: number; changeNote: string }[]).map((v) => [v.version, v.changeNote]));
    results.forEach((r, i) => expect(byVersion.get(r.body.data.version)).toBe(labels[i]));
    expect(listing.body.data).toMatchObject({ latestVersion: 21, count: 21 });
    // The live version is the highest one.
    expect(live.text).toBe(labels[numbers.indexOf(21)]);
    expect(mixed.map((r) => r.status)).toEqual(mixed.map(() => 200));
    expect(after.body.data.versions.map((v: { version: number }) => v.version)).toEqual(Array.from({ length: 31 }, (_, i) => 31 - i));
    expect(after.body.data.latestVersion).toBe(31);
  });

  it('repairs a version written but not made live (a crash between the two writes)', async () => {
    // Prepare: version 2 exists in the versions table; the server record still says 1.
    const server = await create(owner.token, 'crashed', versioned('before'));
    const source = versioned('orphan');
    const core = platform.running.ports;
    await core.db.doc.send(
      new PutCommand({
        TableName: core.db.table('mcp-versions'),
        Item: {
          serverId: server.serverId,
          version: 2,
          createdAt: Date.now(),
          createdBy: owner.userId,
          sizeBytes: Buffer.byteLength(source),
          changeNote: 'written before a crash',
          rollbackOf: null,
          tools: ['add', 'which'],
          sourceSha256: sha256Hex(source),
          sourceCode: source,
          sourceBlobKey: null,
        },
      }),
    );
    // Act
    const beforeRepair = await callTool(platform, `/mcp/${server.serverId}`, owner.token, 'which');
    const read = await platform.api('GET', `/mcp-admin/${server.serverId}`, { token: owner.token });
    const afterRepair = await callTool(platform, `/mcp/${server.serverId}`, owner.token, 'which');
    const next = await update(owner.token, { serverId: server.serverId, sourceCode: versioned('after') });
    // Assess
    expect(beforeRepair.text).toBe('before');
    expect(read.body.data).toMatchObject({ latestVersion: 2, sourceCode: source });
    expect(afterRepair.text).toBe('orphan');
    expect(next.body.data).toMatchObject({ version: 3, latestVersion: 3 });
  });

  it('keeps a large source in the blob store and serves every version of it', async () => {
    // Prepare: past the 64 KB inline threshold.
    const padding = `// ${'x'.repeat(100 * 1024)}\n`;
    const big1 = padding + versioned('big1');
    const big2 = padding + versioned('big2');
    // Act
    const server = await create(owner.token, 'large', big1);
    await update(owner.token, { serverId: server.serverId, sourceCode: big2 });
    const rollback = await platform.api('POST', `/mcp-admin/${server.serverId}/rollback`, { token: owner.token, body: { targetVersion: 1 } });
    const v1 = await platform.api('GET', `/mcp-admin/${server.serverId}/versions/1`, { token: owner.token });
    const calls = await Promise.all([1, 2, 3].map((v) => callTool(platform, `/mcp/${server.serverId}?v=${v}`, owner.token, 'which')));
    // Assess
    expect(rollback.body.data.version).toBe(3);
    expect(v1.body.data).toMatchObject({ sizeBytes: Buffer.byteLength(big1), sourceCode: big1 });
    expect(calls.map((c) => c.text)).toEqual(['big1', 'big2', 'big1']);
  });

  it('deletes a server with its history: its addresses answer 404 and the name is free again', async () => {
    // Prepare
    const server = await create(owner.token, 'doomed', versioned('d1'), { visibility: 'public' });
    await update(owner.token, { serverId: server.serverId, sourceCode: versioned('d2') });
    // Act
    const foreign = await platform.api('DELETE', '/mcp-admin/delete', { token: other.token, body: { serverId: server.serverId } });
    const deleted = await platform.api('DELETE', '/mcp-admin/delete', { token: owner.token, body: { serverId: server.serverId } });
    const get = await platform.api('GET', `/mcp-admin/${server.serverId}`, { token: owner.token });
    const versions = await platform.api('GET', `/mcp-admin/${server.serverId}/versions/1`, { token: owner.token });
    const call = await callTool(platform, `/mcp/${server.serverId}`, owner.token, 'which');
    const bySlug = await callTool(platform, '/mcp/s/mcp-owner/doomed', undefined, 'which');
    const again = await create(owner.token, 'doomed', versioned('new'));
    // Assess
    expect(foreign.status).toBe(403);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toMatchObject({ serverId: server.serverId, deleted: true });
    expect(get.status).toBe(404);
    expect(versions.status).toBe(404);
    expect(call.status).toBe(404);
    expect(bySlug.status).toBe(404);
    expect(again.latestVersion).toBe(1);
    expect(again.serverId).not.toBe(server.serverId);
  });

  describe('listing pages and the per-owner limit', () => {
    const serverRecord = (ownerId: string, serverName: string, createdAt: number, visibility: 'private' | 'public') => ({
      serverId: `mcp-${randomUUID()}`,
      ownerId,
      serverName,
      description: 'seeded',
      visibility,
      sourceVisibility: 'visible' as const,
      authorPricing: null,
      latestVersion: 1,
      tools: ['which'],
      sourceSha256: '',
      sourceSizeBytes: 0,
      createdAt,
      updatedAt: createdAt,
    });

    /** Every page of a listing, following `nextCursor` (bounded). */
    async function walk(path: string, token: string | undefined) {
      const pages: { servers: ServerData[]; nextCursor: string | null }[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 30; i++) {
        const paging: string = cursor === null ? '' : `&cursor=${cursor}`;
        const res: ApiResponse = await platform.api('GET', `${path}${path.includes('?') ? '&' : '?'}limit=20${paging}`, token === undefined ? {} : { token });
        if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
        pages.push(res.body.data);
        cursor = res.body.data.nextCursor;
        if (cursor === null) break;
      }
      return { ids: pages.flatMap((page) => page.servers.map((server) => server.serverId)), sizes: pages.map((page) => page.servers.length) };
    }

    it('pages 45 servers by cursor, newest first, each once, filtered by visibility', async () => {
      // Prepare: written through the store (no source check), every third one public, one millisecond apart.
      const lister = await createUser(platform, { alias: 'mcp-lister' });
      const ports = platform.running.ports;
      const t0 = Date.now();
      const seeded = Array.from({ length: 45 }, (_, i) => serverRecord(lister.userId, `listed-${i}`, t0 + i, i % 3 === 0 ? 'public' : 'private'));
      for (const record of seeded) {
        const draft = {
          createdAt: record.createdAt,
          createdBy: lister.userId,
          changeNote: 'seed',
          rollbackOf: null,
          tools: ['which'],
          sourceCode: versioned('s'),
        };
        if ((await ports.mcpServers.create(record, draft)) !== 'created') throw new Error(`seeding ${record.serverName}`);
      }
      const newestFirst = (keep: (r: (typeof seeded)[number]) => boolean) =>
        seeded
          .filter(keep)
          .reverse()
          .map((r) => r.serverId);
      // Act
      const all = await walk('/mcp-admin/list', lister.token);
      const privateOnes = await walk('/mcp-admin/list?visibility=private', lister.token);
      const publicOnes = await walk('/mcp-admin/list', undefined);
      const foreign = await platform.api(
        'GET',
        `/mcp-admin/list?limit=20&cursor=${(await platform.api('GET', '/mcp-admin/list?limit=20', { token: lister.token })).body.data.nextCursor}`,
        {
          token: other.token,
        },
      );
      // Assess
      expect(all.ids).toEqual(newestFirst(() => true));
      expect(all.sizes).toEqual([20, 20, 5]);
      expect(privateOnes.ids).toEqual(newestFirst((r) => r.visibility === 'private'));
      expect(publicOnes.ids.filter((id) => seeded.some((r) => r.serverId === id))).toEqual(newestFirst((r) => r.visibility === 'public'));
      expect(new Set(publicOnes.ids).size).toBe(publicOnes.ids.length);
      expect(foreign.status).toBe(400);
    });

    it('holds an owner to 500 servers under concurrent creates, counting older servers, and gives a place back on delete', async () => {
      // Prepare: 495 servers written straight to the table, as before counters existed.
      const limited = await createUser(platform, { alias: 'mcp-limited' });
      const ports = platform.running.ports;
      const t0 = Date.now();
      const seeded = Array.from({ length: 495 }, (_, i) => serverRecord(limited.userId, `held-${i}`, t0 + i, 'private'));
      for (let i = 0; i < seeded.length; i += 25) {
        const batch = seeded.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
        await ports.db.doc.send(new BatchWriteCommand({ RequestItems: { [ports.db.table('mcp-servers')]: batch } }));
      }
      const createAs = (serverName: string) =>
        platform.api('POST', '/mcp-admin/create', { token: limited.token, body: { serverName, description: 'race', sourceCode: versioned('r') } });
      // Act
      const racing = await Promise.all(Array.from({ length: 8 }, (_, i) => createAs(`racer-${i}`)));
      const created = racing.filter((r) => r.status === 200).map((r) => r.body.data as ServerData);
      const deleted = await platform.api('DELETE', '/mcp-admin/delete', { token: limited.token, body: { serverId: created[0]?.serverId } });
      const afterDelete = await createAs('after-delete');
      const full = await createAs('one-too-many');
      // Assess
      expect(created).toHaveLength(5);
      for (const r of racing.filter((r) => r.status !== 200)) expect(r.body).toMatchObject({ error: 'An account may own at most 500 MCP servers.' });
      expect(deleted.status).toBe(200);
      expect(afterDelete.status).toBe(200);
      expect(full.status).toBe(409);
      expect(await ports.mcpServers.countByOwner(limited.userId)).toBe(500);
      expect((await walk('/mcp-admin/list', limited.token)).ids).toHaveLength(500);
    });
  });
});

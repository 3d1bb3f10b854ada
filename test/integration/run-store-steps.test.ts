import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { recordStoreCalls, type StoreCall } from '../support/store-calls.ts';
import { calculator } from '../support/mcp-calculator.ts';

/**
 * The store calls before a paid run (issue 33, D11): each step is a round trip to the store, so the
 * count of sequential steps is pinned here, and so is what the hot path may take from memory (an MCP
 * version, immutable) and what it must read every time (the server, the token, the account).
 */

const ECHO = readFileSync(new URL('../../python-runtime/tests/fixtures/echo_agent.py', import.meta.url), 'utf8');

/** The tables a paid run's request path reads and writes before the run. */
const BEFORE_RUN = ['tokens', 'users', 'rate-limits', 'mcp-servers', 'mcp-versions', 'agents', 'conversations', 'keys'];

/**
 * Each call's step: 1 + the deepest call among `calls` that was answered before it was sent. Calls
 * sent together are one step; a call that waited for another's answer is a step after it.
 */
function stepsOf(calls: readonly StoreCall[]): Map<string, number> {
  const depth = new Map<StoreCall, number>();
  for (const call of [...calls].sort((a, b) => a.sent - b.sent)) {
    const before = calls.filter((other) => other.settled < call.sent).map((other) => depth.get(other) ?? 0);
    depth.set(call, 1 + Math.max(0, ...before));
  }
  // A label seen again gets a count (`users.UpdateItem#2`), so a repeated call is not hidden.
  const steps = new Map<string, number>();
  for (const [call, step] of depth) {
    const label = `${call.table}.${call.command}`;
    let key = label;
    for (let n = 2; steps.has(key); n++) key = `${label}#${n}`;
    steps.set(key, step);
  }
  return steps;
}

/**
 * The calls on the request path's tables sent before the run: before the debit's ledger line, which
 * goes out once the debit is answered, as the run starts (later calls are the run's metering and
 * the writes after it).
 */
function beforeRun(calls: readonly StoreCall[]): StoreCall[] {
  const ledgerLine = calls.find((c) => c.table === 'credit-ledger' && c.command === 'PutItem');
  if (ledgerLine === undefined) throw new Error('no debit ledger line among the calls');
  return calls.filter((c) => BEFORE_RUN.includes(c.table) && c.sent < ledgerLine.sent);
}

describe('store steps before a paid run', () => {
  let platform: TestPlatform;

  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  async function rpc(path: string, tool: 'add' | 'which', token?: string) {
    const args = tool === 'add' ? { a: 2, b: 3 } : {};
    return platform.api('POST', path, {
      ...(token ? { token } : {}),
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: args } },
    });
  }

  const textOf = (res: { body: any }): unknown => res.body?.result?.content?.[0]?.text;

  async function createServer(token: string, serverName: string, visibility: 'public' | 'private'): Promise<string> {
    const res = await platform.api('POST', '/mcp-admin/create', {
      token,
      body: { serverName, description: serverName, sourceCode: calculator('v1'), visibility },
    });
    if (res.status !== 200) throw new Error(`create ${serverName}: ${res.status} ${res.text}`);
    return res.body.data.serverId as string;
  }

  it('makes an MCP tools/call in three steps before the run: auth, the limiter with the server, the debit with the keys', async () => {
    // Prepare: a server another user calls once, so its version is in memory and the token's first use recorded
    const owner = await createUser(platform, { alias: 'steps-owner', credits: 10 });
    const caller = await createUser(platform, { alias: 'steps-caller', credits: 10 });
    const serverId = await createServer(owner.token, 'steps', 'public');
    expect((await rpc(`/mcp/${serverId}`, 'add', caller.token)).status).toBe(200);
    const { db, config } = platform.running.ports;
    // Act
    const { result, calls } = await recordStoreCalls(db, config.TABLE_PREFIX, () => rpc(`/mcp/${serverId}`, 'add', caller.token));
    // Assess: no version read (immutable, kept in memory); each of the rest in the step the rules allow
    expect(result.status).toBe(200);
    expect(textOf(result)).toBe('5');
    const steps = stepsOf(beforeRun(calls));
    expect(Object.fromEntries(steps)).toEqual({
      'tokens.BatchGetItem': 1,
      'users.BatchGetItem': 1,
      'rate-limits.UpdateItem': 2,
      'mcp-servers.GetItem': 2,
      'keys.Query': 3,
      'users.UpdateItem': 3,
    });
  });

  it("writes a token's lastUsedAt beside the limiter, not a step before it, and before the answer", async () => {
    // Prepare: a token used once, then idle for over a minute (its next use records lastUsedAt)
    const owner = await createUser(platform, { alias: 'idle-owner', credits: 10 });
    const serverId = await createServer(owner.token, 'idle', 'private');
    expect((await rpc(`/mcp/${serverId}`, 'add', owner.token)).status).toBe(200);
    platform.clock.advance(61_000);
    const usedFrom = platform.clock.now();
    const { db, config } = platform.running.ports;
    // Act
    const { result, calls } = await recordStoreCalls(db, config.TABLE_PREFIX, () => rpc(`/mcp/${serverId}`, 'add', owner.token));
    const token = await platform.api('GET', `/user/token/${owner.tokenId}`, { token: owner.token });
    // Assess: still three steps, the write in the second; it was done when the answer came
    expect(result.status).toBe(200);
    expect(Object.fromEntries(stepsOf(beforeRun(calls)))).toEqual({
      'tokens.BatchGetItem': 1,
      'users.BatchGetItem': 1,
      'tokens.UpdateItem': 2,
      'rate-limits.UpdateItem': 2,
      'mcp-servers.GetItem': 2,
      'keys.Query': 3,
      'users.UpdateItem': 3,
    });
    expect(token.body.data.lastUsedAt).toBeGreaterThanOrEqual(usedFrom);
  });

  it('makes a new chat in three steps before the run: auth, the limiter with the agent, the debit with the keys', async () => {
    // Prepare: an agent chatted with once, so the token's first use is recorded
    const owner = await createUser(platform, { alias: 'steps-chatter', credits: 10 });
    const agent = await platform.api('POST', '/agent/create', { token: owner.token, body: { agentName: 'steps-echo', description: 'echo', sourceCode: ECHO } });
    const agentId = agent.body.data.agentId as string;
    expect((await platform.api('POST', `/agent/${agentId}/chat`, { token: owner.token, body: { prompt: 'warm' } })).status).toBe(200);
    const { db, config } = platform.running.ports;
    // Act
    const { result, calls } = await recordStoreCalls(db, config.TABLE_PREFIX, () =>
      platform.api('POST', `/agent/${agentId}/chat`, { token: owner.token, body: { prompt: 'hello' } }),
    );
    // Assess: a new conversation reads no conversation; the debit is the first write
    expect(result.status).toBe(200);
    const steps = stepsOf(beforeRun(calls));
    expect(Object.fromEntries(steps)).toEqual({
      'tokens.BatchGetItem': 1,
      'users.BatchGetItem': 1,
      'rate-limits.UpdateItem': 2,
      'agents.GetItem': 2,
      'keys.Query': 3,
      'users.UpdateItem': 3,
    });
  });

  it('sees at once what may change behind a warm path: a new version, private, a revoked token, a deleted server', async () => {
    // Prepare: a public server whose version 1 another user's token has run
    const owner = await createUser(platform, { alias: 'fresh-owner', credits: 20 });
    const caller = await createUser(platform, { alias: 'fresh-caller', credits: 20 });
    const serverId = await createServer(owner.token, 'fresh', 'public');
    const path = `/mcp/${serverId}`;
    const warm = await rpc(path, 'which', caller.token);
    const extra = (await platform.api('POST', '/user/token/create', { token: owner.token, body: { name: 'extra', expiresInDays: 1 } })).body.data;
    const byExtra = await rpc(path, 'which', extra.token);

    // Act: a new version
    await platform.api('PUT', '/mcp-admin/update', { token: owner.token, body: { serverId, sourceCode: calculator('v2') } });
    const afterUpdate = await rpc(path, 'which', caller.token);
    const pinnedOld = await rpc(`${path}?version=1`, 'which', caller.token);
    // Act: private
    await platform.api('PUT', '/mcp-admin/update', { token: owner.token, body: { serverId, visibility: 'private' } });
    const otherAfterPrivate = await rpc(path, 'which', caller.token);
    const anonymousAfterPrivate = await rpc(path, 'which');
    const ownerAfterPrivate = await rpc(path, 'which', owner.token);
    // Act: a revoked token
    await platform.api('POST', '/user/token/revoke', { token: owner.token, body: { tokenId: extra.tokenId } });
    const afterRevoke = await rpc(path, 'which', extra.token);
    // Act: deleted
    await platform.api('DELETE', '/mcp-admin/delete', { token: owner.token, body: { serverId } });
    const afterDelete = await rpc(path, 'which', owner.token);
    const pinnedAfterDelete = await rpc(`${path}?version=1`, 'which', owner.token);

    // Assess
    expect([warm.status, textOf(warm), warm.headers.get('x-mcp-server-version')]).toEqual([200, 'v1', '1']);
    expect([byExtra.status, textOf(byExtra)]).toEqual([200, 'v1']);
    expect([afterUpdate.status, textOf(afterUpdate), afterUpdate.headers.get('x-mcp-server-version')]).toEqual([200, 'v2', '2']);
    expect([pinnedOld.status, textOf(pinnedOld), pinnedOld.headers.get('x-mcp-server-version')]).toEqual([200, 'v1', '1']);
    expect(otherAfterPrivate.status).toBe(403);
    expect(anonymousAfterPrivate.status).toBe(401);
    expect([ownerAfterPrivate.status, textOf(ownerAfterPrivate)]).toEqual([200, 'v2']);
    expect(afterRevoke.status).toBe(401);
    expect(afterDelete.status).toBe(404);
    expect(pinnedAfterDelete.status).toBe(404);
  });
});

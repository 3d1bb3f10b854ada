import { randomUUID } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childLineageHeader, lineageOf, type Lineage } from '../../functions/core/http/lineage.ts';
import { INLINE_BODY_BYTES, type UsageLogInput, type UsageLogRecord } from '../../functions/core/usage-log.ts';
import type { Ports } from '../../functions/ports.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

describe('usage logs over HTTP', () => {
  let platform: TestPlatform;
  let ports: Ports;

  beforeAll(async () => {
    platform = await startTestPlatform();
    ports = platform.running.ports;
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  /** Writes one usage record the way a resource invocation does; the clock moves a little first so createdAt is strictly increasing. */
  async function writeLog(userId: string, lineage: Lineage, overrides: Partial<Omit<UsageLogInput, 'lineage' | 'userId'>> = {}): Promise<UsageLogRecord> {
    platform.clock.advance(5);
    return ports.usageLogs.write({
      lineage,
      userId,
      resourceId: 'agent-1',
      resourceType: 'agent',
      status: 'success',
      request: { prompt: 'hello' },
      response: { answer: 'hi' },
      durationMs: 40,
      memoryMb: 1024,
      maxMemoryUsedMb: 200,
      creditsUsed: 0.5,
      ...overrides,
    });
  }

  const direct = () => lineageOf(randomUUID(), undefined);
  const childOf = (parent: Lineage, context: { conversationId?: string; agentId?: string } = {}) =>
    lineageOf(randomUUID(), childLineageHeader(parent, context));

  const ids = (logs: { requestId: string }[]) => logs.map((l) => l.requestId);

  /** requestId -> children's requestIds, in order, for every node of a trace tree. */
  function shapeOf(node: any, out: Record<string, string[]> = {}): Record<string, string[]> {
    out[node.requestId] = node.children.map((c: any) => c.requestId);
    for (const child of node.children) shapeOf(child, out);
    return out;
  }

  it('refuses every logs route without a token with 401', async () => {
    // Act
    const responses = await Promise.all(
      ['/logs', '/logs/user', '/logs/some-request', '/logs/request/some-request/trace', '/logs/trace/some-trace'].map((path) => platform.api('GET', path)),
    );
    // Assess
    for (const res of responses) {
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'AUTHENTICATION_REQUIRED', error: expect.any(String), requestId: expect.any(String) });
    }
  });

  it("lists the caller's records newest first with light summaries, and /logs/user answers the same", async () => {
    // Prepare
    const user = await createUser(platform);
    const other = await createUser(platform);
    const first = await writeLog(user.userId, direct(), { request: { prompt: 'p'.repeat(INLINE_BODY_BYTES * 2) } });
    const second = await writeLog(user.userId, direct(), { status: 'error', error: { code: 'AGENT_EXECUTION_FAILED', message: 'boom' } });
    await writeLog(other.userId, direct());

    // Act
    const logs = await platform.api('GET', '/logs', { token: user.token });
    const userLogs = await platform.api('GET', '/logs/user', { token: user.token });

    // Assess
    expect(logs.status).toBe(200);
    expect(logs.body.data).toMatchObject({ page: 0, pageSize: 50, count: 2, hasMore: false, timeRange: 24, scanLimitReached: false });
    expect(ids(logs.body.data.logs)).toEqual([second.requestId, first.requestId]);
    expect(logs.body.data.logs[0]).toEqual({
      requestId: second.requestId,
      rootRequestId: second.requestId,
      parentRequestId: null,
      parentConversationId: null,
      parentAgentId: null,
      resourceId: 'agent-1',
      resourceType: 'agent',
      requestType: null,
      status: 'error',
      createdAt: second.createdAt,
      metrics: { durationMs: 40, memoryMb: 1024, maxMemoryUsedMb: 200 },
      creditsUsed: 0.5,
      error: { code: 'AGENT_EXECUTION_FAILED', message: 'boom' },
      request: { preview: '{"prompt":"hello"}', sizeBytes: 18 },
      response: { preview: '{"answer":"hi"}', sizeBytes: 15 },
    });
    // A large body shows only a short preview in the listing.
    expect(logs.body.data.logs[1].request.preview).toHaveLength(200);
    expect(logs.body.data.logs[1].request.sizeBytes).toBeGreaterThan(INLINE_BODY_BYTES * 2);
    expect(userLogs.status).toBe(200);
    expect(userLogs.body.data).toEqual(logs.body.data);
  });

  it('filters by resourceId, status and parentConversationId, alone and together', async () => {
    // Prepare
    const user = await createUser(platform);
    const root = direct();
    const a = await writeLog(user.userId, root, { resourceId: 'agent-a' });
    const b = await writeLog(user.userId, childOf(root, { conversationId: 'conv-1', agentId: 'agent-a' }), {
      resourceId: 'mcp-b',
      resourceType: 'mcp',
      status: 'error',
      error: { code: 'E', message: 'failed' },
    });
    const c = await writeLog(user.userId, childOf(root, { conversationId: 'conv-1', agentId: 'agent-a' }), {
      resourceId: 'mcp-b',
      resourceType: 'mcp',
      status: 'timeout',
    });
    const d = await writeLog(user.userId, childOf(root, { conversationId: 'conv-2', agentId: 'agent-a' }), {
      resourceId: 'act-c',
      resourceType: 'action',
      status: 'error',
    });
    const list = async (query: string) => {
      const res = await platform.api('GET', `/logs?${query}`, { token: user.token });
      expect(res.status).toBe(200);
      return ids(res.body.data.logs);
    };

    // Act
    const byResource = await list('resourceId=mcp-b');
    const byStatus = await list('status=error');
    const bySuccess = await list('status=success');
    const byTimeout = await list('status=timeout');
    const byConversation = await list('parentConversationId=conv-1');
    const combined = await list('parentConversationId=conv-1&status=error&resourceId=mcp-b');
    const nothing = await list('resourceId=mcp-b&parentConversationId=conv-2');

    // Assess
    expect(byResource).toEqual([c.requestId, b.requestId]);
    expect(byStatus).toEqual([d.requestId, b.requestId]);
    expect(bySuccess).toEqual([a.requestId]);
    expect(byTimeout).toEqual([c.requestId]);
    expect(byConversation).toEqual([c.requestId, b.requestId]);
    expect(combined).toEqual([b.requestId]);
    expect(nothing).toEqual([]);
  });

  it('pages with page and pageSize, saying whether more follow', async () => {
    // Prepare
    const user = await createUser(platform);
    const written: UsageLogRecord[] = [];
    for (let i = 0; i < 5; i++) written.push(await writeLog(user.userId, direct(), { resourceId: `res-${i}` }));
    const newestFirst = ids(written).reverse();

    // Act
    const pages = await Promise.all([0, 1, 2, 3].map((page) => platform.api('GET', `/logs?pageSize=2&page=${page}`, { token: user.token })));

    // Assess
    expect(pages.map((p) => p.body.data.count)).toEqual([2, 2, 1, 0]);
    expect(pages.map((p) => p.body.data.hasMore)).toEqual([true, true, false, false]);
    expect(pages.flatMap((p) => ids(p.body.data.logs))).toEqual(newestFirst);
    expect(pages[1]!.body.data).toMatchObject({ page: 1, pageSize: 2 });
  });

  it('limits the listing to the last timeRange hours', async () => {
    // Prepare: one record three hours old, one fresh
    const user = await createUser(platform);
    const old = await writeLog(user.userId, direct());
    platform.clock.advance(3 * HOUR_MS);
    const fresh = await writeLog(user.userId, direct());

    // Act
    const lastHour = await platform.api('GET', '/logs?timeRange=1', { token: user.token });
    const lastFourHours = await platform.api('GET', '/logs?timeRange=4', { token: user.token });
    const defaultRange = await platform.api('GET', '/logs', { token: user.token });

    // Assess
    expect(ids(lastHour.body.data.logs)).toEqual([fresh.requestId]);
    expect(lastHour.body.data.timeRange).toBe(1);
    expect(ids(lastFourHours.body.data.logs)).toEqual([fresh.requestId, old.requestId]);
    expect(ids(defaultRange.body.data.logs)).toEqual([fresh.requestId, old.requestId]);
  });

  it('refuses bad query values with 400 naming the field', async () => {
    // Prepare
    const user = await createUser(platform);
    const cases: [string, string][] = [
      ['timeRange=0', 'timeRange'],
      ['timeRange=721', 'timeRange'],
      ['timeRange=abc', 'timeRange'],
      ['timeRange=1.5', 'timeRange'],
      ['pageSize=0', 'pageSize'],
      ['pageSize=201', 'pageSize'],
      ['page=-1', 'page'],
      ['page=51&pageSize=200', 'page'],
      ['status=ok', 'status'],
      ['resourceId=', 'resourceId'],
      ['parentConversationId=', 'parentConversationId'],
    ];

    // Act
    const responses = await Promise.all(cases.map(([query]) => platform.api('GET', `/logs?${query}`, { token: user.token })));

    // Assess
    responses.forEach((res, i) => {
      const [query, field] = cases[i]!;
      expect(res.status, query).toBe(400);
      expect(res.body.code, query).toBe('INVALID_PARAMETERS');
      expect(res.body.error, query).toContain(`${field}: `);
    });
    expect(responses[7]!.body.error).toContain('page × pageSize must be at most 10000');
  });

  it('returns one record in full, a large body fetched whole from the blob store, and 404 for unknown or foreign ids', async () => {
    // Prepare
    const owner = await createUser(platform);
    const stranger = await createUser(platform);
    const big = { items: Array.from({ length: 2000 }, (_, i) => ({ i, text: `item ${i}` })) };
    const record = await writeLog(owner.userId, direct(), {
      resourceId: 'act-big',
      resourceType: 'action',
      requestType: 'INVOKE',
      status: 'error',
      // A text body that looks like JSON must come back as the text it was.
      request: '123',
      response: big,
      error: { code: 'AGENT_EXECUTION_FAILED', message: 'ran out of patience' },
      creditsUsed: 2.25,
    });
    expect(record.response.truncated).toBe(true);

    // Act
    const full = await platform.api('GET', `/logs/${record.requestId}`, { token: owner.token });
    const foreign = await platform.api('GET', `/logs/${record.requestId}`, { token: stranger.token });
    const unknown = await platform.api('GET', `/logs/${randomUUID()}`, { token: owner.token });
    const malformed = await platform.api('GET', `/logs/${encodeURIComponent('not an id!')}`, { token: owner.token });

    // Assess
    expect(full.status).toBe(200);
    expect(full.body.data).toEqual({
      requestId: record.requestId,
      rootRequestId: record.requestId,
      parentRequestId: null,
      parentConversationId: null,
      parentAgentId: null,
      userId: owner.userId,
      resourceId: 'act-big',
      resourceType: 'action',
      requestType: 'INVOKE',
      status: 'error',
      createdAt: record.createdAt,
      expiresAt: record.expiresAt * 1000,
      metrics: { durationMs: 40, memoryMb: 1024, maxMemoryUsedMb: 200 },
      creditsUsed: 2.25,
      error: { code: 'AGENT_EXECUTION_FAILED', message: 'ran out of patience' },
      request: { body: '123', sizeBytes: 3, truncated: false },
      response: { body: big, sizeBytes: record.response.sizeBytes, truncated: false },
    });
    expect(full.body.data.expiresAt - full.body.data.createdAt).toBeGreaterThanOrEqual(30 * DAY_MS - 1000);
    expect(foreign.status).toBe(404);
    expect(unknown.status).toBe(404);
    // Another user's record and an absent one are indistinguishable.
    expect(foreign.body).toMatchObject({ code: 'NOT_FOUND', error: `Log ${record.requestId} not found.` });
    expect(unknown.body).toMatchObject({ code: 'NOT_FOUND', error: expect.stringMatching(/^Log \S+ not found\.$/) });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error).toContain('requestId: ');
  });

  it('builds the trace tree across three levels from both trace endpoints', async () => {
    // Prepare: agent run -> two MCP calls in conversation conv-t -> the first calls an action; plus an unrelated run
    const user = await createUser(platform);
    const rootLineage = direct();
    const childLineage = childOf(rootLineage, { conversationId: 'conv-t', agentId: 'agent-t' });
    const siblingLineage = childOf(rootLineage, { conversationId: 'conv-t', agentId: 'agent-t' });
    const grandchildLineage = childOf(childLineage);
    // A record is written when its invocation ends, so the deepest comes first.
    const grandchild = await writeLog(user.userId, grandchildLineage, { resourceId: 'act-1', resourceType: 'action' });
    const child = await writeLog(user.userId, childLineage, { resourceId: 'mcp-1', resourceType: 'mcp' });
    const sibling = await writeLog(user.userId, siblingLineage, { resourceId: 'mcp-2', resourceType: 'mcp', status: 'timeout' });
    const root = await writeLog(user.userId, rootLineage, { resourceId: 'agent-t' });
    await writeLog(user.userId, direct());

    // Act
    const byTrace = await platform.api('GET', `/logs/trace/${root.requestId}`, { token: user.token });
    const byRootRequest = await platform.api('GET', `/logs/request/${root.requestId}/trace`, { token: user.token });
    const byChild = await platform.api('GET', `/logs/request/${child.requestId}/trace`, { token: user.token });
    const byGrandchild = await platform.api('GET', `/logs/request/${grandchild.requestId}/trace`, { token: user.token });

    // Assess: lineage fields as written
    expect(child).toMatchObject({ rootRequestId: root.requestId, parentRequestId: root.requestId, parentConversationId: 'conv-t', parentAgentId: 'agent-t' });
    expect(grandchild).toMatchObject({ rootRequestId: root.requestId, parentRequestId: child.requestId, parentConversationId: null, parentAgentId: null });
    // Assess: the whole tree, children in createdAt order
    expect(byTrace.status).toBe(200);
    expect(byTrace.body.data).toMatchObject({ traceId: root.requestId, count: 4, scanLimitReached: false });
    expect(shapeOf(byTrace.body.data.root)).toEqual({
      [root.requestId]: [child.requestId, sibling.requestId],
      [child.requestId]: [grandchild.requestId],
      [grandchild.requestId]: [],
      [sibling.requestId]: [],
    });
    const rootNode = byTrace.body.data.root;
    expect(rootNode).toMatchObject({ resourceId: 'agent-t', parentRequestId: null, status: 'success' });
    expect(rootNode.children[0]).toMatchObject({ resourceId: 'mcp-1', resourceType: 'mcp', parentConversationId: 'conv-t', parentAgentId: 'agent-t' });
    expect(rootNode.children[0].children[0]).toMatchObject({ resourceId: 'act-1', resourceType: 'action', parentRequestId: child.requestId });
    expect(rootNode.children[1]).toMatchObject({ resourceId: 'mcp-2', status: 'timeout' });
    expect(rootNode).not.toHaveProperty('redacted');
    // Assess: the request endpoint on the root gives the same tree; on a child, its subtree
    expect(byRootRequest.body.data).toEqual(byTrace.body.data);
    expect(byChild.body.data).toMatchObject({ traceId: root.requestId, count: 2 });
    expect(shapeOf(byChild.body.data.root)).toEqual({ [child.requestId]: [grandchild.requestId], [grandchild.requestId]: [] });
    expect(byGrandchild.body.data).toMatchObject({ traceId: root.requestId, count: 1, root: { requestId: grandchild.requestId, children: [] } });
  });

  it('answers 404 for the trace of an unknown id or of another user, and for a request id used as a trace id', async () => {
    // Prepare
    const owner = await createUser(platform);
    const stranger = await createUser(platform);
    const rootLineage = direct();
    const child = await writeLog(owner.userId, childOf(rootLineage));
    const root = await writeLog(owner.userId, rootLineage);

    // Act
    const strangerTrace = await platform.api('GET', `/logs/trace/${root.requestId}`, { token: stranger.token });
    const strangerRequestTrace = await platform.api('GET', `/logs/request/${root.requestId}/trace`, { token: stranger.token });
    const unknownTrace = await platform.api('GET', `/logs/trace/${randomUUID()}`, { token: owner.token });
    const unknownRequestTrace = await platform.api('GET', `/logs/request/${randomUUID()}/trace`, { token: owner.token });
    const childAsTrace = await platform.api('GET', `/logs/trace/${child.requestId}`, { token: owner.token });

    // Assess
    expect([strangerTrace.status, strangerRequestTrace.status, unknownTrace.status, unknownRequestTrace.status, childAsTrace.status]).toEqual([
      404, 404, 404, 404, 404,
    ]);
    expect(childAsTrace.body.error).toContain('root request id');
  });

  it("shows only the caller's records in a trace that crosses users, keeping nesting through redacted hops", async () => {
    // Prepare: A's agent run calls B's public MCP server; B's server calls an action of B's and, on A's
    // behalf, an action of A's. A's agent also calls one of A's own actions directly.
    const alice = await createUser(platform);
    const bob = await createUser(platform);
    const rootLineage = direct();
    const bobMcpLineage = childOf(rootLineage, { conversationId: 'conv-x', agentId: 'agent-alice' });
    const bobAction = await writeLog(bob.userId, childOf(bobMcpLineage), { resourceId: 'bob-action', resourceType: 'action', request: { secret: 'bob only' } });
    const aliceAction = await writeLog(alice.userId, childOf(bobMcpLineage), { resourceId: 'alice-action', resourceType: 'action' });
    const bobMcp = await writeLog(bob.userId, bobMcpLineage, { resourceId: 'bob-mcp', resourceType: 'mcp', request: { secret: 'bob only' } });
    const aliceDirect = await writeLog(alice.userId, childOf(rootLineage, { conversationId: 'conv-x', agentId: 'agent-alice' }), {
      resourceId: 'alice-tool',
      resourceType: 'action',
    });
    const root = await writeLog(alice.userId, rootLineage, { resourceId: 'agent-alice' });

    // Act
    const aliceTrace = await platform.api('GET', `/logs/trace/${root.requestId}`, { token: alice.token });
    const bobTrace = await platform.api('GET', `/logs/trace/${root.requestId}`, { token: bob.token });
    const bobSubtree = await platform.api('GET', `/logs/request/${bobMcp.requestId}/trace`, { token: bob.token });
    const aliceLogs = await platform.api('GET', '/logs', { token: alice.token });

    // Assess: Alice sees her three records; Bob's MCP call is a bare placeholder holding her action, Bob's own action is absent.
    expect(aliceTrace.status).toBe(200);
    expect(aliceTrace.body.data).toMatchObject({ traceId: root.requestId, count: 3 });
    expect(shapeOf(aliceTrace.body.data.root)).toEqual({
      [root.requestId]: [bobMcp.requestId, aliceDirect.requestId],
      [aliceDirect.requestId]: [],
      [bobMcp.requestId]: [aliceAction.requestId],
      [aliceAction.requestId]: [],
    });
    expect(aliceTrace.body.data.root.children[0]).toEqual({
      requestId: bobMcp.requestId,
      redacted: true,
      children: [expect.objectContaining({ requestId: aliceAction.requestId })],
    });
    expect(aliceTrace.text).not.toContain(bobAction.requestId);
    expect(aliceTrace.text).not.toContain('bob only');
    expect(aliceTrace.text).not.toContain(bob.userId);
    // Assess: Bob sees the trace from his side; Alice's root is a placeholder and her records are gone.
    expect(bobTrace.status).toBe(200);
    expect(bobTrace.body.data).toMatchObject({ traceId: root.requestId, count: 2 });
    expect(bobTrace.body.data.root).toEqual({
      requestId: root.requestId,
      redacted: true,
      children: [expect.objectContaining({ requestId: bobMcp.requestId, resourceId: 'bob-mcp' })],
    });
    expect(shapeOf(bobTrace.body.data.root)).toEqual({
      [root.requestId]: [bobMcp.requestId],
      [bobMcp.requestId]: [bobAction.requestId],
      [bobAction.requestId]: [],
    });
    expect(bobTrace.text).not.toContain(aliceAction.requestId);
    expect(bobTrace.text).not.toContain(aliceDirect.requestId);
    expect(bobSubtree.body.data).toMatchObject({
      traceId: root.requestId,
      count: 2,
      root: { requestId: bobMcp.requestId, children: [{ requestId: bobAction.requestId }] },
    });
    // Assess: listings never hold another user's records
    expect(ids(aliceLogs.body.data.logs).sort()).toEqual([root.requestId, aliceDirect.requestId, aliceAction.requestId].sort());
  });

  it('keeps a trace readable when its lineage is inconsistent: missing hops become placeholders, a cycle is cut at the root', async () => {
    // Prepare: the lineage header is not signed, so a caller can label its own records with any ids.
    const user = await createUser(platform);
    const [traceId, a, b, c, missing] = [randomUUID(), randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    const orphan = await writeLog(user.userId, lineageOf(c, `root=${traceId};parent=${missing}`));
    await writeLog(user.userId, lineageOf(b, `root=${traceId};parent=${a}`));
    await writeLog(user.userId, lineageOf(a, `root=${traceId};parent=${b}`));

    // Act
    const trace = await platform.api('GET', `/logs/trace/${traceId}`, { token: user.token });

    // Assess: the unrecorded root and parent are placeholders; the cycle a -> b -> a hangs under the root once.
    expect(trace.status).toBe(200);
    expect(trace.body.data).toMatchObject({ traceId, count: 3, root: { requestId: traceId, redacted: true } });
    expect(shapeOf(trace.body.data.root)).toEqual({ [traceId]: [missing, b], [missing]: [orphan.requestId], [orphan.requestId]: [], [b]: [a], [a]: [] });
  });

  it('hides a record whose expiresAt has passed even before the table deletes it', async () => {
    // Prepare: a record written straight to the table with an expiry a second ago (as DynamoDB may keep it for days)
    const user = await createUser(platform);
    const live = await writeLog(user.userId, direct());
    const now = platform.clock.now();
    const staleId = randomUUID();
    const stale: UsageLogRecord = { ...live, requestId: staleId, rootRequestId: staleId, createdAt: now, expiresAt: Math.floor(now / 1000) - 1 };
    await ports.db.doc.send(new PutCommand({ TableName: ports.db.table('usage-logs'), Item: stale }));

    // Act
    const list = await platform.api('GET', '/logs', { token: user.token });
    const got = await platform.api('GET', `/logs/${staleId}`, { token: user.token });
    const trace = await platform.api('GET', `/logs/trace/${staleId}`, { token: user.token });

    // Assess
    expect(ids(list.body.data.logs)).toEqual([live.requestId]);
    expect(got.status).toBe(404);
    expect(trace.status).toBe(404);
  });

  // Moves the shared clock past the retention period, so it runs last.
  it('stops returning records once the 30-day retention has passed', async () => {
    // Prepare
    const user = await createUser(platform);
    const rootLineage = direct();
    const child = await writeLog(user.userId, childOf(rootLineage));
    const root = await writeLog(user.userId, rootLineage);
    const before = await platform.api('GET', `/logs/${root.requestId}`, { token: user.token });

    // Act
    platform.clock.advance(30 * DAY_MS + HOUR_MS);
    const list = await platform.api('GET', '/logs?timeRange=720', { token: user.token });
    const got = await platform.api('GET', `/logs/${root.requestId}`, { token: user.token });
    const trace = await platform.api('GET', `/logs/trace/${root.requestId}`, { token: user.token });
    const requestTrace = await platform.api('GET', `/logs/request/${child.requestId}/trace`, { token: user.token });

    // Assess
    expect(before.status).toBe(200);
    expect(list.body.data.logs).toEqual([]);
    expect([got.status, trace.status, requestTrace.status]).toEqual([404, 404, 404]);
  });
});

/**
 * Analytics over HTTP on the real local platform: figures after a known mix of real runs (agent
 * chats, actions, MCP tool calls, failures among them) equal what /logs lists for the same period;
 * timeseries are zero-filled by the hour and the day; authors see counts of others' calls to their
 * public resources and nothing of the callers; every query rule answers a 400 naming its field.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { roundCredits } from '../../functions/core/credits.ts';
import { lineageOf } from '../../functions/core/http/lineage.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const ECHO_AGENT = `class Echo:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        yield {"data": "echo " + prompt}


def create_agent():
    return Echo(), []
`;
const FAILING_AGENT = `class Failing:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        raise ValueError("no answer for " + prompt)
        yield {"data": ""}


def create_agent():
    return Failing(), []
`;
const ECHO_ACTION = `def handler(event, context):
    return {"statusCode": 200, "body": {"got": event.get("n")}}
`;
const RAISING_ACTION = `def handler(event, context):
    raise ValueError("broken on purpose")
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
const ACCEPT = { accept: 'application/json, text/event-stream' };

interface LogRow {
  requestId: string;
  userId?: string;
  resourceId: string;
  resourceType: string;
  status: string;
  creditsUsed: number;
}

describe('analytics over usage', () => {
  let platform: TestPlatform;
  let author: { userId: string; token: string };
  let caller: { userId: string; token: string };
  const ids = { agent: '', failingAgent: '', action: '', raising: '', server: '' };

  async function created(res: { status: number; text: string; body: any }, field: string): Promise<string> {
    if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
    return res.body.data[field] as string;
  }

  /** Every record /logs lists for the user over the last `hours`, page by page. */
  async function allLogs(token: string, hours = 24): Promise<LogRow[]> {
    const rows: LogRow[] = [];
    for (let page = 0; ; page++) {
      const res = await platform.api('GET', `/logs?timeRange=${hours}&pageSize=200&page=${page}`, { token });
      expect(res.status, res.text).toBe(200);
      rows.push(...(res.body.data.logs as LogRow[]));
      if (!res.body.data.hasMore) return rows;
    }
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
    // Runs straddling midnight UTC would fall in two days while /logs' last 24 hours hold them all.
    const toMidnight = 86_400_000 - (platform.clock.now() % 86_400_000);
    if (toMidnight < 20 * 60_000) platform.clock.advance(toMidnight + 1000);
    author = await createUser(platform, { alias: 'stats-author', credits: 1000 });
    caller = await createUser(platform, { alias: 'stats-caller', credits: 1000 });
    const agent = (agentName: string, sourceCode: string) =>
      platform.api('POST', '/agent/create', { token: author.token, body: { agentName, description: 'd', sourceCode, visibility: 'public' } });
    const action = (actionName: string, sourceCode: string) =>
      platform.api('POST', '/action/create', {
        token: author.token,
        body: { actionName, description: 'd', runtime: 'python3.12', sourceCode, category: 'testing', visibility: 'public', status: 'active' },
      });
    ids.agent = await created(await agent('echo-stats', ECHO_AGENT), 'agentId');
    ids.failingAgent = await created(await agent('failing-stats', FAILING_AGENT), 'agentId');
    ids.action = await created(await action('Echo stats', ECHO_ACTION), 'actionId');
    ids.raising = await created(await action('Raising stats', RAISING_ACTION), 'actionId');
    ids.server = await created(
      await platform.api('POST', '/mcp-admin/create', {
        token: author.token,
        body: { serverName: 'calc-stats', description: 'd', sourceCode: CALCULATOR, visibility: 'public' },
      }),
      'serverId',
    );
  });
  afterAll(() => platform.stop({ removeData: true }));

  it('agrees exactly with /logs after a known mix of agent chats, actions, MCP calls and failures', async () => {
    // Prepare: the caller's runs, and one of the author's own
    const chat = (agentId: string, token: string, prompt: string) => platform.api('POST', `/agent/${agentId}/chat`, { token, body: { prompt } });
    const runAction = (actionId: string, n: number) => platform.api('POST', `/action/${actionId}`, { token: caller.token, body: { n } });
    const mcpCall = (a: number) =>
      platform.api('POST', `/mcp/${ids.server}`, {
        token: caller.token,
        headers: ACCEPT,
        body: { jsonrpc: '2.0', id: a, method: 'tools/call', params: { name: 'add', arguments: { a, b: 1 } } },
      });
    const outcomes = [
      await chat(ids.agent, caller.token, 'one'),
      await chat(ids.agent, caller.token, 'two'),
      await chat(ids.failingAgent, caller.token, 'three'),
      await runAction(ids.action, 1),
      await runAction(ids.action, 2),
      await runAction(ids.action, 3),
      await runAction(ids.raising, 4),
      await mcpCall(1),
      await mcpCall(2),
    ];
    await chat(ids.agent, author.token, 'mine');

    // Act
    const logs = await allLogs(caller.token);
    const overview = await platform.api('GET', '/analytics/overview?days=1', { token: caller.token });
    const resources = await platform.api('GET', '/analytics/resources?days=1&limit=100', { token: caller.token });
    const requests = await platform.api(
      'GET',
      '/analytics/timeseries?metric=requests&interval=day&from=' + new Date(platform.clock.now()).toISOString().slice(0, 10),
      {
        token: caller.token,
      },
    );

    // Assess: the runs happened (some failing on purpose), and every figure equals the records'
    expect(outcomes.map((res) => res.status)).toEqual([200, 200, expect.any(Number), 200, 200, 200, expect.any(Number), 200, 200]);
    const failed = (row: LogRow) => row.status !== 'success';
    const ofType = (type: string) => logs.filter((row) => row.resourceType === type);
    const credits = (rows: LogRow[]) => roundCredits(rows.reduce((sum, row) => sum + row.creditsUsed, 0));
    expect(logs.length).toBeGreaterThanOrEqual(9);
    expect(logs.filter(failed).length).toBeGreaterThanOrEqual(2);
    expect(overview.status, overview.text).toBe(200);
    const data = overview.body.data;
    expect(data).toMatchObject({ days: 1, requests: logs.length, errors: logs.filter(failed).length, creditsSpent: credits(logs) });
    expect(data.errorRate).toBeCloseTo(logs.filter(failed).length / logs.length, 4);
    expect(data.avgDurationMs).toBeGreaterThanOrEqual(0);
    for (const type of ['agent', 'action', 'mcp']) {
      expect(data.byType[type], type).toEqual({
        requests: ofType(type).length,
        errors: ofType(type).filter(failed).length,
        creditsSpent: credits(ofType(type)),
      });
    }
    expect(data.byType.voice).toEqual({ requests: 0, errors: 0, creditsSpent: 0 });
    expect(data.topResources[0]).toMatchObject({ resourceId: ids.action, resourceType: 'action', name: 'Echo stats' });
    expect(data.topResources[0].requests).toBe(logs.filter((row) => row.resourceId === ids.action).length);
    expect(data.publicUsage).toEqual({ requests: 0, errors: 0 });

    expect(resources.status, resources.text).toBe(200);
    const byId = new Map<string, any>(resources.body.data.resources.map((row: any) => [row.resourceId, row]));
    const distinct = new Set(logs.map((row) => row.resourceId));
    expect(byId.size).toBe(distinct.size);
    for (const resourceId of distinct) {
      const rows = logs.filter((row) => row.resourceId === resourceId);
      expect(byId.get(resourceId), resourceId).toMatchObject({
        requests: rows.length,
        errors: rows.filter(failed).length,
        creditsSpent: credits(rows),
        byOthers: null,
      });
      expect(byId.get(resourceId).p50DurationMs).toBeGreaterThanOrEqual(0);
      expect(byId.get(resourceId).p95DurationMs).toBeGreaterThanOrEqual(byId.get(resourceId).p50DurationMs);
    }
    expect(byId.get(ids.server)).toMatchObject({ resourceType: 'mcp', name: 'calc-stats' });

    expect(requests.status, requests.text).toBe(200);
    expect(requests.body.data.points).toEqual([{ t: expect.stringMatching(/T00:00:00\.000Z$/), value: logs.length }]);
  });

  it("shows an author the counts of others' calls to their public resources, and nothing of the callers", async () => {
    // Prepare: what the caller's runs of the author's resources amount to, from the caller's records
    const callerLogs = (await allLogs(caller.token)).filter((row) => Object.values(ids).includes(row.resourceId));
    const authorLogs = await allLogs(author.token);

    // Act
    const overview = await platform.api('GET', '/analytics/overview', { token: author.token });
    const resources = await platform.api('GET', '/analytics/resources', { token: author.token });

    // Assess: counts equal the caller's records; the author's own run stays theirs
    expect(overview.status, overview.text).toBe(200);
    expect(overview.body.data.requests).toBe(authorLogs.length);
    expect(overview.body.data.publicUsage).toEqual({ requests: callerLogs.length, errors: callerLogs.filter((row) => row.status !== 'success').length });
    const rows = resources.body.data.resources as any[];
    const echo = rows.find((row) => row.resourceId === ids.agent);
    expect(echo).toMatchObject({ name: 'echo-stats', requests: 1, byOthers: { requests: callerLogs.filter((row) => row.resourceId === ids.agent).length } });
    const action = rows.find((row) => row.resourceId === ids.action);
    expect(action).toMatchObject({ requests: 0, creditsSpent: 0, p50DurationMs: null, byOthers: { requests: 3, errors: 0 } });
    expect(resources.text).not.toContain(caller.userId);
    expect(overview.text).not.toContain(caller.userId);
  });

  it('zero-fills timeseries by the hour and the day, in UTC, with each metric', async () => {
    // Prepare: a fresh user with runs two hours apart, recorded through the usage recorder
    const user = await createUser(platform);
    const record = (durationMs: number, status: 'success' | 'error') =>
      platform.running.ports.usageLogs.write({
        lineage: lineageOf(randomUUID(), undefined),
        userId: user.userId,
        resourceId: 'res-timeseries',
        resourceType: 'action',
        status,
        request: {},
        response: {},
        durationMs,
        creditsUsed: 0.25,
      });
    const first = await record(100, 'success');
    await record(300, 'error');
    platform.clock.advance(2 * 3_600_000);
    const later = await record(50, 'success');
    const hour = (ms: number) => new Date(Math.floor(ms / 3_600_000) * 3_600_000).toISOString();

    // Act
    const query = (q: string) => platform.api('GET', `/analytics/timeseries?${q}`, { token: user.token });
    const [requests, errors, credits, duration, days] = await Promise.all([
      query(`metric=requests&interval=hour&from=${first.createdAt}&to=${later.createdAt}`),
      query(`metric=errors&interval=hour&from=${hour(first.createdAt)}&to=${hour(later.createdAt)}`),
      query(`metric=credits&interval=hour&from=${first.createdAt}&to=${later.createdAt}`),
      query(`metric=durationMs&interval=hour&from=${first.createdAt}&to=${later.createdAt}`),
      query('metric=requests&interval=day'),
    ]);

    // Assess
    expect(requests.status, requests.text).toBe(200);
    expect(requests.body.data).toMatchObject({ metric: 'requests', interval: 'hour', from: hour(first.createdAt), to: hour(later.createdAt) });
    expect(requests.body.data.points).toEqual([
      { t: hour(first.createdAt), value: 2 },
      { t: hour(first.createdAt + 3_600_000), value: 0 },
      { t: hour(later.createdAt), value: 1 },
    ]);
    expect(errors.body.data.points.map((p: any) => p.value)).toEqual([1, 0, 0]);
    expect(credits.body.data.points.map((p: any) => p.value)).toEqual([0.5, 0, 0.25]);
    expect(duration.body.data.points.map((p: any) => p.value)).toEqual([200, 0, 50]);
    expect(days.body.data.points).toHaveLength(30);
    expect(days.body.data.points.slice(0, -2).every((p: any) => p.value === 0)).toBe(true);
    const dayTotal = days.body.data.points.reduce((sum: number, p: any) => sum + p.value, 0);
    expect(dayTotal).toBe(3);
  });

  it('refuses bad queries with a 400 naming the field, and every route without a credential', async () => {
    // Act
    const bad = await Promise.all(
      [
        ['/analytics/overview?days=0', 'days'],
        ['/analytics/overview?days=366', 'days'],
        ['/analytics/overview?days=1.5', 'days'],
        ['/analytics/resources?limit=101', 'limit'],
        ['/analytics/timeseries?metric=latency', 'metric'],
        ['/analytics/timeseries?interval=week', 'interval'],
        ['/analytics/timeseries?from=yesterday', 'from'],
        ['/analytics/timeseries?from=2026-02-01&to=2026-01-01', 'from'],
        ['/analytics/timeseries?interval=hour&from=2025-01-01&to=2025-03-01', 'from'],
      ].map(async ([path, field]) => ({ field: field!, res: await platform.api('GET', path!, { token: caller.token }) })),
    );
    const anonymous = await Promise.all(['/analytics/overview', '/analytics/timeseries', '/analytics/resources'].map((path) => platform.api('GET', path)));

    // Assess
    for (const { field, res } of bad) {
      expect(res.status, res.text).toBe(400);
      expect(res.body.error, res.text).toContain(`${field}:`);
    }
    expect(anonymous.map((res) => res.status)).toEqual([401, 401, 401]);
  });
});

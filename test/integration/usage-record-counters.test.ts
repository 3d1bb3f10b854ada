/**
 * A run's usage record and its analytics counters, written together (issue 33: one store step after
 * the run, not two) on the real local platform, through an MCP tools/call's billed run. The rule the
 * order used to give must still hold: figures count only runs that are recorded, a counter that
 * fails leaves the record and the bill as they were, and a record that fails leaves no counts.
 * Failures are made by refusing one store command on the platform's own DynamoDB client.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TOOL_CALL_CREDITS } from '../../functions/mcp/mcp.schema.ts';
import { SAMPLE_CJS } from '../contract/mcp-runtime.contract.ts';
import { callOf, overlapped, recordStoreCalls } from '../support/store-calls.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const MIDDLEWARE = 'testRefuseStoreCommand';

describe('the usage record and its counters, written together', () => {
  let platform: TestPlatform;

  async function createServer(token: string, serverName: string): Promise<string> {
    const res = await platform.api('POST', '/mcp-admin/create', { token, body: { serverName, description: 'for tests', sourceCode: SAMPLE_CJS } });
    if (res.status !== 200) throw new Error(`create: ${res.status} ${res.text}`);
    return res.body.data.serverId;
  }

  function callTool(serverId: string, token: string) {
    return platform.api('POST', `/mcp/${serverId}`, {
      token,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'add', arguments: { a: 2, b: 3 } } },
    });
  }

  const credits = async (token: string): Promise<number> => (await platform.api('GET', '/user/credits', { token })).body.data.credits;
  const overview = async (token: string) => (await platform.api('GET', '/analytics/overview?days=1', { token })).body.data;
  const recordStatus = async (token: string, requestId: string) => (await platform.api('GET', `/logs/${requestId}`, { token })).status;

  /** The counter items under one scope (`u#<userId>`, `r#<resourceId>`), as stored. */
  async function counterItems(scope: string): Promise<Record<string, unknown>[]> {
    const { db } = platform.running.ports;
    const read = await db.doc.send(
      new QueryCommand({
        TableName: db.table('usage-stats'),
        KeyConditionExpression: '#scope = :scope',
        ExpressionAttributeNames: { '#scope': 'scope' },
        ExpressionAttributeValues: { ':scope': scope },
        ConsistentRead: true,
      }),
    );
    return read.Items ?? [];
  }

  async function ledgerLines(userId: string, requestId: string): Promise<number[]> {
    const { db } = platform.running.ports;
    const read = await db.doc.send(
      new QueryCommand({
        TableName: db.table('credit-ledger'),
        KeyConditionExpression: 'userId = :u',
        ExpressionAttributeValues: { ':u': userId },
        ConsistentRead: true,
      }),
    );
    return (read.Items ?? []).filter((line) => line['requestId'] === requestId).map((line) => line['amount'] as number);
  }

  /** Runs `work` while the first `table.Command` sent fails before reaching the store (nothing written). */
  async function withRefused<T>(label: string, work: () => Promise<T>): Promise<{ result: T; refused: number }> {
    const { db, config } = platform.running.ports;
    let refused = 0;
    db.doc.middlewareStack.add(
      (next, context) => async (args) => {
        const table = String((args.input as { TableName?: unknown }).TableName ?? '').slice(config.TABLE_PREFIX.length);
        const command = String(context.commandName ?? '').replace(/Command$/, '');
        if (refused === 0 && `${table}.${command}` === label) {
          refused++;
          throw new Error(`test: ${label} refused`);
        }
        return next(args);
      },
      { step: 'initialize', name: MIDDLEWARE, override: true },
    );
    try {
      return { result: await work(), refused };
    } finally {
      db.doc.middlewareStack.remove(MIDDLEWARE);
    }
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('sends the record and its four counter updates at once, and the figures count the run', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'counted-together', credits: 10 });
    const serverId = await createServer(user.token, 'together');
    const { db, config } = platform.running.ports;
    // Act
    const { result: call, calls } = await recordStoreCalls(db, config.TABLE_PREFIX, () => callTool(serverId, user.token));
    const figures = await overview(user.token);
    // Assess
    expect(call.status).toBe(200);
    const put = callOf(calls, 'usage-logs.PutItem');
    const counters = calls.filter((c) => c.table === 'usage-stats');
    expect(counters.map((c) => c.command)).toEqual(['UpdateItem', 'UpdateItem', 'UpdateItem', 'UpdateItem']);
    // Each counter update is in flight with the record's put: one step after the run, not two.
    expect(counters.every((c) => overlapped(c, put))).toBe(true);
    expect(await recordStatus(user.token, call.headers.get('x-request-id')!)).toBe(200);
    expect(figures).toMatchObject({ requests: 1, errors: 0, creditsSpent: TOOL_CALL_CREDITS });
  });

  it('keeps the record and the bill when a counter update fails, and answers the failure as before', async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'counter-fails', credits: 10 });
    const serverId = await createServer(user.token, 'counter-fails');
    // Act
    const { result: call, refused } = await withRefused('usage-stats.UpdateItem', () => callTool(serverId, user.token));
    const requestId = call.headers.get('x-request-id')!;
    const balance = await credits(user.token);
    // Assess: the run was recorded and billed as it would be without counters; the request fails
    // as a failed record write always made it fail (the counters' failure is the record's).
    expect(refused).toBe(1);
    expect(call.status).toBe(500);
    expect(await recordStatus(user.token, requestId)).toBe(200);
    expect(balance).toBe(10 - TOOL_CALL_CREDITS);
    expect(await ledgerLines(user.userId, requestId)).toEqual([-TOOL_CALL_CREDITS]);
  });

  it('takes the counts back when the record fails, leaving no figure and no empty counter behind', async () => {
    // Prepare: one counted run first, so the user's day and hour items exist before the failing one.
    const user = await createUser(platform, { alias: 'record-fails', credits: 10 });
    const counted = await createServer(user.token, 'counted');
    const unrecorded = await createServer(user.token, 'unrecorded');
    expect((await callTool(counted, user.token)).status).toBe(200);
    const before = await overview(user.token);
    const userItemsBefore = await counterItems(`u#${user.userId}`);
    // Act
    const { result: call, refused } = await withRefused('usage-logs.PutItem', () => callTool(unrecorded, user.token));
    const requestId = call.headers.get('x-request-id')!;
    const after = await overview(user.token);
    // Assess: the request fails and is billed as a failed record always left it; the figures still
    // equal what /logs lists (the earlier run only), and the failing run's own items are gone.
    expect(refused).toBe(1);
    expect(call.status).toBe(500);
    expect(await recordStatus(user.token, requestId)).toBe(404);
    expect(await credits(user.token)).toBe(10 - 2 * TOOL_CALL_CREDITS);
    expect(await ledgerLines(user.userId, requestId)).toEqual([-TOOL_CALL_CREDITS]);
    const { to: _beforeTo, ...figuresBefore } = before;
    const { to: _afterTo, ...figuresAfter } = after;
    expect(figuresAfter).toEqual(figuresBefore);
    expect(after.requests).toBe(1);
    expect(await counterItems(`r#${unrecorded}`)).toEqual([]);
    expect((await counterItems(`u#${user.userId}`)).map((item) => item['slot']).sort()).toEqual(userItemsBefore.map((item) => item['slot']).sort());
  });
});

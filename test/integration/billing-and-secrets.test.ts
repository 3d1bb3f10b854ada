/**
 * Billing by what the platform observed, and keys kept from other callers and from every record,
 * on the real local platform with the real Python runtime.
 */
import { readdir, readFile } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { callOf, callsOn, overlapped, recordStoreCalls } from '../support/store-calls.ts';

const SLEEPING_AGENT = readFileSync(new URL('../../python-runtime/tests/fixtures/sleeping_agent.py', import.meta.url), 'utf8');
const ECHO = `def handler(event, context):
    return {"statusCode": 200, "body": {k: v for k, v in event.items() if k != "keys"}}
`;
const SLOW = `import time


def handler(event, context):
    time.sleep(event["seconds"])
    return {"statusCode": 200, "body": "done"}
`;
const RAISES_KEY = `def handler(event, context):
    raise ValueError(event["keys"]["svc"])
`;
const RETURNS_KEY = `def handler(event, context):
    key = event["keys"]["svc"]
    return {"statusCode": 200, "body": {"leak": key, "nested": [{"again": "key is " + key}]}, "headers": {"x-leak": key}}
`;
/** Streams the key split across two chunks, then raises with it. */
const AGENT_LEAKS_KEY = `import json


class LeakyAgent:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        key = json.loads(SVC_KEYS_JSON)["svc"]
        yield {"data": "the key is " + key[:7]}
        yield {"data": key[7:] + ", bye"}
        raise ValueError("boom " + key)


def create_agent():
    return LeakyAgent(), []
`;
const SECRET = 'sk-live-LEAKCHECK-4f1d2c3b5a69';

const round4 = (n: number) => Math.round(n * 10_000) / 10_000;

async function streamChat(platform: TestPlatform, token: string, agentId: string, prompt: string): Promise<string> {
  const res = await fetch(`${platform.url}/stream/agent/${agentId}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ prompt }),
  });
  return res.text();
}

describe('billing by what the platform observed, and keys kept out of answers and records', () => {
  let platform: TestPlatform;
  const logLines: string[] = [];
  let owner: { userId: string; token: string };

  const credits = async (token: string): Promise<number> => (await platform.api('GET', '/user/credits', { token })).body.data.credits;

  async function createAction(token: string, body: Record<string, unknown>): Promise<string> {
    const res = await platform.api('POST', '/action/create', {
      token,
      body: {
        actionName: 'Billing test',
        description: 'd',
        runtime: 'python3.12',
        sourceCode: ECHO,
        category: 'testing',
        visibility: 'public',
        status: 'active',
        ...body,
      },
    });
    if (res.status !== 200) throw new Error(`create action: ${res.status} ${res.text}`);
    return res.body.data.actionId as string;
  }

  async function createAgent(token: string, agentName: string, sourceCode: string): Promise<string> {
    const res = await platform.api('POST', '/agent/create', { token, body: { agentName, description: 'd', sourceCode, visibility: 'public' } });
    if (res.status !== 200) throw new Error(`create agent: ${res.status} ${res.text}`);
    return res.body.data.agentId as string;
  }

  beforeAll(async () => {
    // Short stretches of paid-ahead run time keep the metered chat short.
    platform = await startTestPlatform({ logLines, env: { CHAT_BILLING_TICK_SEC: '0.5' } });
    owner = await createUser(platform, { alias: 'billing-owner', credits: 1000 });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('refuses a run whose worst case is above the balance with 402 naming it, and gives back what a finished run did not use', async () => {
    // Prepare
    const caller = await createUser(platform, { alias: 'hold-caller', credits: 3 });
    const large = await createAction(owner.token, { memoryMb: 1024 });
    const small = await createAction(owner.token, { sourceCode: SLOW, memoryMb: 128, timeoutSec: 5 });
    // Act
    const refused = await platform.api('POST', `/action/${large}`, { token: caller.token, body: {} });
    const afterRefusal = await credits(caller.token);
    const ran = await platform.api('POST', `/action/${small}`, { token: caller.token, body: { seconds: 0.3 } });
    const afterRun = await credits(caller.token);
    const ledger = await platform.running.ports.db.doc.send(
      new QueryCommand({
        TableName: platform.running.ports.db.table('credit-ledger'),
        KeyConditionExpression: 'userId = :u',
        ExpressionAttributeValues: { ':u': caller.userId },
        ConsistentRead: true,
      }),
    );
    // Assess
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({
      success: false,
      error: { code: 'INSUFFICIENT_CREDITS', message: 'This run needs up to 30.9 credits (1024 MB for up to 30 s); the balance is 3.' },
    });
    expect(afterRefusal).toBe(3);
    expect(ran.status).toBe(200);
    expect(ran.body.meta.creditsUsed).toBeGreaterThanOrEqual(1.0375);
    expect(afterRun).toBe(round4(3 - ran.body.meta.creditsUsed));
    // The hold (1 + 0.125 × 4.9) and what went back, one ledger line each
    const runLines = (ledger.Items ?? []).filter((e) => e['requestId'] === ran.headers.get('x-request-id')).map((e) => e['amount']);
    expect(runLines.sort()).toEqual([-1.6125, round4(1.6125 - ran.body.meta.creditsUsed)].sort());
  });

  it('bills a chat exactly, a ledger line for every debit, and saves it, whether its run succeeds or fails', async () => {
    // Prepare: a successful agent and one whose run raises (it reads a key the owner never stored)
    const sleeper = await createAgent(owner.token, 'ledger-sleeper', SLEEPING_AGENT);
    const failing = await createAgent(owner.token, 'ledger-failing', AGENT_LEAKS_KEY);
    const caller = await createUser(platform, { alias: 'ledger-caller', credits: 10 });
    const { db } = platform.running.ports;
    // Act
    const chats = [];
    for (const agentId of [sleeper, failing]) {
      const res = await fetch(`${platform.url}/stream/agent/${agentId}/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${caller.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: '0' }),
      });
      chats.push({ agentId, requestId: res.headers.get('x-request-id')!, conversationId: res.headers.get('x-conversation-id')!, body: await res.text() });
    }
    const balance = await credits(caller.token);
    const ledger = await db.doc.send(
      new QueryCommand({
        TableName: db.table('credit-ledger'),
        KeyConditionExpression: 'userId = :u',
        ExpressionAttributeValues: { ':u': caller.userId },
        ConsistentRead: true,
      }),
    );
    const records = await Promise.all(chats.map((c) => platform.api('GET', `/logs/${c.requestId}`, { token: caller.token })));
    const conversations = await Promise.all(
      chats.map((c) => platform.api('GET', `/agent/${c.agentId}/conversation/${c.conversationId}`, { token: caller.token })),
    );
    // Assess
    expect(chats[0]!.body).not.toContain('__ERROR__');
    expect(chats[1]!.body).toContain('__ERROR__');
    const used = records.map((r) => r.body.data.creditsUsed as number);
    expect(records.map((r) => r.body.data.status)).toEqual(['success', 'error']);
    expect(balance).toBe(round4(10 - used[0]! - used[1]!));
    for (const [i, chat] of chats.entries()) {
      const lines = (ledger.Items ?? []).filter((e) => e['requestId'] === chat.requestId).map((e) => e['amount'] as number);
      // The first credit's line is there, and the lines add up to what the record says was used.
      expect(lines).toContain(-1);
      expect(round4(lines.reduce((a, b) => a + b, 0))).toBe(-used[i]!);
      expect(conversations[i]!.status).toBe(200);
      expect(JSON.stringify(conversations[i]!.body.data)).toContain('"role":"user"');
    }
  });

  it('answers a rate-limited chat 429, with its agent read alongside the limiter, and bills, runs and saves nothing', async () => {
    // Prepare: the caller's chat window already used up
    const agentId = await createAgent(owner.token, 'limited-chat', SLEEPING_AGENT);
    const caller = await createUser(platform, { alias: 'limited-caller', credits: 5 });
    const { db, config, rateLimiter } = platform.running.ports;
    platform.clock.alignToWindow(60_000);
    for (let i = 0; i < 60; i++) await rateLimiter.consume(`agent-chat:user:${caller.userId}`, { limit: 60, windowSec: 60 });
    // Act
    const { result: limited, calls } = await recordStoreCalls(db, config.TABLE_PREFIX, () =>
      platform.api('POST', `/stream/agent/${agentId}/chat`, { token: caller.token, body: { prompt: '0' } }),
    );
    const balance = await credits(caller.token);
    // Assess
    expect(limited.status).toBe(429);
    expect(balance).toBe(5);
    // The caller's account is read with its token (one batch), then the limiter and the agent together.
    expect(callsOn(calls, 'rate-limits', 'agents', 'users', 'credit-ledger', 'keys', 'conversations', 'usage-logs')).toEqual([
      'users.BatchGetItem',
      'rate-limits.UpdateItem',
      'agents.GetItem',
    ]);
    expect(overlapped(callOf(calls, 'rate-limits.UpdateItem'), callOf(calls, 'agents.GetItem'))).toBe(true);
  });

  it('stops a chat that runs past the balance, ends its stream with INSUFFICIENT_CREDITS, and never takes the balance below zero', async () => {
    // Prepare: a public agent of a well-funded owner, its runtime warmed by the owner's own chat
    const agentId = await createAgent(owner.token, 'meter-sleeper', SLEEPING_AGENT);
    await streamChat(platform, owner.token, agentId, '0');
    const caller = await createUser(platform, { alias: 'meter-caller', credits: 2 });
    // Act: the agent would sleep 20 s; 1 credit covers the first second, the other one more second at 1024 MB
    const startedAt = performance.now();
    const body = await streamChat(platform, caller.token, agentId, '20');
    const elapsed = performance.now() - startedAt;
    const balance = await credits(caller.token);
    const logs = await platform.api('GET', `/logs?resourceId=${agentId}`, { token: caller.token });
    // Assess
    const marker = /__ERROR__(\{.*?\})__/.exec(body);
    expect(marker).not.toBeNull();
    expect(JSON.parse(marker![1]!)).toMatchObject({ code: 'INSUFFICIENT_CREDITS', message: expect.stringContaining('stopped') });
    expect(body).toMatch(/__METRICS__\{.*\}$/);
    expect(body).not.toContain('awake');
    expect(elapsed).toBeLessThan(10_000);
    expect(balance).toBeGreaterThanOrEqual(0);
    const record = logs.body.data.logs[0];
    expect(record).toMatchObject({ status: 'error', error: { code: 'INSUFFICIENT_CREDITS' } });
    expect(balance).toBe(round4(2 - record.creditsUsed));
  });

  it('keeps a key out of every error, usage record, log line and DATA_DIR file, and out of results for callers who are not its owner', async () => {
    // Prepare
    const keyOwner = await createUser(platform, { alias: 'leak-owner', credits: 200 });
    const caller = await createUser(platform, { alias: 'leak-caller', credits: 200 });
    await platform.api('POST', '/keys/store', { token: keyOwner.token, body: { serviceName: 'svc', apiKey: SECRET } });
    const raising = await createAction(keyOwner.token, { sourceCode: RAISES_KEY, keysNeeded: ['svc'] });
    const returning = await createAction(keyOwner.token, { sourceCode: RETURNS_KEY, keysNeeded: ['svc'] });
    const agentId = await createAgent(keyOwner.token, 'leaky-agent', AGENT_LEAKS_KEY);
    // Act
    const ownRaise = await platform.api('POST', `/action/${raising}`, { token: keyOwner.token, body: {} });
    const foreignRaise = await platform.api('GET', `/action/python-128mb/${raising}`, { token: caller.token });
    const foreignReturn = await platform.api('POST', `/action/${returning}`, { token: caller.token, body: {} });
    const ownReturn = await platform.api('POST', `/action/${returning}`, { token: keyOwner.token, body: {} });
    const foreignChat = await streamChat(platform, caller.token, agentId, 'tell me');
    const ownChat = await platform.api('POST', `/agent/${agentId}/chat`, { token: keyOwner.token, body: { prompt: 'tell me' } });
    const ownConversations = await platform.api('GET', `/agent/${agentId}/conversations`, { token: keyOwner.token });
    const conversationId = ownConversations.body.data.conversations[0].conversationId;
    const ownConversation = await platform.api('GET', `/agent/${agentId}/conversation/${conversationId}`, { token: keyOwner.token });
    const usage = await platform.running.ports.db.doc.send(new ScanCommand({ TableName: platform.running.ports.db.table('usage-logs'), ConsistentRead: true }));
    // Assess: errors are scrubbed for everyone, results for the caller who is not the owner
    expect(ownRaise.status).toBe(500);
    expect(ownRaise.body.error).toEqual({ code: 'ACTION_EXECUTION_FAILED', message: 'The handler raised ValueError: [REDACTED] (line 2).' });
    expect(foreignRaise.body.error.message).toBe('The handler raised ValueError: [REDACTED] (line 2).');
    expect(foreignReturn.body.data).toEqual({
      statusCode: 200,
      body: { leak: '[REDACTED]', nested: [{ again: 'key is [REDACTED]' }] },
      headers: { 'x-leak': '[REDACTED]' },
    });
    expect(ownReturn.body.data.body.leak).toBe(SECRET);
    expect(foreignChat).toContain('the key is [REDACTED], bye');
    expect(foreignChat).toMatch(/__ERROR__\{"code":"AGENT_EXECUTION_FAILED","message":"ValueError: boom \[REDACTED\]"\}__/);
    expect(ownChat.body.error).toEqual({ code: 'AGENT_EXECUTION_FAILED', message: 'ValueError: boom [REDACTED]' });
    expect(ownConversation.body.data.conversation.messages.map((m: { content: string }) => m.content)).toEqual(['tell me', 'the key is [REDACTED], bye']);
    const leakRecords = (usage.Items ?? []).filter((r) => [raising, returning, agentId].includes(r['resourceId']));
    expect(leakRecords).toHaveLength(6);
    const answers = [ownRaise.text, foreignRaise.text, foreignReturn.text, foreignChat, ownChat.text, ownConversation.text, JSON.stringify(usage.Items)];
    for (const text of [...answers, ...logLines]) expect(text).not.toContain(SECRET);
    // Assess: nothing under DATA_DIR holds the key in plain text
    const entries = await readdir(platform.dataDir, { withFileTypes: true, recursive: true });
    for (const file of entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name))) {
      expect((await readFile(file)).includes(SECRET), file).toBe(false);
    }
  });
});

import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type ApiResponse, type TestPlatform } from '../support/local-platform.ts';
import { callOf, callsOn, overlapped, recordStoreCalls } from '../support/store-calls.ts';

/** The runtime's own plain-Python test agents: the same interface as Strands, no framework needed. */
const fixture = (name: string) => readFileSync(new URL(`../../python-runtime/tests/fixtures/${name}.py`, import.meta.url), 'utf8');
const ECHO = fixture('echo_agent');
const HISTORY = fixture('history_agent');
const TOOLS = fixture('tool_agent');
const RAISING = fixture('raising_agent');
const SLEEPING = fixture('sleeping_agent');
const KEY_NAMES = `import json


class KeyAgent:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        keys = json.loads(SVC_KEYS_JSON)
        yield {"data": "keys=" + ",".join(sorted(keys)) + " len=" + str(len(keys.get("openai", "")))}


def create_agent():
    return KeyAgent(), []
`;
const CALLS_BEDROCK = `import boto3


class BedrockAgent:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        client = boto3.client("bedrock-runtime", region_name="us-east-1")
        client.converse(modelId="amazon.nova-lite-v1:0", messages=[{"role": "user", "content": [{"text": prompt}]}])
        yield {"data": "unreachable without credentials"}


def create_agent():
    return BedrockAgent(), []
`;
const NEEDS_STRANDS = `from strands import Agent


def create_agent():
    return Agent(), []
`;

interface StreamedChat {
  status: number;
  headers: Headers;
  chunks: { text: string; at: number }[];
  body: string;
}

async function streamChat(platform: TestPlatform, token: string, agentId: string, body: Record<string, unknown>): Promise<StreamedChat> {
  const res = await fetch(`${platform.url}/stream/agent/${agentId}/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const chunks: { text: string; at: number }[] = [];
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>)
    chunks.push({ text: decoder.decode(chunk, { stream: true }), at: performance.now() });
  return { status: res.status, headers: res.headers, chunks, body: chunks.map((c) => c.text).join('') };
}

function metaOf(body: string): { conversationId: string; agentId: string } {
  const match = /^__META__(\{.*?\})__/.exec(body);
  if (!match?.[1]) throw new Error(`stream does not start with __META__: ${body.slice(0, 80)}`);
  return JSON.parse(match[1]);
}

function metricsOf(body: string): { totalCycles: number; totalTokens: number; toolsUsed: string[]; durationMs: number } {
  const match = /__METRICS__(\{.*\})$/.exec(body);
  if (!match?.[1]) throw new Error(`stream does not end with __METRICS__: ${body.slice(-120)}`);
  return JSON.parse(match[1]);
}

describe('agents over HTTP with the real Python runtime', () => {
  let platform: TestPlatform;
  let owner: { userId: string; token: string };
  let other: { userId: string; token: string };

  async function createAgent(token: string, agentName: string, sourceCode: string, extra: Record<string, unknown> = {}) {
    const res = await platform.api('POST', '/agent/create', { token, body: { agentName, description: `${agentName} for tests`, sourceCode, ...extra } });
    if (res.status !== 200) throw new Error(`create ${agentName}: ${res.status} ${res.text}`);
    return res.body.data as { agentId: string; agentName: string; endpointUrl: string };
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
    owner = await createUser(platform, { alias: 'agent-owner', credits: 1000 });
    other = await createUser(platform, { alias: 'agent-other', credits: 1000 });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('creates an agent with defaults, and shows it by id, by slug and in listings', async () => {
    // Act
    const created = await platform.api('POST', '/agent/create', {
      token: owner.token,
      body: { agentName: 'echo-bot', description: 'echoes', sourceCode: ECHO },
    });
    const agentId = created.body.data.agentId;
    const byId = await platform.api('GET', `/agent/${agentId}`, { token: owner.token });
    const bySlug = await platform.api('GET', '/agent/s/agent-owner/echo-bot', { token: owner.token });
    const list = await platform.api('GET', '/agent/list', { token: owner.token });
    // Assess
    expect(created.status).toBe(200);
    expect(created.body.success).toBe(true);
    expect(created.body.data).toMatchObject({
      agentName: 'echo-bot',
      status: 'active',
      visibility: 'private',
      runtime: 'python3.12',
      memoryMb: 1024,
      timeoutSec: 300,
      endpointUrl: `${platform.url}/stream/agent/${agentId}/chat`,
    });
    expect(agentId).toMatch(/^[0-9a-f-]{36}$/);
    expect(byId.body.data).toMatchObject({ agentId, sourceCode: ECHO, slug: 'agent-owner/echo-bot', invocationsPerMonth: 0 });
    expect(bySlug.body.data.agentId).toBe(agentId);
    expect(list.body.data.agents.map((a: { agentId: string }) => a.agentId)).toContain(agentId);
    expect(list.body.data.agents[0]).not.toHaveProperty('sourceCode');
  });

  it('refuses bad input: every source violation with its line, bad names, duplicates, no alias', async () => {
    // Prepare
    const noAlias = await createUser(platform);
    const bad = 'import os\nimport subprocess\n\ndef create_agent():\n    return eval("1"), []\n';
    // Act
    const violations = await platform.api('POST', '/agent/create', { token: owner.token, body: { agentName: 'bad-src', description: 'x', sourceCode: bad } });
    const badName = await platform.api('POST', '/agent/create', { token: owner.token, body: { agentName: 'Bad_Name', description: 'x', sourceCode: ECHO } });
    await createAgent(owner.token, 'dup-name', ECHO);
    const duplicate = await platform.api('POST', '/agent/create', { token: owner.token, body: { agentName: 'dup-name', description: 'x', sourceCode: ECHO } });
    const aliasless = await platform.api('POST', '/agent/create', { token: noAlias.token, body: { agentName: 'mine', description: 'x', sourceCode: ECHO } });
    // Assess
    expect(violations.status).toBe(400);
    expect(violations.body).toMatchObject({ success: false, error: { code: 'INVALID_PARAMETERS' } });
    expect(violations.body.error.message).toMatch(/line 1: .*os/);
    expect(violations.body.error.message).toMatch(/line 2: .*subprocess/);
    expect(violations.body.error.message).toMatch(/line 5: .*eval/);
    expect(badName.status).toBe(400);
    expect(badName.body.error.message).toContain('agentName');
    expect(duplicate.status).toBe(409);
    expect(aliasless.status).toBe(403);
    expect(aliasless.body.error.code).toBe('ALIAS_REQUIRED');
  });

  it('checks a source without saving it: the problems create would refuse, each at its line', async () => {
    // Prepare
    const bad = 'import os\nimport subprocess\n\ndef create_agent():\n    return eval("1"), []\n';
    const before = await platform.api('GET', '/agent/list?limit=100', { token: owner.token });
    // Act
    const refused = await platform.api('POST', '/agent/check', { token: owner.token, body: { sourceCode: bad } });
    const fine = await platform.api('POST', '/agent/check', { token: owner.token, body: { sourceCode: ECHO } });
    const textAsVoice = await platform.api('POST', '/agent/check', { token: owner.token, body: { sourceCode: ECHO, agentType: 'bidi' } });
    const anonymous = await platform.api('POST', '/agent/check', { body: { sourceCode: ECHO } });
    const empty = await platform.api('POST', '/agent/check', { token: owner.token, body: { sourceCode: '' } });
    const after = await platform.api('GET', '/agent/list?limit=100', { token: owner.token });
    // Assess
    expect(refused.status).toBe(200);
    expect(refused.body).toMatchObject({ success: true, data: { ok: false } });
    const problems = refused.body.data.problems as { line: number; message: string }[];
    expect(problems).toContainEqual({ line: 1, message: expect.stringContaining('os') });
    expect(problems).toContainEqual({ line: 2, message: expect.stringContaining('subprocess') });
    expect(problems).toContainEqual({ line: 5, message: expect.stringContaining('eval') });
    expect(fine.body.data).toEqual({ ok: true, problems: [] });
    expect(textAsVoice.body.data).toEqual({ ok: false, problems: [{ line: 1, message: 'must define create_bidi_agent() at the top level' }] });
    expect(anonymous.status).toBe(401);
    expect(empty.status).toBe(400);
    expect(after.body.data.count).toBe(before.body.data.count);
  });

  it('keeps private agents private and shows public ones to everyone', async () => {
    // Prepare
    const priv = await createAgent(owner.token, 'private-one', ECHO);
    const pub = await createAgent(owner.token, 'public-one', ECHO, { visibility: 'public' });
    // Act
    const foreignPrivate = await platform.api('GET', `/agent/${priv.agentId}`, { token: other.token });
    const foreignPublic = await platform.api('GET', `/agent/${pub.agentId}`, { token: other.token });
    const anonymousPublic = await platform.api('GET', `/agent/${pub.agentId}`);
    const anonymousPrivate = await platform.api('GET', `/agent/${priv.agentId}`);
    const anonymousList = await platform.api('GET', '/agent/list?visibility=all');
    const foreignChat = await platform.api('POST', `/agent/${priv.agentId}/chat`, { token: other.token, body: { prompt: 'hi' } });
    const unknown = await platform.api('GET', '/agent/00000000-0000-4000-8000-000000000000', { token: owner.token });
    // Assess
    expect(foreignPrivate.status).toBe(403);
    expect(foreignPrivate.body.error.code).toBe('ACCESS_DENIED');
    expect(foreignPublic.status).toBe(200);
    expect(anonymousPublic.status).toBe(200);
    expect(anonymousPrivate.status).toBe(403);
    const listed = anonymousList.body.data.agents.map((a: { agentId: string; visibility: string }) => a);
    expect(listed.map((a: { agentId: string }) => a.agentId)).toContain(pub.agentId);
    expect(listed.every((a: { visibility: string }) => a.visibility === 'public')).toBe(true);
    expect(foreignChat.status).toBe(403);
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('AGENT_NOT_FOUND');
  });

  it('updates only the supplied fields, re-checks source, and lets only the owner change it', async () => {
    // Prepare
    const agent = await createAgent(owner.token, 'updatable', ECHO);
    // Act
    const renamed = await platform.api('PUT', '/agent/update', {
      token: owner.token,
      body: { agentId: agent.agentId, agentName: 'updated-name', visibility: 'public' },
    });
    const badSource = await platform.api('POST', '/agent/update', { token: owner.token, body: { agentId: agent.agentId, sourceCode: 'import socket\n' } });
    const foreign = await platform.api('PUT', '/agent/update', { token: other.token, body: { agentId: agent.agentId, description: 'mine now' } });
    const after = await platform.api('GET', `/agent/${agent.agentId}`, { token: owner.token });
    // Assess
    expect(renamed.status).toBe(200);
    expect(badSource.status).toBe(400);
    expect(badSource.body.error.message).toContain('line 1');
    expect(foreign.status).toBe(403);
    expect(after.body.data).toMatchObject({ agentName: 'updated-name', visibility: 'public', description: 'updatable for tests', sourceCode: ECHO });
    expect((await platform.api('GET', '/agent/s/agent-owner/updatable')).status).toBe(404);
    expect((await platform.api('GET', '/agent/s/agent-owner/updated-name')).status).toBe(200);
  });

  it('soft-deletes: chat answers 410, the owner restores it, chat works again', async () => {
    // Prepare
    const agent = await createAgent(owner.token, 'deletable', ECHO);
    // Act
    const deleted = await platform.api('DELETE', '/agent/delete', { token: owner.token, body: { agentId: agent.agentId } });
    const chatDeleted = await platform.api('POST', `/agent/${agent.agentId}/chat`, { token: owner.token, body: { prompt: 'hi' } });
    const listedDeleted = await platform.api('GET', '/agent/list?status=deleted', { token: owner.token });
    const restored = await platform.api('PUT', '/agent/update', { token: owner.token, body: { agentId: agent.agentId, status: 'active' } });
    const chatRestored = await platform.api('POST', `/agent/${agent.agentId}/chat`, { token: owner.token, body: { prompt: 'back' } });
    // Assess
    expect(deleted.status).toBe(200);
    expect(chatDeleted.status).toBe(410);
    expect(chatDeleted.body).toMatchObject({ success: false, error: { code: 'AGENT_DELETED' } });
    expect(listedDeleted.body.data.agents.map((a: { agentId: string }) => a.agentId)).toContain(agent.agentId);
    expect(restored.body.data.status).toBe('active');
    expect(chatRestored.status).toBe(200);
    expect(chatRestored.body.data.response).toBe('echo: back');
  });

  it('streams a chat: META first, the text, METRICS last, and stores the conversation', async () => {
    // Prepare
    const agent = await createAgent(owner.token, 'streamer', ECHO);
    // Act
    const chat = await streamChat(platform, owner.token, agent.agentId, { prompt: 'hello there world' });
    const meta = metaOf(chat.body);
    const conversation = await platform.api('GET', `/agent/${agent.agentId}/conversation/${meta.conversationId}`, { token: owner.token });
    const otherSpelling = await platform.api('GET', `/agent/${agent.agentId}/conversations/${meta.conversationId}`, { token: owner.token });
    const listed = await platform.api('GET', `/agent/${agent.agentId}/conversations`, { token: owner.token });
    const recent = await platform.api('GET', '/agent/conversations/recent', { token: owner.token });
    // Assess
    expect(chat.status).toBe(200);
    expect(chat.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(chat.headers.get('x-conversation-id')).toBe(meta.conversationId);
    expect(meta.agentId).toBe(agent.agentId);
    expect(chat.body).toContain('echo: hello there world');
    expect(metricsOf(chat.body)).toMatchObject({ totalCycles: 1, totalTokens: 7, toolsUsed: [] });
    expect(conversation.body.data.conversation).toMatchObject({
      conversationId: meta.conversationId,
      agentId: agent.agentId,
      userId: owner.userId,
      title: 'hello there world',
      messageCount: 2,
      messages: [
        { role: 'user', content: 'hello there world', timestamp: expect.any(Number) },
        { role: 'assistant', content: 'echo: hello there world', timestamp: expect.any(Number) },
      ],
    });
    expect(otherSpelling.body.data).toEqual(conversation.body.data);
    expect(listed.body.data.conversations).toEqual([
      expect.objectContaining({ conversationId: meta.conversationId, title: 'hello there world', messageCount: 2 }),
    ]);
    expect(recent.body.data.conversations[0].conversationId).toBe(meta.conversationId);
  });

  it('delivers the first chunk long before a slow agent finishes', async () => {
    // Prepare
    const agent = await createAgent(owner.token, 'slowpoke', SLEEPING);
    // Act
    const chat = await streamChat(platform, owner.token, agent.agentId, { prompt: '1.5' });
    // Assess: the chunk carrying "sleeping" arrived at least a second before the stream ended
    const first = chat.chunks.find((c) => c.text.includes('sleeping'));
    const last = chat.chunks.at(-1)!;
    expect(first).toBeDefined();
    expect(last.at - first!.at).toBeGreaterThan(1000);
    expect(chat.body).toContain('sleeping awake');
  });

  it("continues a conversation with its history, and refuses someone else's conversation", async () => {
    // Prepare
    const agent = await createAgent(owner.token, 'historian', HISTORY, { visibility: 'public' });
    const first = await platform.api('POST', `/agent/${agent.agentId}/chat`, { token: owner.token, body: { prompt: 'one' } });
    const conversationId = first.body.data.conversationId;
    // Act
    const second = await platform.api('POST', `/agent/${agent.agentId}/chat`, { token: owner.token, body: { prompt: 'two', conversationId } });
    const third = await streamChat(platform, owner.token, agent.agentId, { prompt: 'three', conversationId });
    const stolen = await platform.api('POST', `/agent/${agent.agentId}/chat`, { token: other.token, body: { prompt: 'peek', conversationId } });
    const unknown = await platform.api('POST', `/agent/${agent.agentId}/chat`, {
      token: owner.token,
      body: { prompt: 'x', conversationId: '00000000-0000-4000-8000-000000000000' },
    });
    const foreignRead = await platform.api('GET', `/agent/${agent.agentId}/conversation/${conversationId}`, { token: other.token });
    // Assess
    expect(first.body.data.response).toBe('history=0 roles=');
    expect(second.body.data).toMatchObject({ conversationId, response: 'history=2 roles=user,assistant' });
    expect(third.body).toContain('history=4 roles=user,assistant,user,assistant');
    expect(stolen.status).toBe(404);
    expect(stolen.body.error.code).toBe('CONVERSATION_NOT_FOUND');
    expect(unknown.status).toBe(404);
    expect(foreignRead.status).toBe(404);
  });

  it('marks tool starts once per tool and reports tools in the metrics', async () => {
    // Prepare
    const agent = await createAgent(owner.token, 'tool-user', TOOLS);
    // Act
    const chat = await streamChat(platform, owner.token, agent.agentId, { prompt: 'weather?' });
    // Assess
    expect(chat.body.match(/__TOOL__weather__/g)).toHaveLength(1);
    expect(chat.body.match(/__TOOL__calculator__/g)).toHaveLength(1);
    expect(chat.body).toContain('mcp entered');
    expect(metricsOf(chat.body).toolsUsed.sort()).toEqual(['calculator', 'weather']);
  });

  it('reports an agent that raises as AGENT_EXECUTION_FAILED, streamed and buffered, and keeps working', async () => {
    // Prepare
    const raising = await createAgent(owner.token, 'raiser', RAISING);
    const echo = await createAgent(owner.token, 'after-raise', ECHO);
    // Act
    const streamed = await streamChat(platform, owner.token, raising.agentId, { prompt: 'boom' });
    const buffered = await platform.api('POST', `/agent/${raising.agentId}/chat`, { token: owner.token, body: { prompt: 'boom' } });
    const next = await platform.api('POST', `/agent/${echo.agentId}/chat`, { token: owner.token, body: { prompt: 'still fine' } });
    // Assess
    const error = /__ERROR__(\{.*?\})__/.exec(streamed.body);
    expect(error).not.toBeNull();
    expect(JSON.parse(error![1]!)).toMatchObject({ code: 'AGENT_EXECUTION_FAILED', message: expect.any(String) });
    expect(metricsOf(streamed.body)).toBeDefined();
    expect(buffered.status).toBe(500);
    expect(buffered.body).toMatchObject({ success: false, error: { code: 'AGENT_EXECUTION_FAILED' } });
    expect(buffered.text).not.toMatch(/platform_runtime|Traceback/);
    expect(next.body.data.response).toBe('echo: still fine');
  });

  it('names a framework module that is not installed', async () => {
    const agent = await createAgent(owner.token, 'needs-strands', NEEDS_STRANDS);
    const res = await platform.api('POST', `/agent/${agent.agentId}/chat`, { token: owner.token, body: { prompt: 'hi' } });
    expect(res.status).toBe(500);
    expect(res.body.error.code).toBe('AGENT_EXECUTION_FAILED');
    expect(res.body.error.message).toContain('strands');
    // It names the interpreter to install the framework into (the one the runtime runs on).
    expect(res.body.error.message).toMatch(
      /strands is not installed for the runtime's Python \/\S+; install it with \/\S+ -m pip install -r layers\/python\/requirements\.txt/,
    );
  });

  it('answers a model call without AWS credentials with 400 AWS_CREDENTIALS_REQUIRED', async () => {
    const agent = await createAgent(owner.token, 'bedrock-caller', CALLS_BEDROCK);
    const res = await platform.api('POST', `/agent/${agent.agentId}/chat`, { token: owner.token, body: { prompt: 'hi' } });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ success: false, error: { code: 'AWS_CREDENTIALS_REQUIRED' } });
  });

  it('answers the browser GET variant with the prompt in the query and sessionId continuing it', async () => {
    // Prepare
    const agent = await createAgent(owner.token, 'browser-bot', HISTORY);
    const headers = { authorization: `Bearer ${owner.token}` };
    // Act
    const first = await fetch(`${platform.url}/stream/agent/${agent.agentId}/chat?prompt=${encodeURIComponent('hi there')}`, { headers });
    const firstBody = await first.text();
    const sessionId = first.headers.get('x-conversation-id')!;
    const second = await fetch(`${platform.url}/stream/agent/${agent.agentId}/chat?prompt=again&sessionId=${sessionId}`, { headers });
    const noPrompt = await fetch(`${platform.url}/stream/agent/${agent.agentId}/chat`, { headers });
    // Assess
    expect(firstBody).toContain('history=0');
    expect(await second.text()).toContain('history=2');
    expect(noPrompt.status).toBe(400);
  });

  it("injects the owner's keys as SVC_KEYS_JSON, debits credits and writes a usage record per chat", async () => {
    // Prepare
    const user = await createUser(platform, { alias: 'key-agent-owner', credits: 10 });
    await platform.api('POST', '/keys/store', { token: user.token, body: { serviceName: 'openai', apiKey: 'sk-agent-secret-123456' } });
    await platform.api('POST', '/keys/store', { token: user.token, body: { serviceName: 'github', apiKey: 'ghp-agent-secret-1234' } });
    const agent = await createAgent(user.token, 'key-reader', KEY_NAMES);
    const { db, config } = platform.running.ports;
    // Act
    const res = await platform.api('POST', `/agent/${agent.agentId}/chat`, { token: user.token, body: { prompt: 'which keys?' } });
    const { result: continued, calls } = await recordStoreCalls(db, config.TABLE_PREFIX, () =>
      streamChat(platform, user.token, agent.agentId, { prompt: 'and now?', conversationId: res.body.data.conversationId }),
    );
    const credits = await platform.api('GET', '/user/credits', { token: user.token });
    const logs = await platform.api('GET', `/logs?resourceId=${agent.agentId}`, { token: user.token });
    const info = await platform.api('GET', `/agent/${agent.agentId}`, { token: user.token });
    const conversation = await platform.api('GET', `/agent/${agent.agentId}/conversation/${res.body.data.conversationId}`, { token: user.token });
    // Assess
    expect(res.body.data.response).toBe('keys=github,openai len=22');
    expect(continued.body).toContain('keys=github,openai len=22');
    expect(credits.body.data.credits).toBe(8);
    expect(logs.body.data.logs).toHaveLength(2);
    expect(logs.body.data.logs[0]).toMatchObject({ resourceType: 'agent', status: 'success', creditsUsed: 1 });
    expect(logs.body.data.logs[1]).toMatchObject({ resourceType: 'agent', status: 'success', creditsUsed: 1 });
    expect(JSON.stringify(logs.body)).not.toContain('sk-agent-secret-123456');
    expect(info.body.data.invocationsPerMonth).toBe(2);
    expect(conversation.body.data.conversation.messages.map((m: { content: string }) => m.content)).toEqual([
      'which keys?',
      'keys=github,openai len=22',
      'and now?',
      'keys=github,openai len=22',
    ]);
    // A continued chat's store calls: each record read once, the keys in one read; the agent and the
    // conversation read together, the keys together with the debit.
    expect(callsOn(calls, 'agents', 'conversations', 'keys', 'credit-ledger', 'usage-logs').sort()).toEqual([
      'agents.GetItem',
      'agents.UpdateItem',
      'conversations.GetItem',
      'conversations.PutItem',
      'credit-ledger.PutItem',
      'keys.Query',
      'usage-logs.PutItem',
    ]);
    expect(overlapped(callOf(calls, 'agents.GetItem'), callOf(calls, 'conversations.GetItem'))).toBe(true);
    expect(overlapped(callOf(calls, 'keys.Query'), callOf(calls, 'users.UpdateItem'))).toBe(true);
  });

  it('refuses a chat without credits with 402 before running anything', async () => {
    const broke = await createUser(platform, { alias: 'broke-chatter' });
    const agent = await createAgent(owner.token, 'paid-public', ECHO, { visibility: 'public' });
    const res = await platform.api('POST', `/agent/${agent.agentId}/chat`, { token: broke.token, body: { prompt: 'hi' } });
    expect(res.status).toBe(402);
    expect(res.body.error.code).toBe('INSUFFICIENT_CREDITS');
    expect((await platform.api('GET', `/agent/${agent.agentId}/conversations`, { token: broke.token })).body.data.conversations).toEqual([]);
  });

  it('limits chat to 60 requests a minute per caller across the chat routes, then 429', async () => {
    // Prepare
    const chatter = await createUser(platform, { alias: 'rate-chatter', credits: 10 });
    const agent = await createAgent(owner.token, 'rate-target', ECHO, { visibility: 'public' });
    platform.clock.alignToWindow(60_000);
    // Act: invalid bodies are refused after the limit is counted, so no agent runs
    const calls = await Promise.all(Array.from({ length: 60 }, () => platform.api('POST', `/agent/${agent.agentId}/chat`, { token: chatter.token, body: {} })));
    const limited = await fetch(`${platform.url}/stream/agent/${agent.agentId}/chat?prompt=x`, { headers: { authorization: `Bearer ${chatter.token}` } });
    // Assess
    expect(calls.every((c) => c.status === 400)).toBe(true);
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
  });

  describe('listing pages and the per-owner limit', () => {
    interface Listed {
      agentId: string;
      slug: string;
      createdAt: number;
    }
    type ListPage = { agents: Listed[]; count: number; limit: number; offset: number; nextCursor: string | null };

    /** Every page of a listing, following `nextCursor`, or stepping `offset` until a page is empty when `byOffset` (bounded). */
    async function walk(path: string, token: string | undefined, byOffset = false) {
      const pages: ListPage[] = [];
      let cursor: string | null = null;
      for (let i = 0; i < 30; i++) {
        const paging: string = byOffset ? `&offset=${i * 20}` : cursor === null ? '' : `&cursor=${cursor}`;
        const res: ApiResponse = await platform.api('GET', `${path}${path.includes('?') ? '&' : '?'}limit=20${paging}`, token === undefined ? {} : { token });
        if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
        const page = res.body.data as ListPage;
        pages.push(page);
        if (byOffset ? page.agents.length === 0 : page.nextCursor === null) break;
        cursor = page.nextCursor;
      }
      return { pages, ids: pages.flatMap((page) => page.agents.map((a) => a.agentId)), sizes: pages.map((page) => page.agents.length) };
    }

    it('pages 120 agents by cursor and by offset, newest first, each once, filtered by status and visibility', async () => {
      // Prepare: every third agent public, every tenth deleted.
      const lister = await createUser(platform, { alias: 'agent-lister' });
      const created: { agentId: string; createdAt: number; isPublic: boolean; deleted: boolean }[] = [];
      for (let i = 0; i < 120; i++) {
        const isPublic = i % 3 === 0;
        const agent = (await createAgent(lister.token, `paged-${i}`, ECHO, isPublic ? { visibility: 'public' } : {})) as unknown as Listed;
        created.push({ agentId: agent.agentId, createdAt: agent.createdAt, isPublic, deleted: i % 10 === 9 });
      }
      for (const agent of created.filter((a) => a.deleted)) {
        await platform.api('DELETE', '/agent/delete', { token: lister.token, body: { agentId: agent.agentId } });
      }
      // The index's order: newest first, and (on dynalite) the higher id first within one millisecond.
      const newestFirst = [...created].sort((a, b) => b.createdAt - a.createdAt || (a.agentId < b.agentId ? 1 : -1));
      const ids = (keep: (a: (typeof created)[number]) => boolean) => newestFirst.filter(keep).map((a) => a.agentId);
      // Act
      const byCursor = await walk('/agent/list', lister.token);
      const byOffset = await walk('/agent/list', lister.token, true);
      const privateOnes = await walk('/agent/list?visibility=private', lister.token);
      const deleted = await walk('/agent/list?status=deleted', lister.token);
      const publicOnes = await walk('/agent/list', undefined);
      const resumed = await platform.api('GET', `/agent/list?limit=5&offset=3&cursor=${byCursor.pages[0]!.nextCursor}`, { token: lister.token });
      const foreign = await platform.api('GET', `/agent/list?limit=20&cursor=${byCursor.pages[0]!.nextCursor}`, { token: other.token });
      // Assess
      expect(byCursor.ids).toEqual(ids((a) => !a.deleted));
      expect(byCursor.sizes).toEqual([20, 20, 20, 20, 20, 8]);
      expect(byCursor.pages.map((page) => page.nextCursor === null)).toEqual([false, false, false, false, false, true]);
      expect(byCursor.pages[0]).toMatchObject({ count: 20, limit: 20, offset: 0 });
      expect(byOffset.ids).toEqual(byCursor.ids);
      expect(byOffset.pages[1]).toMatchObject({ count: 20, limit: 20, offset: 20 });
      expect(privateOnes.ids).toEqual(ids((a) => !a.deleted && !a.isPublic));
      expect(deleted.ids).toEqual(ids((a) => a.deleted));
      expect(publicOnes.ids.filter((id) => created.some((a) => a.agentId === id))).toEqual(ids((a) => !a.deleted && a.isPublic));
      expect(publicOnes.pages.flatMap((page) => page.agents).every((a) => a.slug !== null)).toBe(true);
      expect(new Set(publicOnes.ids).size).toBe(publicOnes.ids.length);
      expect(resumed.body.data.agents.map((a: Listed) => a.agentId)).toEqual(byCursor.ids.slice(23, 28));
      expect(foreign.status).toBe(400);
    });

    it('holds an owner to 500 agents under concurrent creates, deleted ones included, counting agents older than the counter', async () => {
      // Prepare: 495 agents written straight to the table, as before counters existed, so the racing
      // creates below also start the owner's counter from a count of them.
      const limited = await createUser(platform, { alias: 'agent-limited' });
      const ports = platform.running.ports;
      const now = Date.now();
      const seeded = Array.from({ length: 495 }, (_, i) => ({
        agentId: randomUUID(),
        ownerId: limited.userId,
        agentName: `held-${i}`,
        description: 'seeded',
        sourceCode: ECHO,
        agentType: 'text',
        visibility: 'private',
        sourceVisibility: 'visible',
        status: i === 0 ? 'deleted' : 'active',
        runtime: 'python3.12',
        memoryMb: 1024,
        timeoutSec: 300,
        initialPrompt: null,
        invocationMonth: null,
        invocationsThisMonth: 0,
        createdAt: now + i,
        updatedAt: now + i,
      }));
      for (let i = 0; i < seeded.length; i += 25) {
        const batch = seeded.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } }));
        await ports.db.doc.send(new BatchWriteCommand({ RequestItems: { [ports.db.table('agents')]: batch } }));
      }
      // Act
      const racing = await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          platform.api('POST', '/agent/create', { token: limited.token, body: { agentName: `racer-${i}`, description: 'race', sourceCode: ECHO } }),
        ),
      );
      const listed = await walk('/agent/list', limited.token);
      const listedDeleted = await walk('/agent/list?status=deleted', limited.token);
      // Assess
      expect(racing.filter((r) => r.status === 200)).toHaveLength(5);
      const refused = racing.filter((r) => r.status !== 200);
      expect(refused).toHaveLength(7);
      for (const r of refused) expect(r.body).toMatchObject({ success: false, error: { message: 'An account may own at most 500 agents.' } });
      expect(await ports.agents.countByOwner(limited.userId)).toBe(500);
      expect(listed.ids).toHaveLength(499);
      expect(new Set(listed.ids).size).toBe(499);
      expect(listedDeleted.ids).toHaveLength(1);
    });
  });
});

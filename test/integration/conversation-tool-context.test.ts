/**
 * A conversation keeps the agent's own message list (tool use and tool results too) from one chat
 * to the next, while its GET still shows the SPEC's text view. The agent is plain Python with
 * Strands' interface: it writes the blocks Strands writes into `self.messages`, and reports what
 * it was given.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const OPENAI_KEY = 'sk-tool-context-secret-123456';

/**
 * `report` answers with the list it was given; `fail` leaves junk in its list and raises; `wait:PORT:name`
 * first calls the loopback server at PORT (boto3, as a model call would be made) and does its turn
 * once the server answers; any other prompt does one tool-use turn, the key in its tool result.
 */
const TOOL_CONTEXT_AGENT = `import json
import boto3
from botocore.config import Config

KEYS = json.loads(SVC_KEYS_JSON)


class ToolContextAgent:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        if prompt == "report":
            given = json.dumps(self.messages)
            self.messages.append({"role": "user", "content": [{"text": prompt}]})
            self.messages.append({"role": "assistant", "content": [{"text": "reported"}]})
            yield {"data": given}
            return
        if prompt == "fail":
            self.messages.append({"role": "assistant", "content": [{"text": "half-done"}]})
            raise RuntimeError("the tool broke")
        if prompt.startswith("wait:"):
            port = prompt.split(":")[1]
            client = boto3.client("bedrock-runtime", endpoint_url="http://127.0.0.1:" + port, region_name="us-east-1",
                                  aws_access_key_id="barrier", aws_secret_access_key="barrier",
                                  config=Config(retries={"max_attempts": 1}))
            try:
                client.converse(modelId="barrier", messages=[{"role": "user", "content": [{"text": "go"}]}])
            except Exception:
                pass
        tool_id = "tool-" + prompt
        self.messages.append({"role": "user", "content": [{"text": prompt}]})
        self.messages.append({"role": "assistant", "content": [
            {"text": "Let me look."},
            {"toolUse": {"toolUseId": tool_id, "name": "lookup", "input": {"query": prompt}}}]})
        self.messages.append({"role": "user", "content": [
            {"toolResult": {"toolUseId": tool_id, "status": "success",
                            "content": [{"json": {"found": prompt, "key": KEYS.get("openai", "")}}]}}]})
        self.messages.append({"role": "assistant", "content": [{"text": "looked up " + prompt}]})
        yield {"current_tool_use": {"toolUseId": tool_id, "name": "lookup", "input": {}}}
        yield {"data": "looked up " + prompt}


def create_agent():
    return ToolContextAgent(), []
`;

interface Block {
  text?: string;
  toolUse?: { toolUseId: string; name: string; input: Record<string, unknown> };
  toolResult?: { toolUseId: string; status: string; content: { json: { found: string; key: string } }[] };
}
interface Message {
  role: 'user' | 'assistant';
  content: Block[];
}

/** The four messages of one tool-use turn, as the agent wrote them and as stored (the key scrubbed). */
function toolTurn(prompt: string): Message[] {
  const id = `tool-${prompt}`;
  return [
    { role: 'user', content: [{ text: prompt }] },
    { role: 'assistant', content: [{ text: 'Let me look.' }, { toolUse: { toolUseId: id, name: 'lookup', input: { query: prompt } } }] },
    { role: 'user', content: [{ toolResult: { toolUseId: id, status: 'success', content: [{ json: { found: prompt, key: '[REDACTED]' } }] } }] },
    { role: 'assistant', content: [{ text: `looked up ${prompt}` }] },
  ];
}

const REPORT_TURN: Message[] = [
  { role: 'user', content: [{ text: 'report' }] },
  { role: 'assistant', content: [{ text: 'reported' }] },
];

/** A loopback server that answers nobody until `count` requests are waiting: proof that that many runs are under way at once. */
async function startBarrier(count: number): Promise<{ server: Server; port: number }> {
  const waiting: ServerResponse[] = [];
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      waiting.push(response);
      if (waiting.length < count) return;
      for (const held of waiting.splice(0)) held.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('conversations keep the tool context', () => {
  let platform: TestPlatform;
  let owner: { userId: string; token: string };
  let agentId: string;
  let barrier: { server: Server; port: number };

  const chat = (prompt: string, conversationId?: string) =>
    platform.api('POST', `/agent/${agentId}/chat`, { token: owner.token, body: { prompt, ...(conversationId ? { conversationId } : {}) } });
  const report = async (conversationId: string): Promise<Message[]> => {
    const res = await chat('report', conversationId);
    if (res.status !== 200) throw new Error(`report: ${res.status} ${res.text}`);
    return JSON.parse(res.body.data.response as string) as Message[];
  };

  beforeAll(async () => {
    barrier = await startBarrier(2);
    // The barrier stands where a model server would: reachable because the operator lists it.
    platform = await startTestPlatform({ env: { AGENT_MODEL_HOSTS: `*.amazonaws.com,127.0.0.1:${barrier.port}` } });
    owner = await createUser(platform, { alias: 'context-owner', credits: 1000 });
    await platform.api('POST', '/keys/store', { token: owner.token, body: { serviceName: 'openai', apiKey: OPENAI_KEY } });
    const created = await platform.api('POST', '/agent/create', {
      token: owner.token,
      body: { agentName: 'tool-context', description: 'keeps its tool use', sourceCode: TOOL_CONTEXT_AGENT },
    });
    if (created.status !== 200) throw new Error(`create: ${created.status} ${created.text}`);
    agentId = created.body.data.agentId as string;
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
    await new Promise((resolve) => barrier.server.close(resolve));
  });

  it('gives the next chat the tool use and results of the last, scrubbed of keys, and GET still shows text', async () => {
    // Prepare
    const first = await chat('weather in Paris');
    const conversationId = first.body.data.conversationId as string;
    // Act
    const shown = await platform.api('GET', `/agent/${agentId}/conversation/${conversationId}`, { token: owner.token });
    const given = await report(conversationId);
    // Assess
    expect(first.body.data.response).toBe('looked up weather in Paris');
    expect(given).toEqual(toolTurn('weather in Paris'));
    expect(JSON.stringify(given)).not.toContain(OPENAI_KEY);
    const messages = shown.body.data.conversation.messages as Record<string, unknown>[];
    expect(messages.map(({ role, content }) => ({ role, content }))).toEqual([
      { role: 'user', content: 'weather in Paris' },
      { role: 'assistant', content: 'looked up weather in Paris' },
    ]);
    expect(messages.every((m) => Object.keys(m).sort().join() === 'content,role,timestamp')).toBe(true);
    expect(shown.text).not.toContain('toolUse');
  });

  it('leaves the stored list as it was when a run fails', async () => {
    // Prepare
    const first = await chat('train times');
    const conversationId = first.body.data.conversationId as string;
    // Act
    const failed = await chat('fail', conversationId);
    const given = await report(conversationId);
    const shown = await platform.api('GET', `/agent/${agentId}/conversation/${conversationId}`, { token: owner.token });
    // Assess
    expect(failed.status).toBe(500);
    expect(failed.body.error.code).toBe('AGENT_EXECUTION_FAILED');
    expect(given).toEqual(toolTurn('train times'));
    // The text view records the prompt that failed, as it always has.
    expect(shown.body.data.conversation.messages.map((m: { content: string }) => m.content).slice(0, 3)).toEqual([
      'train times',
      'looked up train times',
      'fail',
    ]);
  });

  it('continues a conversation stored before the list was kept from its text', async () => {
    // Prepare: a record as the platform wrote them before, text messages only.
    const conversationId = '6f1c7a52-4a43-4b8e-9d3e-0c6f0e1a2b3c';
    const now = Date.now();
    await platform.running.ports.conversations.save(
      {
        conversationId,
        agentId,
        userId: owner.userId,
        userAgent: `${owner.userId}#${agentId}`,
        title: 'old',
        messageCount: 2,
        createdAt: now,
        updatedAt: now,
      },
      [
        { role: 'user', content: 'old question', timestamp: now },
        { role: 'assistant', content: 'old answer', timestamp: now },
      ],
      null,
    );
    // Act
    const given = await report(conversationId);
    const after = await report(conversationId);
    // Assess
    const old: Message[] = [
      { role: 'user', content: [{ text: 'old question' }] },
      { role: 'assistant', content: [{ text: 'old answer' }] },
    ];
    expect(given).toEqual(old);
    expect(after).toEqual([...old, ...REPORT_TURN]);
  });

  it('keeps both turns of two chats that continue one conversation at once', async () => {
    // Prepare
    const first = await chat('start');
    const conversationId = first.body.data.conversationId as string;
    // Act: neither run ends before both have started, so both continue the same stored version.
    const [alpha, beta] = await Promise.all([chat(`wait:${barrier.port}:alpha`, conversationId), chat(`wait:${barrier.port}:beta`, conversationId)]);
    const given = await report(conversationId);
    // Assess
    expect([alpha.status, beta.status]).toEqual([200, 200]);
    const turns = [toolTurn(`wait:${barrier.port}:alpha`), toolTurn(`wait:${barrier.port}:beta`)];
    expect([
      [...toolTurn('start'), ...turns[0]!, ...turns[1]!],
      [...toolTurn('start'), ...turns[1]!, ...turns[0]!],
    ]).toContainEqual(given);
  });

  it('keeps a list too large for the record in the blob store and restores it whole', async () => {
    // Prepare: four turns of 20 KB prompts (each about 120 KB of messages), past the record's inline budget.
    const prompts = Array.from({ length: 4 }, (_, i) => `${i}:${'x'.repeat(20_000)}`);
    let conversationId: string | undefined;
    for (const prompt of prompts) conversationId = (await chat(prompt, conversationId)).body.data.conversationId as string;
    // Act
    const given = await report(conversationId!);
    const record = await platform.running.ports.conversations.get(conversationId!);
    // Assess
    expect(given).toEqual(prompts.flatMap(toolTurn));
    expect(record?.frameworkMessages).toBeUndefined();
    expect(record?.frameworkMessagesKey).toMatch(/^conversations\//);
  });
});

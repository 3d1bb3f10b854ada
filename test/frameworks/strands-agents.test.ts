import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { chat, createAgent, describeWithStrands, STRANDS_PYTHON } from './strands.ts';

/**
 * Strands agents as users write them, run by the real SDK on a real local platform: every form of
 * MCP client the SDK allows, `@tool`, a vended tool, and tool context across chats. The model is a
 * deterministic `strands.models.Model` written in the agent source; it streams the Bedrock-style
 * events Strands parses (messageStart, contentBlockStart/Delta/Stop with toolUse, messageStop,
 * metadata), so everything else (event loop, tool registry, MCP client, runner) is the real thing.
 */

/**
 * The model: when the last message carries a tool result it answers with it; when an earlier turn
 * of the conversation used a tool it says which (tool context survived); otherwise it calls the tool
 * it was built for, if the agent offers it, and says which tools it saw when not.
 */
const SCRIPTED_MODEL = `import json
from strands import Agent, tool
from strands.models import Model


def result_text(result):
    return "".join(block.get("text", json.dumps(block.get("json"))) for block in result["content"])


class Scripted(Model):
    def __init__(self, call, args):
        self.call = call
        self.args = args
        self.config = {}

    def update_config(self, **config):
        self.config.update(config)

    def get_config(self):
        return self.config

    async def structured_output(self, output_model, prompt, system_prompt=None, **kwargs):
        yield {}

    def answer(self, messages, names):
        results = [b["toolResult"] for b in messages[-1]["content"] if "toolResult" in b]
        if results:
            return None, "result: " + result_text(results[0])
        uses = [b["toolUse"] for m in messages for b in m["content"] if "toolUse" in b]
        earlier = [b["toolResult"] for m in messages for b in m["content"] if "toolResult" in b]
        if uses and earlier:
            return None, "remembered: " + uses[0]["name"] + json.dumps(uses[0]["input"]) + " -> " + result_text(earlier[0])
        if self.call in names:
            return self.call, None
        return None, "no tool " + self.call + "; tools: " + ",".join(sorted(names))

    async def stream(self, messages, tool_specs=None, system_prompt=None, **kwargs):
        call, text = self.answer(messages, [spec["name"] for spec in tool_specs or []])
        yield {"messageStart": {"role": "assistant"}}
        if call:
            yield {"contentBlockStart": {"start": {"toolUse": {"toolUseId": "call-1", "name": call}}}}
            yield {"contentBlockDelta": {"delta": {"toolUse": {"input": json.dumps(self.args)}}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "tool_use"}}
        else:
            yield {"contentBlockDelta": {"delta": {"text": text}}}
            yield {"contentBlockStop": {}}
            yield {"messageStop": {"stopReason": "end_turn"}}
        yield {"metadata": {"usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5},
                            "metrics": {"latencyMs": 1}}}
`;

/** A hosted MCP server of the owner: the agent reaches it at the platform's MCP URL, and the egress proxy adds the run's credential. */
const SHOUTER = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { z } = require('zod');

function createMcpServer() {
  const server = new McpServer({ name: 'shouter', version: '1.0.0' });
  server.registerTool('shout', { description: 'Upper-cases text', inputSchema: { text: z.string() } }, async ({ text }) => ({
    content: [{ type: 'text', text: text.toUpperCase() }],
  }));
  return server;
}

module.exports = { createMcpServer };
`;

/** An agent source: the model, an MCP client factory for the hosted server, and `body` (which defines create_agent). */
function mcpAgent(mcpUrl: string, body: string): string {
  return `${SCRIPTED_MODEL}from strands.tools.mcp import MCPClient
from mcp.client.streamable_http import streamablehttp_client

MCP_URL = ${JSON.stringify(mcpUrl)}


def shouter():
    return MCPClient(lambda: streamablehttp_client(MCP_URL))


def model():
    return Scripted("shout", {"text": "hello mcp"})


${body}`;
}

const MCP_FORMS = {
  'the SPEC form: Agent(tools=[client]) and the client returned': `def create_agent():
    client = shouter()
    return Agent(model=model(), tools=[client], callback_handler=None), [client]
`,
  "Strands' classic form: client.start(), tools=client.list_tools_sync(), the client returned": `def create_agent():
    client = shouter()
    client.start()
    return Agent(model=model(), tools=client.list_tools_sync(), callback_handler=None), [client]
`,
  'a client returned but not given to the Agent': `def create_agent():
    client = shouter()
    return Agent(model=model(), callback_handler=None), [client]
`,
  'Agent(tools=[client]) and no client returned': `def create_agent():
    client = shouter()
    return Agent(model=model(), tools=[client], callback_handler=None), []
`,
} as const;

describeWithStrands('Strands agents as they are written (real SDK)', () => {
  let platform: TestPlatform;
  let owner: { userId: string; token: string };
  let mcpUrl: string;

  beforeAll(async () => {
    platform = await startTestPlatform({ python: STRANDS_PYTHON! });
    owner = await createUser(platform, { alias: 'strands-owner', credits: 1000 });
    const server = await platform.api('POST', '/mcp-admin/create', {
      token: owner.token,
      body: { serverName: 'shouter', description: 'shouts', sourceCode: SHOUTER },
    });
    if (server.status !== 200) throw new Error(`create MCP server: ${server.status} ${server.text}`);
    mcpUrl = `${platform.url}/mcp/${server.body.data.serverId as string}`;
  });
  afterAll(async () => {
    await platform?.stop({ removeData: true });
  });

  it.each(Object.entries(MCP_FORMS))('runs the MCP tool with %s', async (form, body) => {
    // Prepare
    const agentId = await createAgent(platform, owner.token, `mcp-${Object.keys(MCP_FORMS).indexOf(form)}`, mcpAgent(mcpUrl, body));

    // Act
    const res = await chat(platform, owner.token, agentId, 'shout it');

    // Assess: the model saw the server's tool, called it, and answered with what the server returned
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.response).toBe('result: HELLO MCP');
    expect(res.body.data.metrics.toolsUsed).toEqual(['shout']);
  });

  it('runs an MCP client in an interpreter that also has trio (httpcore imports it, trio loads ctypes)', async () => {
    // Prepare: the condition of the case is real in this interpreter
    const trio = spawnSync(STRANDS_PYTHON!, ['-c', 'import trio, httpcore'], { encoding: 'utf8' });
    expect(trio.status, trio.stderr).toBe(0);
    const agentId = await createAgent(platform, owner.token, 'mcp-trio', mcpAgent(mcpUrl, MCP_FORMS['Agent(tools=[client]) and no client returned']));

    // Act: the first chat is the first httpx client of the run, made after the sandbox is in place
    const res = await chat(platform, owner.token, agentId, 'shout it');

    // Assess
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.response).toBe('result: HELLO MCP');
  });

  it('streams an MCP tool call with its marker, text and metrics', async () => {
    // Prepare
    const agentId = await createAgent(
      platform,
      owner.token,
      'mcp-stream',
      mcpAgent(mcpUrl, MCP_FORMS['the SPEC form: Agent(tools=[client]) and the client returned']),
    );

    // Act
    const res = await fetch(`${platform.url}/stream/agent/${agentId}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'shout it' }),
    });
    const body = await res.text();

    // Assess
    expect(res.status).toBe(200);
    expect(body).toMatch(/^__META__\{.*?\}__/);
    expect(body).toContain('__TOOL__shout__');
    expect(body).toContain('result: HELLO MCP');
    expect(body).not.toContain('__ERROR__');
    expect(JSON.parse(/__METRICS__(\{.*\})$/.exec(body)![1]!).toolsUsed).toEqual(['shout']);
  });

  it('runs a @tool function', async () => {
    // Prepare
    const agentId = await createAgent(
      platform,
      owner.token,
      'at-tool',
      `${SCRIPTED_MODEL}
@tool
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


def create_agent():
    return Agent(model=Scripted("add", {"a": 2, "b": 3}), tools=[add], callback_handler=None), []
`,
    );

    // Act
    const res = await chat(platform, owner.token, agentId, 'add them');

    // Assess
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.response).toBe('result: 5');
    expect(res.body.data.metrics.toolsUsed).toEqual(['add']);
  });

  it('runs strands_tools.current_time', async () => {
    // Prepare
    const agentId = await createAgent(
      platform,
      owner.token,
      'current-time',
      `${SCRIPTED_MODEL}from strands_tools import current_time


def create_agent():
    return Agent(model=Scripted("current_time", {"timezone": "UTC"}), tools=[current_time], callback_handler=None), []
`,
    );

    // Act
    const res = await chat(platform, owner.token, agentId, 'what time is it?');

    // Assess: an ISO 8601 time from the tool, in UTC
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.response).toMatch(/^result: \d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?\+00:00$/);
  });

  // Needs both halves of "conversations keep tool context": the chat service stores the full
  // message list, the runtime restores it into agent.messages and emits it again.
  it('keeps the tool call and its result in the conversation for the next chat', async () => {
    // Prepare: a first chat that calls a tool
    const agentId = await createAgent(
      platform,
      owner.token,
      'tool-context',
      `${SCRIPTED_MODEL}
@tool
def add(a: int, b: int) -> int:
    """Adds two numbers."""
    return a + b


def create_agent():
    return Agent(model=Scripted("add", {"a": 2, "b": 3}), tools=[add], callback_handler=None), []
`,
    );
    const first = await chat(platform, owner.token, agentId, 'add them');
    expect(first.body.data.response).toBe('result: 5');

    // Act: the next chat in the same conversation
    const second = await chat(platform, owner.token, agentId, 'what did the tool say?', first.body.data.conversationId as string);

    // Assess: the model found the earlier toolUse and toolResult in agent.messages
    expect(second.status, second.text).toBe(200);
    expect(second.body.data.response).toBe('remembered: add{"a": 2, "b": 3} -> 5');
  });
});

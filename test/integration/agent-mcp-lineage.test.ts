import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

/**
 * An agent run calling a private MCP server of its owner through the platform's MCP host. The
 * agent's source holds no credential: the runtime adds a short-lived credential of the owner and
 * the chat's lineage to requests for the platform's hosts. The Strands/MCP packages are not
 * installed here, so the test puts a minimal MCP client on the runtime's path (as the issue allows).
 */
const FAKE_MCP = fileURLToPath(new URL('../../python-runtime/tests/fixtures/fake_mcp', import.meta.url));

const MCP_SOURCE = `const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
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

const AGENT_SOURCE = `import json
from mcp.client.streamable_http import streamablehttp_client


class Caller:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        client = streamablehttp_client(prompt)
        status, reply = client.call_tool("shout", {"text": "hello mcp"})
        yield {"data": json.dumps({"status": status, "reply": reply})}


def create_agent():
    return Caller(), []
`;

describe('agent to MCP lineage', () => {
  let platform: TestPlatform;
  let owner: { userId: string; token: string };

  beforeAll(async () => {
    platform = await startTestPlatform({ runtimePythonPath: [FAKE_MCP] });
    owner = await createUser(platform, { alias: 'lineage-owner', credits: 100 });
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it("joins the MCP call to the chat in the usage logs, with the owner's credential added by the runtime", async () => {
    // Prepare: a private MCP server and an agent whose source holds only the server's URL
    const server = await platform.api('POST', '/mcp-admin/create', {
      token: owner.token,
      body: { serverName: 'shouter', description: 'shouts', sourceCode: MCP_SOURCE },
    });
    expect(server.status).toBe(200);
    const serverId = server.body.data.serverId as string;
    const agent = await platform.api('POST', '/agent/create', {
      token: owner.token,
      body: { agentName: 'mcp-caller', description: 'calls MCP', sourceCode: AGENT_SOURCE },
    });
    const agentId = agent.body.data.agentId as string;
    expect(AGENT_SOURCE).not.toMatch(/svc_(ut|rt|run)_/);

    // Act
    const chat = await platform.api('POST', `/agent/${agentId}/chat`, { token: owner.token, body: { prompt: `${platform.url}/mcp/${serverId}` } });
    const chatRequestId = chat.headers.get('x-request-id')!;
    const conversationId = chat.body.data.conversationId as string;
    const mcpLogs = await platform.api('GET', `/logs?resourceId=${serverId}`, { token: owner.token });
    const trace = await platform.api('GET', `/logs/trace/${chatRequestId}`, { token: owner.token });
    const direct = await platform.api('POST', `/mcp/${serverId}`, {
      token: owner.token,
      headers: { accept: 'application/json, text/event-stream' },
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'shout', arguments: { text: 'direct' } } },
    });
    const afterDirect = await platform.api('GET', `/logs?resourceId=${serverId}`, { token: owner.token });

    // Assess: the private server answered the agent (so the credential was added)
    expect(chat.status).toBe(200);
    const result = JSON.parse(chat.body.data.response);
    expect(result.status).toBe(200);
    expect(JSON.stringify(result.reply)).toContain('HELLO MCP');

    // Assess: the MCP record carries the chat's lineage
    expect(mcpLogs.body.data.logs).toHaveLength(1);
    expect(mcpLogs.body.data.logs[0]).toMatchObject({
      resourceType: 'mcp',
      parentRequestId: chatRequestId,
      rootRequestId: chatRequestId,
      parentConversationId: conversationId,
      parentAgentId: agentId,
    });

    // Assess: the trace joins them
    expect(trace.status).toBe(200);
    expect(trace.body.data.root).toMatchObject({ requestId: chatRequestId, resourceId: agentId });
    expect(trace.body.data.root.children).toEqual([expect.objectContaining({ resourceId: serverId, parentAgentId: agentId })]);

    // Assess: a direct call has no parent
    expect(direct.status).toBe(200);
    const directRecord = afterDirect.body.data.logs.find((l: { parentRequestId: string | null }) => l.parentRequestId === null);
    expect(directRecord).toMatchObject({ resourceId: serverId, parentConversationId: null, parentAgentId: null });

    // Assess: the run's credential appears in no log record
    const full = await platform.api('GET', `/logs/${mcpLogs.body.data.logs[0].requestId}`, { token: owner.token });
    expect(JSON.stringify(full.body)).not.toMatch(/svc_run_/);
  });
});

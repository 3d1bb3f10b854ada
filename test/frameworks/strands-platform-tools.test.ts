import { afterAll, beforeAll, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { startModelStandIn, type ModelRequest, type ModelStandIn } from '../support/model-stand-in.ts';
import { chat, createAgent, describeWithStrands, storeKey, STRANDS_PYTHON } from './strands.ts';

/**
 * "An agent that answers from your knowledge files": a Strands agent connects the platform's own
 * MCP server (`SVC_PLATFORM_MCP_URL`, authenticated by the run's credential, so the source holds
 * no secret), its model calls `search_knowledge`, and answers from the hit it is sent back. The
 * model is Strands' BedrockModel against the loopback ConverseStream server; its second reply is
 * computed from the tool result in the request, so the answer can only hold what the search found.
 */

const AWS_ACCESS_KEY_ID = 'AKIAPLATFORMTOOLS001';

const knowledgeAgent = (endpoint: string) => `from mcp.client.streamable_http import streamablehttp_client
from strands import Agent
from strands.models.bedrock import BedrockModel
from strands.tools.mcp import MCPClient


def create_agent():
    platform = MCPClient(lambda: streamablehttp_client(SVC_PLATFORM_MCP_URL))
    model = BedrockModel(model_id="amazon.nova-lite-v1:0", region_name="us-east-1", endpoint_url="${endpoint}")
    agent = Agent(model=model, tools=[platform], system_prompt="Answer from the owner's knowledge files.")
    return agent, [platform]
`;

/** The text of the last tool result the model was sent (Bedrock's toolResult blocks). */
function lastToolResult(request: ModelRequest): string {
  const blocks = (request.body?.messages ?? []).flatMap((m: any) => m.content ?? []).filter((b: any) => b.toolResult);
  const result = blocks.at(-1)?.toolResult;
  return (result?.content ?? []).map((c: any) => c.text ?? JSON.stringify(c.json)).join('\n');
}

describeWithStrands('platform tools from a Strands agent', () => {
  let platform: TestPlatform;
  let standIn: ModelStandIn;
  let owner: { userId: string; token: string };
  let other: { userId: string; token: string };

  beforeAll(async () => {
    standIn = await startModelStandIn({ awsAccessKeyId: AWS_ACCESS_KEY_ID });
    platform = await startTestPlatform({ python: STRANDS_PYTHON!, env: { AGENT_MODEL_HOSTS: `*.amazonaws.com,${standIn.host}` } });
    owner = await createUser(platform, { alias: 'knowledge-owner', credits: 1000 });
    other = await createUser(platform, { alias: 'knowledge-other', credits: 1000 });
    await storeKey(platform, owner.token, 'aws_access_key_id', AWS_ACCESS_KEY_ID);
    await storeKey(platform, owner.token, 'aws_secret_access_key', 'platform-tools-secret');
  });
  afterAll(async () => {
    await platform?.stop({ removeData: true });
    await standIn?.close();
  });

  it('an agent answers from your knowledge files through search_knowledge, and the call is in the chat trace', async () => {
    // Prepare: the owner's policy, and another user's file with the same words that must stay unseen
    const uploads = await Promise.all([
      platform.api('POST', '/knowledge/upload', {
        token: owner.token,
        body: { fileName: 'refunds.md', folder: 'policies', content: '# Refund policy\nRefunds are accepted within 30 days of purchase.' },
      }),
      platform.api('POST', '/knowledge/upload', {
        token: other.token,
        body: { fileName: 'refunds.md', folder: 'policies', content: '# Refund policy\nRefunds are never given by Globex.' },
      }),
    ]);
    expect(uploads.map((u) => u.status)).toEqual([200, 200]);
    const source = knowledgeAgent(standIn.url);
    expect(source).not.toMatch(/svc_(ut|rt|run)_/);
    const agentId = await createAgent(platform, owner.token, 'policy-helper', source);
    standIn.reply({ toolCalls: [{ name: 'search_knowledge', input: { query: 'refund policy' } }] }, (request) => ({
      text: `From your files: ${lastToolResult(request)}`,
    }));

    // Act
    const res = await chat(platform, owner.token, agentId, 'How long do customers have to ask for a refund?');
    const chatRequestId = res.headers.get('x-request-id');
    const trace = await platform.api('GET', `/logs/trace/${chatRequestId}`, { token: owner.token });

    // Assess: the model was offered the platform's tools and answered from the owner's file only
    expect(res.status, res.text).toBe(200);
    expect(standIn.requests[0]?.body.toolConfig.tools.map((t: any) => t.toolSpec.name)).toContain('search_knowledge');
    expect(res.body.data.metrics.toolsUsed).toEqual(['search_knowledge']);
    expect(res.body.data.response).toContain('Refunds are accepted within 30 days of purchase.');
    expect(res.body.data.response).toContain('refunds.md');
    expect(res.body.data.response).not.toContain('Globex');

    // Assess: the search made through the platform tools is a child of the chat in its trace
    expect(trace.status).toBe(200);
    const children: { requestId: string; parentAgentId?: string | null }[] = trace.body.data.root.children;
    const records = await Promise.all(children.map((c) => platform.api('GET', `/logs/${c.requestId}`, { token: owner.token })));
    expect(records.some((r) => r.status === 200 && r.text.includes('refund policy'))).toBe(true);
  });
});

import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { startModelStandIn, type ModelStandIn } from '../support/model-stand-in.ts';
import { chat, createAgent, describeWithStrands, storeKey, STRANDS_PYTHON } from './strands.ts';

/**
 * Model providers as users reach them: a real Strands model class (and a plain boto3 agent) talks
 * its provider's real protocol to a model server on loopback, through the platform's egress
 * proxy (which lets it through only because AGENT_MODEL_HOSTS lists it), with the credentials the
 * owner stored in the vault. The server is scripted: a tool call, then an answer; the agent runs
 * the tool, and the model must be sent its result.
 */

const AWS_ACCESS_KEY_ID = 'AKIAFRAMEWORKTIER001';
const OPENAI_KEY = 'sk-framework-tier-0001';

const WEATHER_TOOL = `@tool
def weather(city: str) -> str:
    """The current weather in a city."""
    return "sunny in " + city + ", 21 C"
`;

const bedrockAgent = (endpoint: string) => `from strands import Agent, tool
from strands.models.bedrock import BedrockModel


${WEATHER_TOOL}

def create_agent():
    model = BedrockModel(model_id="amazon.nova-lite-v1:0", region_name="us-east-1", endpoint_url="${endpoint}")
    return Agent(model=model, tools=[weather], system_prompt="Answer in one sentence."), []
`;

/**
 * llama.cpp's OpenAI-compatible class: it needs only httpx (the openai package cannot be built
 * here). It sends no key of its own, so the agent adds the stored one as OpenAI clients do.
 */
const openAiCompatibleAgent = (baseUrl: string) => `import json
from strands import Agent, tool
from strands.models.llamacpp import LlamaCppModel


${WEATHER_TOOL}

def create_agent():
    model = LlamaCppModel(base_url="${baseUrl}", model_id="local-model")
    model.client.headers["Authorization"] = "Bearer " + json.loads(SVC_KEYS_JSON)["openai"]
    return Agent(model=model, tools=[weather], system_prompt="Answer in one sentence."), []
`;

/** No framework: boto3's ConverseStream and its event-stream decoder, with the tool loop written out. */
const boto3Agent = (endpoint: string) => `import json
import boto3

TOOLS = {"tools": [{"toolSpec": {"name": "weather", "description": "The current weather in a city.",
                                 "inputSchema": {"json": {"type": "object", "properties": {"city": {"type": "string"}},
                                                          "required": ["city"]}}}}]}


class Boto3Agent:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        client = boto3.client("bedrock-runtime", region_name="us-east-1", endpoint_url="${endpoint}")
        self.messages.append({"role": "user", "content": [{"text": prompt}]})
        for turn in range(3):
            response = client.converse_stream(modelId="amazon.nova-lite-v1:0", messages=self.messages, toolConfig=TOOLS)
            text, uses, stop = "", [], None
            for event in response["stream"]:
                if "contentBlockStart" in event and "toolUse" in event["contentBlockStart"]["start"]:
                    uses.append(dict(event["contentBlockStart"]["start"]["toolUse"], input=""))
                    yield {"current_tool_use": {"name": uses[-1]["name"], "toolUseId": uses[-1]["toolUseId"]}}
                elif "contentBlockDelta" in event:
                    delta = event["contentBlockDelta"]["delta"]
                    if "text" in delta:
                        text += delta["text"]
                        yield {"data": delta["text"]}
                    elif "toolUse" in delta:
                        uses[-1]["input"] += delta["toolUse"]["input"]
                elif "messageStop" in event:
                    stop = event["messageStop"]["stopReason"]
            content = ([{"text": text}] if text else []) + [
                {"toolUse": {"toolUseId": u["toolUseId"], "name": u["name"], "input": json.loads(u["input"])}} for u in uses]
            self.messages.append({"role": "assistant", "content": content})
            if stop != "tool_use":
                return
            self.messages.append({"role": "user", "content": [
                {"toolResult": {"toolUseId": u["toolUseId"],
                                "content": [{"text": "sunny in " + json.loads(u["input"])["city"] + ", 21 C"}]}} for u in uses]})


def create_agent():
    return Boto3Agent(), []
`;

/** Every tool result the model was sent in one request, as text, whatever the protocol. */
function toolResultsSent(body: any): string[] {
  const messages: any[] = body?.messages ?? [];
  // OpenAI: role "tool" messages; Bedrock: toolResult blocks in user messages.
  return messages.flatMap((m) =>
    m.role === 'tool'
      ? [typeof m.content === 'string' ? m.content : JSON.stringify(m.content)]
      : Array.isArray(m.content)
        ? m.content.filter((b: any) => b?.toolResult).map((b: any) => JSON.stringify(b.toolResult.content))
        : [],
  );
}

describeWithStrands('model providers through the egress proxy, keys from the vault', () => {
  let platform: TestPlatform;
  let standIn: ModelStandIn;
  let owner: { userId: string; token: string };

  beforeAll(async () => {
    standIn = await startModelStandIn({ openaiKey: OPENAI_KEY, awsAccessKeyId: AWS_ACCESS_KEY_ID });
    platform = await startTestPlatform({ python: STRANDS_PYTHON!, env: { AGENT_MODEL_HOSTS: `*.amazonaws.com,${standIn.host}` } });
    owner = await createUser(platform, { alias: 'provider-owner', credits: 1000 });
    await storeKey(platform, owner.token, 'aws_access_key_id', AWS_ACCESS_KEY_ID);
    await storeKey(platform, owner.token, 'aws_secret_access_key', 'framework-tier-secret');
    await storeKey(platform, owner.token, 'openai', OPENAI_KEY);
  });
  afterAll(async () => {
    await platform?.stop({ removeData: true });
    await standIn?.close();
  });
  beforeEach(() => {
    standIn.reset();
  });

  it("Strands' BedrockModel runs a tool call over ConverseStream, signed with the stored AWS keys", async () => {
    // Prepare
    const agentId = await createAgent(platform, owner.token, 'bedrock-weather', bedrockAgent(standIn.url));
    standIn.reply({ toolCalls: [{ name: 'weather', input: { city: 'Oslo' } }] }, { text: 'It is sunny in Oslo.' });
    // Act
    const res = await chat(platform, owner.token, agentId, 'What is the weather in Oslo?');
    // Assess
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.response).toContain('It is sunny in Oslo.');
    expect(res.body.data.metrics.toolsUsed).toEqual(['weather']);
    expect(standIn.requests.map((r) => r.api)).toEqual(['bedrock-converse-stream', 'bedrock-converse-stream']);
    expect(String(standIn.requests[0]?.headers['authorization'])).toContain(`Credential=${AWS_ACCESS_KEY_ID}/`);
    expect(standIn.requests[0]?.body.toolConfig.tools.map((t: any) => t.toolSpec.name)).toEqual(['weather']);
    expect(toolResultsSent(standIn.requests[1]?.body).join()).toContain('sunny in Oslo, 21 C');
  });

  it('the next chat of the conversation sends the model the earlier tool call and its result', async () => {
    // Prepare
    const agentId = await createAgent(platform, owner.token, 'bedrock-memory', bedrockAgent(standIn.url));
    standIn.reply({ toolCalls: [{ name: 'weather', input: { city: 'Bergen' } }] }, { text: 'Sunny in Bergen.' }, { text: 'Still sunny.' });
    const first = await chat(platform, owner.token, agentId, 'Weather in Bergen?');
    // Act
    const second = await chat(platform, owner.token, agentId, 'And now?', first.body.data.conversationId);
    // Assess
    expect(second.status, second.text).toBe(200);
    expect(second.body.data.response).toContain('Still sunny.');
    const sent = standIn.requests[2]?.body.messages as any[];
    expect(sent.flatMap((m) => m.content.map((b: any) => Object.keys(b)[0]))).toEqual(['text', 'toolUse', 'toolResult', 'text', 'text']);
  });

  it('an OpenAI-compatible Strands model class streams a tool call with the stored openai key', async () => {
    // Prepare
    const agentId = await createAgent(platform, owner.token, 'openai-weather', openAiCompatibleAgent(standIn.url));
    standIn.reply({ toolCalls: [{ name: 'weather', input: { city: 'Lisbon' } }] }, { text: 'Lisbon is sunny today.' });
    // Act
    const res = await chat(platform, owner.token, agentId, 'What is the weather in Lisbon?');
    // Assess
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.response).toContain('Lisbon is sunny today.');
    expect(res.body.data.metrics.toolsUsed).toEqual(['weather']);
    expect(standIn.requests.map((r) => [r.api, r.stream, r.headers['authorization']])).toEqual([
      ['openai-chat', true, `Bearer ${OPENAI_KEY}`],
      ['openai-chat', true, `Bearer ${OPENAI_KEY}`],
    ]);
    expect(standIn.requests[0]?.body.tools.map((t: any) => t.function.name)).toEqual(['weather']);
    expect(toolResultsSent(standIn.requests[1]?.body).join()).toContain('sunny in Lisbon, 21 C');
  });

  it('a plain boto3 agent runs its own tool loop over ConverseStream', async () => {
    // Prepare
    const agentId = await createAgent(platform, owner.token, 'boto3-weather', boto3Agent(standIn.url));
    standIn.reply({ text: 'Checking. ', toolCalls: [{ name: 'weather', input: { city: 'Rome' } }] }, { text: 'Rome is sunny.' });
    // Act
    const res = await chat(platform, owner.token, agentId, 'Weather in Rome?');
    // Assess
    expect(res.status, res.text).toBe(200);
    expect(res.body.data.response).toBe('Checking. Rome is sunny.');
    expect(res.body.data.metrics.toolsUsed).toEqual(['weather']);
    expect(standIn.requests).toHaveLength(2);
    expect(toolResultsSent(standIn.requests[1]?.body)).toEqual([JSON.stringify([{ text: 'sunny in Rome, 21 C' }])]);
  });

  it('a model server AGENT_MODEL_HOSTS does not list stays unreachable', async () => {
    // Prepare: a second server on another port, not listed
    const unlisted = await startModelStandIn({ awsAccessKeyId: AWS_ACCESS_KEY_ID });
    unlisted.reply({ text: 'should never be asked' });
    try {
      const agentId = await createAgent(platform, owner.token, 'unlisted-model', bedrockAgent(unlisted.url));
      // Act
      const res = await chat(platform, owner.token, agentId, 'hello');
      // Assess
      expect(res.status).toBe(500);
      expect(res.body.error.message).toContain(`${unlisted.host} is not allowed for this run`);
      expect(unlisted.requests).toHaveLength(0);
    } finally {
      await unlisted.close();
    }
  });
});

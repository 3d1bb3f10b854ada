/**
 * AGENT_MODEL_HOSTS: the model endpoints agents and voice agents may reach. A model server on
 * loopback (where a local Ollama or llama.cpp would listen) is reached only when the operator lists
 * it as host:port, and the owner's stored keys reach the run as the providers' variables. The agents
 * call it with boto3's Bedrock client (the AWS key from the environment, as BedrockModel would).
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { voiceAgentSource } from '../support/voice-agents.ts';

const ACCESS_KEY_ID = 'AKIAMODELHOSTS000001';
const SECRET_ACCESS_KEY = 'model-hosts-secret-access-key-0123456789';

/** A Bedrock Converse answer, as the model server on loopback gives it. */
const CONVERSE_REPLY = JSON.stringify({
  output: { message: { role: 'assistant', content: [{ text: 'hello from the local model' }] } },
  stopReason: 'end_turn',
  usage: { inputTokens: 3, outputTokens: 5, totalTokens: 8 },
  metrics: { latencyMs: 1 },
});

interface ModelServer {
  readonly server: Server;
  readonly port: number;
  readonly requests: { url: string; headers: IncomingHttpHeaders }[];
}

async function startModelServer(): Promise<ModelServer> {
  const requests: ModelServer['requests'] = [];
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      requests.push({ url: request.url ?? '', headers: request.headers });
      response.writeHead(200, { 'content-type': 'application/json' }).end(CONVERSE_REPLY);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port, requests };
}

/** Python: `ask(port)` converses with the model at 127.0.0.1:port and returns its text or the error. */
const ASK = `
import boto3
from botocore.config import Config

def ask(port):
    client = boto3.client("bedrock-runtime", endpoint_url="http://127.0.0.1:" + str(port), region_name="us-east-1",
                          config=Config(retries={"max_attempts": 1}))
    try:
        reply = client.converse(modelId="llama3", messages=[{"role": "user", "content": [{"text": "hi"}]}])
        return "model said: " + reply["output"]["message"]["content"][0]["text"]
    except Exception as error:
        return "failed: " + type(error).__name__ + ": " + str(error)[:200]`;

const ASKING_AGENT = `${ASK.trim()}


class AskingAgent:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        yield {"data": ask(int(prompt))}


def create_agent():
    return AskingAgent(), []
`;

const ASKING_VOICE_AGENT = voiceAgentSource({
  preamble: `
    import json
${ASK.replace(/\n/g, '\n    ')}`,
  start: `
    await self.events.put({"type": "bidi_transcript_stream", "role": "assistant", "text": json.dumps([ask({{LISTED}}), ask({{UNLISTED}})]), "is_final": True})`,
});

describe('AGENT_MODEL_HOSTS', () => {
  let platform: TestPlatform;
  let owner: { token: string };
  let listed: ModelServer;
  let unlisted: ModelServer;

  beforeAll(async () => {
    [listed, unlisted] = await Promise.all([startModelServer(), startModelServer()]);
    platform = await startTestPlatform({ env: { AGENT_MODEL_HOSTS: `*.amazonaws.com,127.0.0.1:${listed.port}` } });
    owner = await createUser(platform, { alias: 'model-host-owner', credits: 1000 });
    for (const [serviceName, apiKey] of [
      ['aws_access_key_id', ACCESS_KEY_ID],
      ['aws_secret_access_key', SECRET_ACCESS_KEY],
    ]) {
      const stored = await platform.api('POST', '/keys/store', { token: owner.token, body: { serviceName, apiKey } });
      if (stored.status >= 300) throw new Error(`store ${serviceName}: ${stored.status} ${stored.text}`);
    }
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
    await Promise.all([listed, unlisted].map(({ server }) => new Promise((resolve) => server.close(resolve))));
  });

  it('lets an agent reach a loopback model server only when it is listed, with the stored AWS key as its variable', async () => {
    // Prepare
    const created = await platform.api('POST', '/agent/create', {
      token: owner.token,
      body: { agentName: 'local-model', description: 'asks a local model', sourceCode: ASKING_AGENT },
    });
    expect(created.status, created.text).toBe(200);
    const agentId = created.body.data.agentId as string;
    // Act
    const toListed = await platform.api('POST', `/agent/${agentId}/chat`, { token: owner.token, body: { prompt: String(listed.port) } });
    const toUnlisted = await platform.api('POST', `/agent/${agentId}/chat`, { token: owner.token, body: { prompt: String(unlisted.port) } });
    // Assess
    expect(toListed.body.data?.response, toListed.text).toBe('model said: hello from the local model');
    expect(listed.requests.map((r) => r.url)).toEqual(['/model/llama3/converse']);
    expect(String(listed.requests[0]!.headers['authorization'])).toContain(`Credential=${ACCESS_KEY_ID}/`);
    expect(toUnlisted.body.data.response).toMatch(/^failed: .*\(403\)/);
    expect(unlisted.requests).toEqual([]);
  });

  it('applies to voice agents too', async () => {
    // Prepare
    listed.requests.length = 0;
    const source = ASKING_VOICE_AGENT.replaceAll('{{LISTED}}', String(listed.port)).replaceAll('{{UNLISTED}}', String(unlisted.port));
    const created = await platform.api('POST', '/agent/create', {
      token: owner.token,
      body: { agentName: 'local-voice', description: 'asks a local model', sourceCode: source, agentType: 'bidi' },
    });
    expect(created.status, created.text).toBe(200);
    const voiceUrl = (await platform.api('GET', '/.well-known/platform.json')).body.data.voiceUrl as string;
    // Act: the agent's first transcript is what the two servers answered.
    const ws = new WebSocket(`${voiceUrl}/ws/${created.body.data.agentId as string}?token=${owner.token}`);
    const report = await new Promise<string>((resolve, reject) => {
      ws.on('message', (data, isBinary) => {
        if (isBinary) return;
        const frame = JSON.parse(String(data)) as { type: string; text?: string };
        if (frame.type === 'transcript' && frame.text !== undefined) resolve(frame.text);
      });
      ws.once('close', (code, reason) => reject(new Error(`closed ${code} ${String(reason)} before the report`)));
    });
    ws.send(JSON.stringify({ type: 'end' }));
    await new Promise((resolve) => ws.once('close', resolve));
    // Assess
    const [fromListed, fromUnlisted] = JSON.parse(report) as [string, string];
    expect(fromListed).toBe('model said: hello from the local model');
    expect(String(listed.requests[0]?.headers['authorization'])).toContain(`Credential=${ACCESS_KEY_ID}/`);
    expect(fromUnlisted).toMatch(/^failed: .*\(403\)/);
    expect(unlisted.requests).toEqual([]);
  });
});

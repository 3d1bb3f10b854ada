import { BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, type ConverseStreamOutput } from '@aws-sdk/client-bedrock-runtime';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startModelStandIn, type ModelStandIn } from '../support/model-stand-in.ts';

/**
 * The model stand-in is only worth having if real clients read it as they read the real
 * services: the AWS SDK's own Bedrock client decodes its event stream here, and OpenAI's
 * chunk format is checked field by field through a standard SSE parser.
 */
const AWS = { accessKeyId: 'AKIASTANDINTEST00001', secretAccessKey: 'stand-in-secret' };
const OPENAI_KEY = 'sk-stand-in-0000';

function bedrockClient(standIn: ModelStandIn, accessKeyId = AWS.accessKeyId) {
  return new BedrockRuntimeClient({ region: 'us-east-1', endpoint: standIn.url, credentials: { ...AWS, accessKeyId } });
}

async function chatCompletion(standIn: ModelStandIn, body: Record<string, unknown>, key = OPENAI_KEY) {
  return fetch(`${standIn.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function sseData(response: Response): Promise<string[]> {
  const data: string[] = [];
  const parser = createParser({ onEvent: (event: EventSourceMessage) => data.push(event.data) });
  parser.feed(await response.text());
  return data;
}

describe('model stand-in', () => {
  let standIn: ModelStandIn;
  beforeEach(async () => {
    standIn = await startModelStandIn({ openaiKey: OPENAI_KEY, awsAccessKeyId: AWS.accessKeyId });
  });
  afterEach(async () => {
    await standIn.close();
  });

  it('streams a Converse tool use and then text that the AWS SDK decodes event by event', async () => {
    // Prepare
    standIn.reply({ text: 'Let me look.', toolCalls: [{ name: 'weather', input: { city: 'Oslo' }, id: 'tooluse_a' }] }, { text: 'It is sunny in Oslo.' });
    const client = bedrockClient(standIn);
    const converse = async (prompt: string) => {
      const response = await client.send(
        new ConverseStreamCommand({ modelId: 'amazon.nova-lite-v1:0', messages: [{ role: 'user', content: [{ text: prompt }] }] }),
      );
      const events: ConverseStreamOutput[] = [];
      for await (const event of response.stream ?? []) events.push(event);
      return events;
    };
    // Act
    const first = await converse('weather in Oslo?');
    const second = await converse('and now?');
    // Assess
    expect(first[0]?.messageStart).toEqual({ role: 'assistant' });
    expect(
      first
        .map((e) => e.contentBlockDelta?.delta?.text)
        .filter(Boolean)
        .join(''),
    ).toBe('Let me look.');
    expect(first.find((e) => e.contentBlockStart)?.contentBlockStart).toEqual({
      contentBlockIndex: 1,
      start: { toolUse: { toolUseId: 'tooluse_a', name: 'weather' } },
    });
    expect(JSON.parse(first.find((e) => e.contentBlockDelta?.delta?.toolUse)?.contentBlockDelta?.delta?.toolUse?.input ?? '')).toEqual({ city: 'Oslo' });
    expect(first.filter((e) => e.contentBlockStop).map((e) => e.contentBlockStop?.contentBlockIndex)).toEqual([0, 1]);
    expect(first.find((e) => e.messageStop)?.messageStop?.stopReason).toBe('tool_use');
    expect(first.at(-1)?.metadata?.usage?.outputTokens).toBe(4);
    expect(second.find((e) => e.messageStop)?.messageStop?.stopReason).toBe('end_turn');
    expect(standIn.requests.map((r) => [r.api, r.model])).toEqual([
      ['bedrock-converse-stream', 'amazon.nova-lite-v1:0'],
      ['bedrock-converse-stream', 'amazon.nova-lite-v1:0'],
    ]);
    expect(standIn.requests[1]?.body.messages).toEqual([{ role: 'user', content: [{ text: 'and now?' }] }]);
  });

  it('answers plain Converse with the tool use in the message', async () => {
    // Prepare
    standIn.reply({ toolCalls: [{ name: 'weather', input: { city: 'Bergen' } }] });
    // Act
    const response = await bedrockClient(standIn).send(new ConverseCommand({ modelId: 'm', messages: [{ role: 'user', content: [{ text: 'hi' }] }] }));
    // Assess
    expect(response.stopReason).toBe('tool_use');
    expect(response.output?.message?.content?.[0]?.toolUse).toMatchObject({ name: 'weather', input: { city: 'Bergen' } });
  });

  it('refuses a Bedrock request signed with another access key, as the service does', async () => {
    // Prepare
    standIn.reply({ text: 'never sent' });
    // Act
    const failure = await bedrockClient(standIn, 'AKIAOTHERKEY00000000')
      .send(new ConverseCommand({ modelId: 'm', messages: [{ role: 'user', content: [{ text: 'hi' }] }] }))
      .catch((error: unknown) => error);
    // Assess
    expect((failure as Error).name).toBe('UnrecognizedClientException');
    expect(standIn.pending()).toBe(1);
  });

  it('streams OpenAI chat-completion chunks: text, tool-call deltas, finish reason, usage, [DONE]', async () => {
    // Prepare
    standIn.reply({ toolCalls: [{ name: 'weather', input: { city: 'Oslo' }, id: 'call_w' }] });
    // Act
    const response = await chatCompletion(standIn, {
      model: 'local-model',
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'weather?' }],
    });
    const data = await sseData(response);
    // Assess
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(data.at(-1)).toBe('[DONE]');
    const chunks = data.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.every((c) => c.object === 'chat.completion.chunk' && c.model === 'local-model')).toBe(true);
    const toolDeltas = chunks.flatMap((c) => c.choices[0]?.delta?.tool_calls ?? []);
    expect(toolDeltas[0]).toEqual({ index: 0, id: 'call_w', type: 'function', function: { name: 'weather', arguments: '' } });
    expect(JSON.parse(toolDeltas.map((d: any) => d.function.arguments).join(''))).toEqual({ city: 'Oslo' });
    expect(chunks.map((c) => c.choices[0]?.finish_reason).filter(Boolean)).toEqual(['tool_calls']);
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: 1 } });
  });

  it('streams text and answers non-streaming requests in the chat.completion shape', async () => {
    // Prepare
    standIn.reply({ text: 'Hello there, friend.' }, { text: 'Plain answer.' });
    // Act
    const streamed = await sseData(await chatCompletion(standIn, { model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] }));
    const plain = await (await chatCompletion(standIn, { model: 'm', messages: [{ role: 'user', content: 'hi' }] })).json();
    // Assess
    const chunks = streamed.slice(0, -1).map((d) => JSON.parse(d));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Hello there, friend.');
    expect(chunks.some((c) => 'usage' in c)).toBe(false);
    expect(plain).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'Plain answer.' }, finish_reason: 'stop' }] });
  });

  it('answers 401 to a wrong key and keeps the reply for the next request', async () => {
    // Prepare
    standIn.reply({ text: 'for the right key' });
    // Act
    const refused = await chatCompletion(standIn, { model: 'm', messages: [] }, 'sk-wrong');
    const accepted = await chatCompletion(standIn, { model: 'm', messages: [] });
    // Assess
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as any).error.code).toBe('invalid_api_key');
    expect(((await accepted.json()) as any).choices[0].message.content).toBe('for the right key');
    expect(standIn.requests.map((r) => r.headers['authorization'])).toEqual(['Bearer sk-wrong', `Bearer ${OPENAI_KEY}`]);
  });

  it('answers 500 when the test scripted too few replies', async () => {
    // Act
    const response = await chatCompletion(standIn, { model: 'm', messages: [] });
    // Assess
    expect(response.status).toBe(500);
  });
});

import { readFileSync } from 'node:fs';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

/** The runtime's own plain-Python test agents: the same interface as Strands, no framework needed. */
const fixture = (name: string) => readFileSync(new URL(`../../python-runtime/tests/fixtures/${name}.py`, import.meta.url), 'utf8');

interface SseReply {
  readonly status: number;
  readonly headers: Headers;
  readonly events: { event: string | undefined; data: unknown }[];
}

/** Reads a response as an EventSource client does: the body fed chunk by chunk to the same parser. */
async function readEvents(res: Response): Promise<SseReply> {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
  return { status: res.status, headers: res.headers, events: events.map((e) => ({ event: e.event, data: JSON.parse(e.data) as unknown })) };
}

/** The text of a plain-text chat: its body without the SPEC 4.1 markers. */
function plainText(body: string): string {
  return body
    .replace(/^__META__\{.*?\}__/, '')
    .replace(/__METRICS__\{.*\}$/, '')
    .replace(/__TOOL__[^_]+__/g, '')
    .replace(/__ERROR__\{.*?\}__/g, '');
}

const textOf = (reply: SseReply) =>
  reply.events
    .filter((e) => e.event === 'text')
    .map((e) => (e.data as { text: string }).text)
    .join('');

describe('streaming chat as Server-Sent Events, over HTTP with the real Python runtime', () => {
  let platform: TestPlatform;
  let user: { userId: string; token: string };
  const agents: Record<string, string> = {};

  function chat(agent: string, body: Record<string, unknown>, accept?: string): Promise<Response> {
    return fetch(`${platform.url}/stream/agent/${agents[agent]}/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json', ...(accept ? { accept } : {}) },
      body: JSON.stringify(body),
    });
  }

  beforeAll(async () => {
    platform = await startTestPlatform();
    user = await createUser(platform, { alias: 'sse-user', credits: 100 });
    for (const name of ['echo_agent', 'tool_agent', 'raising_agent']) {
      const res = await platform.api('POST', '/agent/create', {
        token: user.token,
        body: { agentName: name.replace('_', '-'), description: 'SSE tests', sourceCode: fixture(name) },
      });
      if (res.status !== 200) throw new Error(`create ${name}: ${res.status} ${res.text}`);
      agents[name] = res.body.data.agentId;
    }
  });
  afterAll(async () => {
    await platform.stop({ removeData: true });
  });

  it('answers text/event-stream with meta, text and metrics events carrying the same text as the plain reply', async () => {
    // Prepare: a prompt over several lines, CRLF included, which SSE's line rules must not break
    const prompt = 'first line\nsecond line\r\nthird';
    // Act
    const plain = await chat('echo_agent', { prompt });
    const plainBody = await plain.text();
    const sse = await readEvents(await chat('echo_agent', { prompt }, 'text/event-stream'));
    const meta = sse.events[0]?.data as { conversationId: string; agentId: string };
    const conversation = await platform.api('GET', `/agent/${agents.echo_agent}/conversation/${meta.conversationId}`, { token: user.token });
    const credits = await platform.api('GET', '/user/credits', { token: user.token });
    // Assess
    expect(plain.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(sse.status).toBe(200);
    expect(sse.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(sse.headers.get('cache-control')).toBe('no-cache');
    expect(sse.headers.get('x-conversation-id')).toBe(meta.conversationId);
    expect(sse.events[0]).toEqual({ event: 'meta', data: { conversationId: meta.conversationId, agentId: agents.echo_agent } });
    expect(new Set(sse.events.slice(1, -1).map((e) => e.event))).toEqual(new Set(['text']));
    expect(sse.events.at(-1)).toEqual({ event: 'metrics', data: expect.objectContaining({ totalCycles: 1, totalTokens: 7, toolsUsed: [] }) });
    expect(textOf(sse)).toBe(`echo: ${prompt}`);
    expect(textOf(sse)).toBe(plainText(plainBody));
    // Saving and billing as for the plain form: the conversation kept, one credit per chat
    expect(conversation.body.data.conversation.messages.map((m: { content: string }) => m.content)).toEqual([prompt, `echo: ${prompt}`]);
    expect(credits.body.data.credits).toBe(98);
  });

  it('reports tool starts as tool events, in order with the text', async () => {
    // Act
    const plainBody = await (await chat('tool_agent', { prompt: 'weather?' })).text();
    const sse = await readEvents(await chat('tool_agent', { prompt: 'weather?' }, 'application/json;q=0.5, text/event-stream'));
    // Assess
    expect(sse.events.map((e) => e.event)).toEqual(['meta', 'text', 'tool', 'tool', 'text', 'metrics']);
    expect(sse.events.filter((e) => e.event === 'tool').map((e) => e.data)).toEqual([{ name: 'weather' }, { name: 'calculator' }]);
    expect(textOf(sse)).toBe(plainText(plainBody));
    expect(textOf(sse)).toBe('mcp entered done');
    expect((sse.events.at(-1)?.data as { toolsUsed: string[] }).toolsUsed.sort()).toEqual(['calculator', 'weather']);
  });

  it('reports a failing agent as an error event before the metrics', async () => {
    const sse = await readEvents(await chat('raising_agent', { prompt: 'boom' }, 'text/event-stream'));
    expect(sse.events.map((e) => e.event).slice(-2)).toEqual(['error', 'metrics']);
    expect(sse.events.find((e) => e.event === 'error')?.data).toEqual({ code: 'AGENT_EXECUTION_FAILED', message: expect.any(String) });
  });

  it('serves the browser GET variant as events too', async () => {
    const res = await fetch(`${platform.url}/stream/agent/${agents.echo_agent}/chat?prompt=${encodeURIComponent('hi there')}`, {
      headers: { authorization: `Bearer ${user.token}`, accept: 'text/event-stream' },
    });
    const sse = await readEvents(res);
    expect(sse.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(sse.events[0]?.event).toBe('meta');
    expect(textOf(sse)).toBe('echo: hi there');
  });

  it('keeps the plain text when events are not asked for or weighed lower', async () => {
    const res = await chat('echo_agent', { prompt: 'plain' }, 'text/plain, text/event-stream;q=0.1');
    expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
    expect(await res.text()).toMatch(/^__META__\{.*\}__echo: plain__METRICS__\{.*\}$/);
  });

  it('answers failures before the stream starts as ordinary JSON errors', async () => {
    // Prepare
    const stranger = await createUser(platform, { alias: 'sse-stranger', credits: 10 });
    // Act
    const unknown = await fetch(`${platform.url}/stream/agent/00000000-0000-4000-8000-000000000000/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.token}`, 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ prompt: 'x' }),
    });
    const privateAgent = await fetch(`${platform.url}/stream/agent/${agents.echo_agent}/chat?prompt=x`, {
      headers: { authorization: `Bearer ${stranger.token}`, accept: 'text/event-stream' },
    });
    // Assess
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await unknown.json()) as unknown).toMatchObject({ success: false, error: { code: expect.stringMatching(/NOT_FOUND$/) } });
    expect(privateAgent.status).toBe(403);
    expect(privateAgent.headers.get('content-type')).toMatch(/^application\/json/);
  });
});

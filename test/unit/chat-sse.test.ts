import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { describe, expect, it } from 'vitest';
import { encodeChatEvent, type ChatWireEvent } from '../../functions/agents/chat.stream.ts';
import { ExecutionFailedError } from '../../functions/core/errors.ts';
import { prefersEventStream, sseEvent } from '../../functions/core/http/sse.ts';

/** Feeds `chunks` to the parser EventSource clients use, one `feed` per chunk, and returns the events. */
function parse(chunks: readonly string[]): EventSourceMessage[] {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  for (const chunk of chunks) parser.feed(chunk);
  return events;
}

const CHAT: readonly ChatWireEvent[] = [
  { type: 'meta', conversationId: 'conv-1', agentId: 'agent-1' },
  { type: 'text', data: 'line one\nline two\r\nline three\rend ' },
  { type: 'tool', name: 'weather' },
  // Looks like markers of the plain form: in SSE it is text like any other.
  { type: 'text', data: '__TOOL__fake__ and data: x\n\nevent: nope' },
  { type: 'error', error: new ExecutionFailedError('it broke\nbadly', 'AGENT_EXECUTION_FAILED') },
  { type: 'metrics', metrics: { totalCycles: 2, totalTokens: 9, toolsUsed: ['weather'], durationMs: 12 } },
];

describe('the chat stream as Server-Sent Events', () => {
  it('becomes one event per chat event, with every character of the text intact', () => {
    // Act
    const events = parse(CHAT.map((event) => encodeChatEvent('sse', event)));
    // Assess
    expect(events.map((e) => e.event)).toEqual(['meta', 'text', 'tool', 'text', 'error', 'metrics']);
    expect(events.map((e) => JSON.parse(e.data) as unknown)).toEqual([
      { conversationId: 'conv-1', agentId: 'agent-1' },
      { text: 'line one\nline two\r\nline three\rend ' },
      { name: 'weather' },
      { text: '__TOOL__fake__ and data: x\n\nevent: nope' },
      { code: 'AGENT_EXECUTION_FAILED', message: 'it broke\nbadly' },
      { totalCycles: 2, totalTokens: 9, toolsUsed: ['weather'], durationMs: 12 },
    ]);
  });

  it('parses the same whatever the transport cuts the bytes into, one byte at a time included', () => {
    // Prepare
    const whole = CHAT.map((event) => encodeChatEvent('sse', event)).join('');
    // Act
    const byByte = parse([...whole]);
    const inSevens = parse(whole.match(/[\s\S]{1,7}/g) ?? []);
    // Assess
    const expected = parse([whole]);
    expect(expected).toHaveLength(CHAT.length);
    expect(byByte).toEqual(expected);
    expect(inSevens).toEqual(expected);
  });

  it('keeps the plain form byte for byte: markers around the text as it is', () => {
    expect(CHAT.map((event) => encodeChatEvent('text', event)).join('')).toBe(
      '__META__{"conversationId":"conv-1","agentId":"agent-1"}__' +
        'line one\nline two\r\nline three\rend ' +
        '__TOOL__weather__' +
        '__TOOL__fake__ and data: x\n\nevent: nope' +
        '__ERROR__{"code":"AGENT_EXECUTION_FAILED","message":"it broke\\nbadly"}__' +
        '__METRICS__{"totalCycles":2,"totalTokens":9,"toolsUsed":["weather"],"durationMs":12}',
    );
  });

  it('frames raw multi-line data as one data line per line, which the parser joins with LF', () => {
    expect(sseEvent('note', 'a\r\nb\nc')).toBe('event: note\ndata: a\ndata: b\ndata: c\n\n');
    expect(parse([sseEvent('note', 'a\r\nb\rc')])).toEqual([{ event: 'note', data: 'a\nb\nc', id: undefined }]);
    expect(() => sseEvent('bad\nname', 'x')).toThrow(/line break/);
  });
});

describe('choosing the event stream from Accept', () => {
  it.each([
    ['text/event-stream', true],
    ['TEXT/Event-Stream; charset=utf-8', true],
    ['application/json, text/event-stream', true],
    ['text/event-stream, */*', true],
    ['text/event-stream;q=0.9, text/plain;q=0.5', true],
    ['text/plain;q=0.5, text/event-stream;q=0.5', true],
    ['text/event-stream;q=0.5, text/*;q=0.2', true],
    ['text/event-stream;q=0.5, */*;q=0.9, text/plain;q=0.1', true],
  ])('answers events for %j', (accept, expected) => {
    expect(prefersEventStream(accept)).toBe(expected);
  });

  it.each([
    undefined,
    '',
    '*/*',
    'text/plain',
    'text/*',
    'application/json',
    'text/event-stream;q=0',
    'text/plain, text/event-stream;q=0.5',
    'text/event-streams',
  ])('keeps the plain text for %j', (accept) => {
    expect(prefersEventStream(accept)).toBe(false);
  });
});

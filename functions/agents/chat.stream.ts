import type { HttpRequest } from '../core/http/request.ts';
import type { ResponseStream } from '../core/http/route.ts';
import { EVENT_STREAM_CONTENT_TYPE, prefersEventStream, sseEvent } from '../core/http/sse.ts';
import { errorOf, type ChatEvent, type ChatSession } from './chat.service.ts';

/**
 * The two wire forms of a streamed chat: SPEC 4.1's `text/plain` with in-band markers (the default),
 * and Server-Sent Events for clients that send `Accept: text/event-stream` (EventSource-style
 * clients and AI SDKs, which cannot read the markers).
 */
export type ChatStreamFormat = 'text' | 'sse';

/** What goes on the wire, in order: the meta first, then the session's events as they come. */
export type ChatWireEvent = { readonly type: 'meta'; readonly conversationId: string; readonly agentId: string } | ChatEvent;

export function chatStreamFormatOf(request: HttpRequest): ChatStreamFormat {
  return prefersEventStream(request.headers['accept']) ? 'sse' : 'text';
}

/**
 * One wire event as the bytes to write. Encoded from the session's events, never by scanning the
 * text, so a marker-like string in the agent's text stays text and nothing depends on chunk edges.
 *
 * - text: `__META__{json}__`, the text as is, `__TOOL__{name}__`, `__ERROR__{json}__`,
 *   `__METRICS__{json}`.
 * - sse: events `meta` (`{conversationId, agentId}`), `text` (`{text}`), `tool` (`{name}`),
 *   `error` (`{code, message}`) and `metrics` (the metrics object); every `data` is one line of
 *   JSON, so line breaks in the text survive SSE's line rules (CR and CRLF included).
 */
export function encodeChatEvent(format: ChatStreamFormat, event: ChatWireEvent): string {
  switch (event.type) {
    case 'meta': {
      const meta = JSON.stringify({ conversationId: event.conversationId, agentId: event.agentId });
      return format === 'sse' ? sseEvent('meta', meta) : `__META__${meta}__`;
    }
    case 'text':
      return format === 'sse' ? sseEvent('text', JSON.stringify({ text: event.data })) : event.data;
    case 'tool':
      return format === 'sse' ? sseEvent('tool', JSON.stringify({ name: event.name })) : `__TOOL__${event.name}__`;
    case 'error': {
      const error = JSON.stringify(errorOf(event.error));
      return format === 'sse' ? sseEvent('error', error) : `__ERROR__${error}__`;
    }
    case 'metrics': {
      const metrics = JSON.stringify(event.metrics);
      return format === 'sse' ? sseEvent('metrics', metrics) : `__METRICS__${metrics}`;
    }
  }
}

const CONTENT_TYPE: Record<ChatStreamFormat, string> = { text: 'text/plain; charset=utf-8', sse: EVENT_STREAM_CONTENT_TYPE };
// `no-store` keeps the plain stream's headers as they were; SSE's `no-cache` is what EventSource
// proxies and clients look for.
const CACHE_CONTROL: Record<ChatStreamFormat, string> = { text: 'no-store', sse: 'no-cache' };

/**
 * Writes a chat in the chosen form (see `encodeChatEvent`): the meta, then each event as the agent
 * produces it, metrics last, then the stream ends. Each piece is written (and flushed) as it arrives.
 */
export async function streamChat(session: ChatSession, stream: ResponseStream, signal: AbortSignal, format: ChatStreamFormat = 'text'): Promise<void> {
  try {
    stream.start(200, { 'content-type': CONTENT_TYPE[format], 'x-conversation-id': session.conversationId, 'cache-control': CACHE_CONTROL[format] });
    await stream.write(encodeChatEvent(format, { type: 'meta', conversationId: session.conversationId, agentId: session.agent.agentId }));
  } catch (error) {
    // No run then: what the session left in flight is still awaited before the request ends.
    await session.close();
    throw error;
  }
  for await (const event of session.run(signal)) await stream.write(encodeChatEvent(format, event));
  await stream.end();
}

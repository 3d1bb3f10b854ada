/**
 * Server-Sent Events framing (WHATWG HTML, "Server-sent events") and the `Accept` negotiation that
 * chooses it. Pure: no I/O, so the chat stream and its tests share the exact bytes.
 */

export const EVENT_STREAM_CONTENT_TYPE = 'text/event-stream; charset=utf-8';

/**
 * One event: `event: <name>`, one `data:` line per line of `data`, then the blank line that
 * dispatches it. SSE ends a line at CR, LF or CRLF, so every one of them starts a new `data:` line;
 * the parser joins them back with LF (a CR or CRLF in the data comes back as LF, which is why
 * callers put JSON in `data`: its escapes carry every character through unchanged).
 */
export function sseEvent(event: string, data: string): string {
  if (/[\r\n]/.test(event)) throw new Error('an SSE event name cannot contain a line break');
  const lines = data.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`);
  return `event: ${event}\n${lines.join('')}\n`;
}

interface MediaRange {
  readonly type: string;
  readonly q: number;
}

/** `Accept` as media ranges with their weights; a malformed or out-of-range `q` counts as 1 or is clamped. */
function mediaRanges(accept: string): MediaRange[] {
  return accept
    .split(',')
    .map((part) => {
      const [type = '', ...params] = part.split(';').map((p) => p.trim());
      const qParam = params.find((p) => /^q\s*=/i.test(p));
      const parsed = qParam === undefined ? 1 : Number(qParam.slice(qParam.indexOf('=') + 1).trim());
      const q = Number.isFinite(parsed) ? Math.min(1, Math.max(0, parsed)) : 1;
      return { type: type.toLowerCase(), q };
    })
    .filter((range) => range.type !== '');
}

/**
 * Whether a streaming chat should answer as `text/event-stream` rather than its default
 * `text/plain`. Only a client that names `text/event-stream` itself gets events (a bare `*\/*`, as
 * curl and fetch send, keeps the plain stream, byte for byte as before); it must weigh it above 0
 * and no lower than whatever range would cover `text/plain` (`text/plain`, `text/*`, `*\/*`).
 * A tie goes to events, since the client asked for them by name.
 */
export function prefersEventStream(accept: string | undefined): boolean {
  if (accept === undefined || accept.trim() === '') return false;
  const ranges = mediaRanges(accept);
  const events = Math.max(-1, ...ranges.filter((r) => r.type === 'text/event-stream').map((r) => r.q));
  if (events <= 0) return false;
  // The most specific range decides text/plain's weight (RFC 9110, 12.5.1).
  const plainRange = ['text/plain', 'text/*', '*/*'].map((type) => ranges.filter((r) => r.type === type)).find((found) => found.length > 0);
  const plain = plainRange === undefined ? 0 : Math.max(...plainRange.map((r) => r.q));
  return events >= plain;
}

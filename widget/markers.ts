/** What a chat stream (SPEC 4.1, text/plain with in-band markers) carries, once the markers are taken out. */
export type StreamPart =
  | { readonly kind: 'text'; readonly text: string }
  | { readonly kind: 'meta'; readonly conversationId: string }
  | { readonly kind: 'tool'; readonly name: string }
  | { readonly kind: 'error'; readonly message: string };

const STARTS = ['__META__', '__TOOL__', '__ERROR__', '__METRICS__'] as const;

/**
 * Splits a chat stream into text and markers as chunks arrive, whatever their edges: a chunk that
 * ends inside a marker (or in what may be the start of one) is held until the rest comes. The
 * metrics come last and are not shown, so everything after `__METRICS__` is dropped.
 */
export class MarkerParser {
  private pending = '';
  private done = false;

  push(chunk: string): StreamPart[] {
    if (this.done) return [];
    this.pending += chunk;
    const parts: StreamPart[] = [];
    for (;;) {
      let at = -1;
      let start = '';
      for (const candidate of STARTS) {
        const i = this.pending.indexOf(candidate);
        if (i !== -1 && (at === -1 || i < at)) [at, start] = [i, candidate];
      }
      if (at === -1) {
        const keep = heldTail(this.pending);
        const text = this.pending.slice(0, this.pending.length - keep);
        if (text) parts.push({ kind: 'text', text });
        this.pending = this.pending.slice(this.pending.length - keep);
        return parts;
      }
      if (at > 0) parts.push({ kind: 'text', text: this.pending.slice(0, at) });
      this.pending = this.pending.slice(at);
      if (start === '__METRICS__') {
        this.done = true;
        this.pending = '';
        return parts;
      }
      const body = this.pending.slice(start.length);
      const end = start === '__TOOL__' ? body.indexOf('__') : jsonEnd(body);
      if (end === -1) return parts;
      const value = body.slice(0, end);
      this.pending = body.slice(end + 2);
      if (start === '__TOOL__') parts.push({ kind: 'tool', name: value });
      else {
        const parsed = JSON.parse(value) as { conversationId?: string; message?: string; error?: string };
        if (start === '__META__') parts.push({ kind: 'meta', conversationId: parsed.conversationId ?? '' });
        else parts.push({ kind: 'error', message: parsed.message ?? parsed.error ?? 'The assistant failed to answer.' });
      }
    }
  }

  /** What is left when the stream ends (a held tail that was text after all). */
  end(): StreamPart[] {
    const text = this.done ? '' : this.pending;
    this.pending = '';
    return text ? [{ kind: 'text', text }] : [];
  }
}

/** How many characters at the end could begin a marker. */
function heldTail(text: string): number {
  for (let n = Math.min(text.length, 11); n > 0; n--) {
    const tail = text.slice(text.length - n);
    if (STARTS.some((s) => s.startsWith(tail))) return n;
  }
  return 0;
}

/** The length of the JSON object at the start of `text` followed by `__`, or -1 while incomplete. */
function jsonEnd(text: string): number {
  let from = 0;
  for (;;) {
    const i = text.indexOf('}__', from);
    if (i === -1) return -1;
    try {
      JSON.parse(text.slice(0, i + 1));
      return i + 1;
    } catch {
      from = i + 1;
    }
  }
}

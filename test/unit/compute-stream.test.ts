/** The runtime stream decoding both Compute adapters share (functions/runtimes/runtime-stream.ts). */
import { describe, expect, it } from 'vitest';
import type { AgentInvocation, RuntimeEvent } from '../../functions/runtimes/compute.ts';
import {
  invocationBody,
  NdjsonLineSplitter,
  parseRuntimeLine,
  runtimeEvents,
  errorEvent,
  type EventStreamOptions,
} from '../../functions/runtimes/runtime-stream.ts';

const encoder = new TextEncoder();

/** `bytes` cut into pieces of the given sizes (cycled), as a transport might deliver them. */
function cut(bytes: Uint8Array, sizes: readonly number[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  for (let offset = 0, i = 0; offset < bytes.length; i++) {
    const size = sizes[i % sizes.length]!;
    chunks.push(bytes.subarray(offset, offset + size));
    offset += size;
  }
  return chunks;
}

/** An async source that records how far it was read and whether it was released. */
function source(chunks: readonly Uint8Array[]) {
  const seen = { pulled: 0, returned: false };
  const iterable: AsyncIterable<Uint8Array> = {
    [Symbol.asyncIterator]() {
      let i = 0;
      return {
        next: async () => {
          if (i >= chunks.length) return { done: true, value: undefined };
          seen.pulled++;
          return { done: false, value: chunks[i++]! };
        },
        return: async () => {
          seen.returned = true;
          return { done: true, value: undefined };
        },
      };
    },
  };
  return { iterable, seen };
}

const options = (overrides: Partial<EventStreamOptions> = {}): EventStreamOptions => ({
  startedAt: Date.now(),
  classifyFailure: (error) => errorEvent('RUNTIME_CRASHED', String(error)),
  truncated: () => errorEvent('RUNTIME_CRASHED', 'cut short'),
  drainMs: 100,
  ...overrides,
});

async function all(events: AsyncIterable<RuntimeEvent>): Promise<RuntimeEvent[]> {
  const out: RuntimeEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

const lines = (...objects: unknown[]) => encoder.encode(objects.map((o) => JSON.stringify(o) + '\n').join(''));

describe('NdjsonLineSplitter', () => {
  it('yields the same lines however the bytes are cut, multi-byte characters included', () => {
    // Prepare
    const text = '{"type":"text","data":"héllo ✓ 🚀"}\n{"type":"text","data":"二"}\n{"type":"end","durationMs":1}\n';
    const bytes = encoder.encode(text);
    const expected = text.split('\n').slice(0, 3);

    for (const sizes of [[1], [2], [3], [5, 1, 7], [bytes.length]]) {
      // Act
      const splitter = new NdjsonLineSplitter();
      const got = cut(bytes, sizes).flatMap((chunk) => splitter.push(chunk));

      // Assess
      expect(got).toEqual(expected);
      expect(splitter.flush()).toBeNull();
    }
  });

  it('reassembles a large line from many chunks and refuses one over the cap', () => {
    // Prepare
    const big = JSON.stringify({ type: 'text', data: 'x'.repeat(3_000_000) });
    const splitter = new NdjsonLineSplitter();
    const capped = new NdjsonLineSplitter(1000);

    // Act
    const got = cut(encoder.encode(big + '\n'), [65_536]).flatMap((chunk) => splitter.push(chunk));

    // Assess
    expect(got).toEqual([big]);
    expect(() => capped.push(encoder.encode('y'.repeat(1001)))).toThrow(/exceeded 1000 bytes/);
  });
});

describe('parseRuntimeLine', () => {
  it('keeps only the fields of the port and classifies the rest', () => {
    expect(parseRuntimeLine('{"type":"end","durationMs":5,"maxRssKb":9,"exitCode":0,"sandbox":{}}')).toEqual({
      kind: 'end',
      runtimeDurationMs: 5,
      maxRssKb: 9,
    });
    expect(parseRuntimeLine('{"type":"start","requestId":"r","pid":42}')).toEqual({ kind: 'start', pid: 42 });
    expect(parseRuntimeLine('{"type":"someday","x":1}')).toEqual({ kind: 'ignored' });
    expect(parseRuntimeLine('   ')).toEqual({ kind: 'ignored' });
    expect(parseRuntimeLine('not json')).toMatchObject({ kind: 'invalid' });
    expect(parseRuntimeLine('[1,2]')).toMatchObject({ kind: 'invalid' });
    expect(parseRuntimeLine('{"type":"text"}')).toMatchObject({ kind: 'invalid', reason: 'text without data' });
    expect(parseRuntimeLine('{"type":"error","code":"SOURCE_REJECTED","message":"m","violations":[{"line":3,"col":1,"message":"no"}]}')).toEqual({
      kind: 'event',
      event: { type: 'error', code: 'SOURCE_REJECTED', message: 'm', violations: [{ line: 3, col: 1, message: 'no' }] },
    });
  });
});

describe('runtimeEvents', () => {
  it('relays events in order, reports the start pid, and reads the body to its end after `end`', async () => {
    // Prepare
    const { iterable, seen } = source([
      lines({ type: 'start', pid: 7 }, { type: 'text', data: 'a' }),
      lines({ type: 'end', durationMs: 3 }),
      encoder.encode(''),
    ]);
    let pid: number | null = null;
    let runtimeEnded = false;

    // Act
    const events = await all(runtimeEvents(iterable, options({ onStart: (p) => (pid = p), onRuntimeEnd: () => (runtimeEnded = true) })));

    // Assess
    expect(events).toEqual([
      { type: 'text', data: 'a' },
      { type: 'end', started: true, durationMs: expect.any(Number), runtimeDurationMs: 3 },
    ]);
    expect(pid).toBe(7);
    expect(runtimeEnded).toBe(true);
    expect(seen).toEqual({ pulled: 3, returned: false });
  });

  it('turns a garbage line into an error and an end, and stops reading', async () => {
    // Prepare
    const { iterable, seen } = source([lines({ type: 'text', data: 'a' }), encoder.encode('<html>oops</html>\n'), lines({ type: 'text', data: 'never' })]);

    // Act
    const events = await all(runtimeEvents(iterable, options()));

    // Assess
    expect(events.map((e) => e.type)).toEqual(['text', 'error', 'end']);
    expect(events[1]).toMatchObject({ type: 'error', code: 'RUNTIME_PROTOCOL_ERROR' });
    expect(seen).toEqual({ pulled: 2, returned: true });
  });

  it('ends a stream cut short with the truncation error, and a broken one with the failure', async () => {
    // Prepare
    const cutShort = source([lines({ type: 'text', data: 'a' })]).iterable;
    const broken: AsyncIterable<Uint8Array> = {
      async *[Symbol.asyncIterator]() {
        yield lines({ type: 'text', data: 'a' });
        throw new Error('socket reset');
      },
    };

    // Act
    const [first, second] = await Promise.all([all(runtimeEvents(cutShort, options())), all(runtimeEvents(broken, options()))]);

    // Assess
    expect(first.map((e) => e.type)).toEqual(['text', 'error', 'end']);
    expect(first[1]).toMatchObject({ message: 'cut short' });
    expect(second[1]).toMatchObject({ code: 'RUNTIME_CRASHED', message: expect.stringContaining('socket reset') });
  });

  it('yields at most one error, and accepts a last line without newline', async () => {
    // Prepare
    const body = encoder.encode('{"type":"error","code":"A","message":"1"}\n{"type":"error","code":"B","message":"2"}\n{"type":"end","durationMs":1}');

    // Act
    const events = await all(runtimeEvents(source([body]).iterable, options()));

    // Assess
    expect(events).toEqual([
      { type: 'error', code: 'A', message: '1' },
      { type: 'end', started: false, durationMs: expect.any(Number), runtimeDurationMs: 1 },
    ]);
  });

  it('releases the source when the consumer stops early', async () => {
    // Prepare
    const { iterable, seen } = source([lines({ type: 'text', data: 'a' }, { type: 'text', data: 'b' }), lines({ type: 'end', durationMs: 1 })]);

    // Act
    for await (const event of runtimeEvents(iterable, options())) if (event.type === 'text') break;

    // Assess
    expect(seen.returned).toBe(true);
  });
});

describe('invocationBody', () => {
  it('sends exactly the protocol fields', () => {
    // Prepare
    const invocation = {
      kind: 'agent',
      source: 's',
      requestId: 'r',
      functionName: 'f',
      timeoutMs: 1000,
      memoryMb: 128,
      env: { SVC_KEYS_JSON: '{}' },
      allowHosts: ['api.example.com'],
      prompt: 'p',
      messages: [],
      ownerId: 'not for the runtime',
    } as AgentInvocation;

    // Act
    const body = JSON.parse(invocationBody(invocation));

    // Assess
    expect(Object.keys(body).sort()).toEqual([
      'allowHosts',
      'env',
      'functionName',
      'kind',
      'memoryMb',
      'messages',
      'prompt',
      'requestId',
      'source',
      'timeoutMs',
    ]);
  });
});

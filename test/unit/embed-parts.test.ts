import { describe, expect, it } from 'vitest';
import { createRunTokens, fixedKeyRing, RUN_TOKEN_PREFIX, VISITOR_TOKEN_PREFIX } from '../../functions/core/auth/run-token.ts';
import { originAllowed, pageOrigin } from '../../functions/embed/origin.ts';
import { Downsampler } from '../../widget/downsample.ts';
import { MarkerParser, type StreamPart } from '../../widget/markers.ts';

const STREAM =
  '__META__{"conversationId":"c-1","agentId":"a"}__Hello __TOOL__lookup__world__ERROR__{"code":"X","message":"it broke"}__ end__METRICS__{"totalTokens":7}';

/** Feeds `text` in chunks of `size` and joins adjacent text parts. */
function parse(text: string, size: number): StreamPart[] {
  const parser = new MarkerParser();
  const parts: StreamPart[] = [];
  for (let i = 0; i < text.length; i += size) parts.push(...parser.push(text.slice(i, i + size)));
  parts.push(...parser.end());
  return parts.reduce<StreamPart[]>((out, part) => {
    const last = out.at(-1);
    if (part.kind === 'text' && last?.kind === 'text') out[out.length - 1] = { kind: 'text', text: last.text + part.text };
    else out.push(part);
    return out;
  }, []);
}

describe('the widget’s stream parser', () => {
  it.each([1, 2, 3, 7, 1000])('takes the markers out whatever the chunk edges (chunks of %i)', (size) => {
    // Act
    const parts = parse(STREAM, size);

    // Assess
    expect(parts).toEqual([
      { kind: 'meta', conversationId: 'c-1' },
      { kind: 'text', text: 'Hello ' },
      { kind: 'tool', name: 'lookup' },
      { kind: 'text', text: 'world' },
      { kind: 'error', message: 'it broke' },
      { kind: 'text', text: ' end' },
    ]);
  });

  it('keeps underscores that start no marker, and JSON holding "__" inside a marker', () => {
    // Act
    const parts = parse('__META__{"conversationId":"a__b"}__snake_case and __init__ stay', 4);

    // Assess
    expect(parts).toEqual([
      { kind: 'meta', conversationId: 'a__b' },
      { kind: 'text', text: 'snake_case and __init__ stay' },
    ]);
  });
});

describe('the widget’s downsampler', () => {
  it('turns 48 kHz into 20 ms frames of 16 kHz PCM16, averaging each interval', () => {
    // Prepare
    const frames: ArrayBuffer[] = [];
    const downsampler = new Downsampler(48_000, (frame) => frames.push(frame));
    const second = new Float32Array(48_000).map((_, i) => (i % 3 === 0 ? 0.75 : 0));

    // Act
    downsampler.push(second.subarray(0, 1000));
    downsampler.push(second.subarray(1000));

    // Assess
    expect(frames).toHaveLength(50);
    const samples = new Int16Array(frames[0]!);
    expect(samples).toHaveLength(320);
    // Each output sample is the mean of three inputs (0.75, 0, 0): 0.25 of full scale, not 0.75 or 0.
    expect(new Set(samples)).toEqual(new Set([Math.trunc(0.25 * 0x7fff)]));
  });
});

describe('embed origins', () => {
  it.each([
    ['https://shop.example.com', ['shop.example.com'], true],
    ['http://shop.example.com:8080', ['shop.example.com'], true],
    ['http://localhost:5173', ['localhost'], true],
    ['http://localhost:5173', ['localhost:5173'], true],
    ['http://localhost:3000', ['localhost:5173'], false],
    ['https://a.b.example.org', ['*.example.org'], true],
    ['https://example.org', ['*.example.org'], false],
    ['https://badexample.org', ['*.example.org'], false],
    ['https://shop.example.com.evil.com', ['shop.example.com'], false],
    ['https://anything.test', ['*'], true],
    [undefined, ['*'], true],
    [undefined, ['localhost'], false],
    ['null', ['localhost'], false],
    ['https://example.com', ['example.com:443'], true],
  ] as const)('%s against %j: %s', (origin, domains, allowed) => {
    // Act / Assess
    expect(originAllowed(origin, domains)).toBe(allowed);
  });
});

describe('embed visitor tokens', () => {
  const NOW = 1_700_000_000_000;
  const KEY = Buffer.alloc(32, 5);
  const tokensAt = (now: number, key = KEY) => createRunTokens(fixedKeyRing(key), { now: () => now });

  it('give back the visitor id for the embed they were issued through, until they expire', async () => {
    // Prepare
    const token = await tokensAt(NOW).mintVisitor('emb-1', 'vis-1', 60_000);

    // Act
    const fresh = await tokensAt(NOW + 59_000).verifyVisitor(token, 'emb-1');
    const expired = await tokensAt(NOW + 60_000).verifyVisitor(token, 'emb-1');
    const otherEmbed = await tokensAt(NOW).verifyVisitor(token, 'emb-2');

    // Assess
    expect(token.startsWith(VISITOR_TOKEN_PREFIX)).toBe(true);
    expect(fresh).toBe('vis-1');
    expect(expired).toBeNull();
    expect(otherEmbed).toBeNull();
  });

  it('refuse tampered, foreign-key and malformed tokens', async () => {
    // Prepare
    const tokens = tokensAt(NOW);
    const token = await tokens.mintVisitor('emb-1', 'vis-1', 60_000);
    const [body, sig] = token.slice(VISITOR_TOKEN_PREFIX.length).split('.');
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString());
    const forged = `${VISITOR_TOKEN_PREFIX}${Buffer.from(JSON.stringify({ ...payload, v: 'vis-2' })).toString('base64url')}.${sig}`;
    const foreignKey = await tokensAt(NOW, Buffer.alloc(32, 6)).mintVisitor('emb-1', 'vis-1', 60_000);

    // Act
    const results = await Promise.all(
      [forged, foreignKey, '', 'garbage', `${VISITOR_TOKEN_PREFIX}x.y`, `${token}.extra`, token.replace(VISITOR_TOKEN_PREFIX, RUN_TOKEN_PREFIX)].map((t) =>
        tokens.verifyVisitor(t, 'emb-1'),
      ),
    );

    // Assess
    expect(results).toEqual([null, null, null, null, null, null, null]);
  });

  it('are no run tokens, and run tokens are no visitor tokens, under the same key', async () => {
    // Prepare
    const tokens = tokensAt(NOW);
    const visitor = await tokens.mintVisitor('emb-1', 'vis-1', 60_000);
    const run = await tokens.mint({ userId: 'u1', keys: null, agents: ['a'], embedTokenId: 'emb-1', visitorId: 'vis-1' }, 60_000);

    // Act
    const visitorAsRun = await tokens.verify(visitor.replace(VISITOR_TOKEN_PREFIX, RUN_TOKEN_PREFIX));
    const runAsVisitor = await tokens.verifyVisitor(run.replace(RUN_TOKEN_PREFIX, VISITOR_TOKEN_PREFIX), 'emb-1');

    // Assess
    expect(visitorAsRun).toBeNull();
    expect(runAsVisitor).toBeNull();
  });
});

describe('the origin of the page asking', () => {
  const API = 'http://127.0.0.1:8787';
  it.each([
    [{ origin: 'https://shop.example.com' }, 'https://shop.example.com'],
    [{ origin: 'https://shop.example.com', 'sec-fetch-site': 'same-origin' }, 'https://shop.example.com'],
    [{ 'sec-fetch-site': 'same-origin' }, 'http://127.0.0.1:8787'],
    [{ 'sec-fetch-site': 'cross-site' }, undefined],
    [{ 'sec-fetch-site': 'same-site' }, undefined],
    [{}, undefined],
  ] as const)('%j is %s', (headers, origin) => {
    // Act / Assess
    expect(pageOrigin(headers, API)).toBe(origin);
  });
});

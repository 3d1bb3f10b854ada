/** Keys kept out of what leaves a run: streamed text, results and every field of usage records. */
import { describe, expect, it } from 'vitest';
import type { BlobStore } from '../../functions/core/blobs.ts';
import type { Db } from '../../functions/core/db/dynamo.ts';
import { lineageOf } from '../../functions/core/http/lineage.ts';
import { registerSecret, StreamScrubber, withSecretScope } from '../../functions/core/secret-scope.ts';
import { createUsageLogWriter, scrubSecretValues } from '../../functions/core/usage-log.ts';

const SECRET = 'sk-live-STREAMED-0123456789';

describe('StreamScrubber', () => {
  it('catches a key however the text around it is cut into pieces', () => {
    // Prepare
    const text = `before ${SECRET} middle sk-live-S ${SECRET}${SECRET} after`;
    const expected = 'before [REDACTED] middle sk-live-S [REDACTED][REDACTED] after';
    for (let first = 0; first <= text.length; first++) {
      for (const second of [first, first + 3, first + 11, text.length]) {
        const scrubber = new StreamScrubber([SECRET, 'short']);
        // Act
        const pieces = [text.slice(0, first), text.slice(first, second), text.slice(second)].map((p) => scrubber.push(p));
        const out = pieces.join('') + scrubber.flush();
        // Assess
        expect(out, `cut at ${first}/${second}`).toBe(expected);
        for (const piece of pieces) expect(piece).not.toContain(SECRET.slice(0, 12));
      }
    }
  });

  it('holds back only a tail that could begin a key, and gives it back at the end', () => {
    // Prepare
    const scrubber = new StreamScrubber([SECRET]);
    // Act
    const first = scrubber.push('hello sk-li');
    const second = scrubber.push('ke a cat');
    const trailing = scrubber.push(' sk');
    const rest = scrubber.flush();
    // Assess
    expect([first, second, trailing, rest]).toEqual(['hello ', 'sk-like a cat', ' ', 'sk']);
  });

  it('catches a key inside base64 of a longer text, at every alignment and in both alphabets, and leaves other base64 alone', () => {
    // Prepare: the key after 0, 1 and 2 bytes of other text, so it starts at each of base64's three alignments
    const encoded = ['', 'a', 'ab'].flatMap((before) => {
      const bytes = Buffer.from(`${before}key=${SECRET};end`);
      return [bytes.toString('base64'), bytes.toString('base64url')];
    });
    const innocent = Buffer.from('an ordinary sentence, nothing secret in it').toString('base64');
    // Act
    const scrubbed = encoded.map((text) => {
      const scrubber = new StreamScrubber([SECRET]);
      return scrubber.push(text) + scrubber.flush();
    });
    const kept = new StreamScrubber([SECRET]).scrub(innocent);
    // Assess
    for (const [i, out] of scrubbed.entries()) {
      expect(out, encoded[i]).toContain('[REDACTED]');
      const decoded = Buffer.from(out.replace('[REDACTED]', ''), 'base64').toString('latin1');
      expect(decoded).not.toContain(SECRET.slice(0, 8));
    }
    expect(kept).toBe(innocent);
  });
});

describe("scrubbing with the request's secrets", () => {
  it('replaces keys in every string of a value, object keys included, and changes nothing else', async () => {
    // Act
    const scrubbed = await withSecretScope(async () => {
      registerSecret(SECRET);
      return scrubSecretValues({ token: 'kept', list: [SECRET, 3, null, { [SECRET]: `x${SECRET}x` }], n: 1 });
    });
    // Assess
    expect(scrubbed).toEqual({ token: 'kept', list: ['[REDACTED]', 3, null, { '[REDACTED]': 'x[REDACTED]x' }], n: 1 });
  });

  it('keeps keys out of every field of a usage record, the error above all', async () => {
    // Prepare
    const items: Record<string, unknown>[] = [];
    const db = {
      table: (name: string) => name,
      doc: { send: async (command: { input: { Item: Record<string, unknown> } }) => void items.push(command.input.Item) },
    } as unknown as Db;
    const writer = createUsageLogWriter(db, {} as BlobStore, { now: () => 1_000 }, 30);
    // Act
    await withSecretScope(async () => {
      registerSecret(SECRET);
      await writer.write({
        lineage: lineageOf('req-1', `root=${SECRET};parent=p-1`),
        userId: 'u',
        resourceId: 'act-1',
        resourceType: 'action',
        requestType: 'ACTION_RUN',
        status: 'error',
        request: { a: SECRET },
        response: `printed ${SECRET}`,
        durationMs: 1,
        creditsUsed: 1,
        error: { code: 'ACTION_EXECUTION_FAILED', message: `The handler raised ValueError: ${SECRET} (line 2).` },
      });
    });
    // Assess
    expect(items).toHaveLength(1);
    expect(JSON.stringify(items[0])).not.toContain(SECRET);
    expect(items[0]).toMatchObject({ error: { code: 'ACTION_EXECUTION_FAILED', message: 'The handler raised ValueError: [REDACTED] (line 2).' } });
  });
});

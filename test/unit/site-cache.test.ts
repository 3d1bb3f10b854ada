/**
 * The local site cache's rules (site-cache.ts) against a bucket stand-in in memory: what it keeps,
 * what a notification drops, a read overlapping a write, the flush before serving from memory, and
 * the bound in bytes. The real bucket and notifications are in test/integration/site-cache.test.ts.
 */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { OpenedObject } from '../../functions/core/files/bucket-objects.ts';
import { connectLocalSiteCache, createLocalSiteCache, type SiteFileSource } from '../../functions/websites/site-cache.ts';

const BUCKET = 'local-websites';

/** A bucket in memory that counts its reads; `gate` holds a read until released. */
function bucketOf(files: Record<string, string>) {
  const reads: string[] = [];
  let gate: Promise<void> | null = null;
  const source: SiteFileSource = {
    async open(key, options = {}) {
      reads.push(key);
      const text = files[key];
      const object: OpenedObject | null =
        text === undefined
          ? null
          : { body: options.head ? null : Readable.from(Buffer.from(text)), contentType: 'text/html', size: Buffer.byteLength(text), etag: `"${text}"` };
      if (gate !== null) await gate;
      return object;
    },
  };
  return {
    files,
    reads,
    source,
    hold() {
      let release!: () => void;
      gate = new Promise<void>((resolve) => (release = resolve));
      return () => {
        gate = null;
        release();
      };
    },
  };
}

/** Notifications as the stores process sends them: `pending` are delivered by the next flush. */
function noticesOf() {
  const listeners = new Set<(event: unknown) => void>();
  const pending: unknown[] = [];
  let flushes = 0;
  const deliver = (event: unknown) => {
    for (const listener of listeners) listener(event);
  };
  return {
    flushes: () => flushes,
    written: (key: string) => pending.push({ Records: [{ eventName: 'ObjectCreated:Put', s3: { bucket: { name: BUCKET }, object: { key } } }] }),
    deliver,
    notices: {
      bucket: BUCKET,
      subscribe: (listener: (event: unknown) => void) => {
        listeners.add(listener);
        return () => void listeners.delete(listener);
      },
      flush: async () => {
        flushes += 1;
        for (const event of pending.splice(0)) deliver(event);
      },
    },
  };
}

async function text(source: SiteFileSource, key: string): Promise<string | null> {
  const object = await source.open(key);
  if (object === null) return null;
  const chunks: Buffer[] = [];
  for await (const chunk of object.body!) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString();
}

describe('the local site cache', () => {
  it('reads through to the bucket until it is connected to the notifications', async () => {
    // Prepare
    const bucket = bucketOf({ a: 'one' });
    const cache = createLocalSiteCache();

    // Act
    const files = await cache.files!(bucket.source);

    // Assess
    expect(files).toBe(bucket.source);
  });

  it('keeps a file and a miss once read, and drops a key when a notification delivered by the flush names it', async () => {
    // Prepare
    const bucket = bucketOf({ a: 'one' });
    const { notices, written, flushes } = noticesOf();
    const cache = createLocalSiteCache();
    connectLocalSiteCache(cache, notices);

    // Act
    const first = await text(await cache.files!(bucket.source), 'a');
    const missing = await text(await cache.files!(bucket.source), 'b');
    const again = [await text(await cache.files!(bucket.source), 'a'), await text(await cache.files!(bucket.source), 'b')];
    const readsBefore = bucket.reads.length;
    bucket.files['a'] = 'two';
    bucket.files['b'] = 'new';
    written('a');
    written('b');
    const after = [await text(await cache.files!(bucket.source), 'a'), await text(await cache.files!(bucket.source), 'b')];

    // Assess
    expect([first, missing]).toEqual(['one', null]);
    expect(again).toEqual(['one', null]);
    expect(readsBefore).toBe(2);
    expect(after).toEqual(['two', 'new']);
    expect(flushes()).toBe(6);
  });

  it('keeps nothing from a read that a write to its key overlapped', async () => {
    // Prepare
    const bucket = bucketOf({ a: 'old' });
    const { notices, deliver } = noticesOf();
    const cache = createLocalSiteCache();
    connectLocalSiteCache(cache, notices);
    const release = bucket.hold();
    const reading = cache.files!(bucket.source).then((files) => text(files, 'a'));
    while (bucket.reads.length === 0) await new Promise((resolve) => setImmediate(resolve));

    // Act
    bucket.files['a'] = 'new';
    deliver({ Records: [{ s3: { bucket: { name: BUCKET }, object: { key: 'a' } } }] });
    release();
    const overlapped = await reading;
    const next = await text(await cache.files!(bucket.source), 'a');

    // Assess
    expect(overlapped).toBe('old');
    expect(next).toBe('new');
  });

  it('forgets the whole bucket on a bulk delete notice or an invalidation, and ignores other buckets', async () => {
    // Prepare
    const bucket = bucketOf({ a: 'one' });
    const { notices, deliver } = noticesOf();
    const cache = createLocalSiteCache();
    connectLocalSiteCache(cache, notices);
    await text(await cache.files!(bucket.source), 'a');

    // Act
    deliver({ Records: [{ s3: { bucket: { name: 'local-other' }, object: { key: 'a' } } }] });
    await text(await cache.files!(bucket.source), 'a');
    const afterOther = bucket.reads.length;
    deliver({ bucket: BUCKET });
    await text(await cache.files!(bucket.source), 'a');
    const afterBulk = bucket.reads.length;
    const invalidation = await cache.invalidate(['/x/*'], 'ref');
    await text(await cache.files!(bucket.source), 'a');
    const afterInvalidation = bucket.reads.length;

    // Assess
    expect(afterOther).toBe(1);
    expect(afterBulk).toBe(2);
    expect(invalidation).toMatchObject({ invalidationId: expect.stringMatching(/^local-/), status: 'Completed' });
    expect(afterInvalidation).toBe(3);
  });

  it('holds at most its bytes, dropping the least recently served first, and streams larger files through', async () => {
    // Prepare: each entry counts its body and key plus 200 bytes.
    const bucket = bucketOf({ a: 'x'.repeat(300), b: 'y'.repeat(300), c: 'z'.repeat(300), big: 'w'.repeat(2000) });
    const { notices } = noticesOf();
    const cache = createLocalSiteCache({ maxBytes: 1100, maxFileBytes: 1000 });
    connectLocalSiteCache(cache, notices);
    const read = async (key: string) => text(await cache.files!(bucket.source), key);

    // Act
    await read('a');
    await read('b');
    await read('a');
    await read('c');
    const beforeRereads = bucket.reads.length;
    await read('a');
    await read('c');
    const keptReads = bucket.reads.length;
    await read('b');
    await read('big');
    await read('big');

    // Assess
    expect(beforeRereads).toBe(3);
    expect(keptReads).toBe(3);
    expect(bucket.reads.slice(3)).toEqual(['b', 'big', 'big']);
  });
});

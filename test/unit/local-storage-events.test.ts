/**
 * The local stand-in for S3 notifications to Lambda: each created object under a storage event's
 * prefix runs it, a failure is retried to STORAGE_EVENT_ATTEMPTS in all (as Lambda retries an
 * asynchronous invocation) and then given up at error, and other buckets, prefixes and removals
 * run nothing. The events are s3rver's shape, handed in by the test.
 */
import { describe, expect, it } from 'vitest';
import { defineStorageEvent, STORAGE_EVENT_ATTEMPTS, type BoundStorageEvent } from '../../functions/core/entry/storage-event.ts';
import { createLogger } from '../../functions/core/logger.ts';
import type { Ports } from '../../functions/ports.ts';
import { startLocalStorageEvents } from '../../lib/local/storage-events.ts';
import { defineArea } from '../../lib/manifest/define.ts';
import type { StorageEventSpec } from '../../lib/manifest/types.ts';

const area = defineArea({ name: 'watch', entryPoints: [{ kind: 'storageEvent', handler: 'seen', bucket: 'blobs', prefix: 'in/', timeoutSec: 5 }] });
const spec = area.entryPoints[0] as StorageEventSpec;

const s3rverEvent = (eventName: string, bucket: string, key: string) => ({
  Records: [{ eventName, s3: { bucket: { name: bucket }, object: { key, size: 3 } } }],
});

function harness(run: (key: string) => Promise<void>) {
  const lines: string[] = [];
  const ports = {
    config: { BUCKET_PREFIX: 'local-' },
    log: createLogger('debug', {}, (l) => lines.push(l)),
    clock: { now: () => Date.now() },
  } as unknown as Ports;
  let emit: (event: unknown) => void = () => undefined;
  const bound: BoundStorageEvent = { spec, definition: defineStorageEvent({ run: ({ object }) => run(object.key) }), area };
  const events = startLocalStorageEvents({
    storageEvents: [bound],
    ports,
    subscribe: (listener) => {
      emit = listener;
      return () => (emit = () => undefined);
    },
    retryDelayMs: () => 0,
  });
  return { events, emit: (event: unknown) => emit(event), lines: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe('local storage events', () => {
  it('retries a failing run until it succeeds, and runs nothing for removals, other prefixes or other buckets', async () => {
    // Prepare
    const calls: string[] = [];
    const { events, emit } = harness(async (key) => {
      calls.push(key);
      if (calls.length < STORAGE_EVENT_ATTEMPTS) throw new Error('not yet');
    });

    // Act
    emit(s3rverEvent('ObjectCreated:Put', 'local-blobs', 'in/a.txt'));
    emit(s3rverEvent('ObjectRemoved:Delete', 'local-blobs', 'in/b.txt'));
    emit(s3rverEvent('ObjectCreated:Put', 'local-blobs', 'out/c.txt'));
    emit(s3rverEvent('ObjectCreated:Put', 'local-other', 'in/d.txt'));
    await events.idle();
    await events.close();

    // Assess
    expect(calls).toEqual(['in/a.txt', 'in/a.txt', 'in/a.txt']);
  });

  it('gives up after the last attempt and says so at error', async () => {
    // Prepare
    let calls = 0;
    const { events, emit, lines } = harness(async () => {
      calls += 1;
      throw new Error('never');
    });

    // Act
    emit(s3rverEvent('ObjectCreated:Copy', 'local-blobs', 'in/e.txt'));
    await events.idle();
    await events.close();

    // Assess
    expect(calls).toBe(STORAGE_EVENT_ATTEMPTS);
    expect(lines().filter((l) => l['level'] === 'error')).toMatchObject([
      { message: 'storage event given up', key: 'in/e.txt', attempts: STORAGE_EVENT_ATTEMPTS },
    ]);
  });
});

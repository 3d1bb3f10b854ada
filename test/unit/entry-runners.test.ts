/**
 * The runners both wirings share for queue and storage-event entry points: payloads checked by the
 * handler's schema before it runs (and never retried when refused), the area's view of the ports,
 * the timeout, and one outcome line; and the reading of S3 notifications (URL-encoded keys).
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineQueue, runQueueTask, type BoundQueue } from '../../functions/core/entry/queue.ts';
import {
  createdObjectsOf,
  defineStorageEvent,
  runStorageEvent,
  validateStorageEvents,
  type BoundStorageEvent,
} from '../../functions/core/entry/storage-event.ts';
import { createLogger } from '../../functions/core/logger.ts';
import type { Ports } from '../../functions/ports.ts';
import { defineArea } from '../../lib/manifest/define.ts';
import type { QueueSpec, StorageEventSpec } from '../../lib/manifest/types.ts';

const area = defineArea({
  name: 'runner',
  entryPoints: [
    { kind: 'queue', handler: 'work', maxAttempts: 3, timeoutSec: 5 },
    { kind: 'storageEvent', handler: 'react', bucket: 'blobs', prefix: 'in/', timeoutSec: 5 },
  ],
  uses: ['agents'],
});
const queueSpec = area.entryPoints[0] as QueueSpec;
const storageSpec = area.entryPoints[1] as StorageEventSpec;

function fakePorts(lines: string[]): Ports {
  return {
    log: createLogger('debug', {}, (line) => lines.push(line)),
    clock: { now: () => Date.now() },
    agents: { label: 'agents' },
    actions: { label: 'actions' },
  } as unknown as Ports;
}

const parsedLines = (lines: string[]) => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('runQueueTask', () => {
  afterEach(() => vi.useRealTimers());

  it('runs the handler with the parsed payload, the attempt and the area’s ports, and logs the outcome', async () => {
    // Prepare
    const lines: string[] = [];
    const ports = fakePorts(lines);
    const seen: unknown[] = [];
    const definition = defineQueue({
      payload: z.object({ n: z.number(), label: z.string().default('none') }),
      run: async ({ payload, attempt, taskId, ports }) => void seen.push({ payload, attempt, taskId, agents: ports.agents }),
    });
    const bound: BoundQueue = { spec: queueSpec, definition, area };

    // Act
    const outcome = await runQueueTask(bound, ports, { taskId: 't-1', body: '{"n":2}', attempt: 2 });

    // Assess
    expect(outcome).toBe('succeeded');
    expect(seen).toEqual([{ payload: { n: 2, label: 'none' }, attempt: 2, taskId: 't-1', agents: ports.agents }]);
    expect(parsedLines(lines).at(-1)).toMatchObject({
      level: 'info',
      message: 'task run ended',
      outcome: 'succeeded',
      entryPoint: 'runner.work',
      taskId: 't-1',
    });
  });

  it('sets a payload the schema refuses aside without running the handler, naming the field', async () => {
    // Prepare
    const lines: string[] = [];
    let runs = 0;
    const definition = defineQueue({ payload: z.object({ n: z.number() }), run: async () => void (runs += 1) });

    // Act
    const refused = await runQueueTask({ spec: queueSpec, definition, area }, fakePorts(lines), { taskId: 't-2', body: '{"n":"two"}', attempt: 1 });
    const notJson = await runQueueTask({ spec: queueSpec, definition, area }, fakePorts(lines), { taskId: 't-3', body: '{n', attempt: 1 });

    // Assess
    expect(refused).toBe('invalid-payload');
    expect(notJson).toBe('invalid-payload');
    expect(runs).toBe(0);
    const errors = parsedLines(lines).filter((l) => l['level'] === 'error');
    expect(errors.map((l) => l['issues'])).toEqual([[expect.stringMatching(/^n: /)], ['the body is not JSON']]);
  });

  it('reports a failure as a warning while attempts remain and as an error on the last, including an undeclared port', async () => {
    // Prepare
    const lines: string[] = [];
    const definition = defineQueue({ payload: z.unknown(), run: async ({ ports }) => void ports.actions });
    const bound: BoundQueue = { spec: queueSpec, definition, area };

    // Act
    const first = await runQueueTask(bound, fakePorts(lines), { taskId: 't-4', body: 'null', attempt: 1 });
    const last = await runQueueTask(bound, fakePorts(lines), { taskId: 't-4', body: 'null', attempt: 3 });

    // Assess
    expect([first, last]).toEqual(['failed', 'failed']);
    const ended = parsedLines(lines).filter((l) => String(l['message']).startsWith('task run ended'));
    expect(ended.map((l) => l['level'])).toEqual(['warn', 'error']);
    expect(JSON.stringify(ended[0])).toContain('The runner area used the actions port without declaring it');
  });

  it('times out at the entry point’s timeout, aborting the handler’s signal', async () => {
    // Prepare
    vi.useFakeTimers();
    let aborted = false;
    const definition = defineQueue({
      payload: z.unknown(),
      run: ({ signal }) =>
        new Promise<void>((resolve) => {
          signal.addEventListener('abort', () => {
            aborted = true;
            resolve();
          });
        }),
    });

    // Act
    const running = runQueueTask({ spec: queueSpec, definition, area }, fakePorts([]), { taskId: 't-5', body: '1', attempt: 1 });
    await vi.advanceTimersByTimeAsync(queueSpec.timeoutSec * 1000);

    // Assess
    expect(await running).toBe('timed-out');
    expect(aborted).toBe(true);
  });
});

describe('storage events', () => {
  it('reads created objects from an S3 notification, decoding URL-encoded keys and leaving removals and other buckets out', () => {
    // Prepare
    const record = (eventName: string, bucket: string, key: string, extra: Record<string, unknown> = {}) => ({
      eventName,
      s3: { bucket: { name: bucket }, object: { key, size: 12, ...extra } },
    });
    const event = {
      Records: [
        record('ObjectCreated:Put', 'stack-blobs', 'in/report+1%2B2+%C3%A9.txt', { eTag: '"abc"' }),
        record('ObjectRemoved:Delete', 'stack-blobs', 'in/gone.txt'),
        record('ObjectCreated:Put', 'elsewhere', 'in/other.txt'),
      ],
    };

    // Act
    const cloud = createdObjectsOf(event, { bucketPrefix: 'stack-', keys: 'url-encoded' });
    const local = createdObjectsOf(
      { Records: [record('ObjectCreated:Copy', 'stack-blobs', 'in/a b+c%d.txt')] },
      { bucketPrefix: 'stack-', keys: 'as-written' },
    );

    // Assess
    expect(cloud).toEqual([{ bucket: 'blobs', key: 'in/report 1+2 é.txt', size: 12, etag: 'abc' }]);
    expect(local).toEqual([{ bucket: 'blobs', key: 'in/a b+c%d.txt', size: 12 }]);
    expect(() => createdObjectsOf({ Records: [{}] }, { bucketPrefix: '', keys: 'as-written' })).toThrow('Not an S3 event notification');
  });

  it('refuses a storage event on an undeclared bucket and two with overlapping prefixes on one bucket', () => {
    // Prepare
    const buckets = [{ name: 'blobs', purpose: 'test' }];
    const on = (handler: string, bucket: string, prefix: string): StorageEventSpec => ({
      kind: 'storageEvent',
      id: `a.${handler}`,
      area: 'a',
      handler,
      bucket,
      prefix,
      timeoutSec: 5,
    });

    // Act
    const unknownBucket = () => validateStorageEvents([on('x', 'photos', 'in/')], buckets);
    const overlapping = () => validateStorageEvents([on('x', 'blobs', 'in/'), on('y', 'blobs', 'in/deep/')], buckets);
    const disjoint = () => validateStorageEvents([on('x', 'blobs', 'in/'), on('y', 'blobs', 'out/')], buckets);

    // Assess
    expect(unknownBucket).toThrow('watches bucket "photos", which no area module declares (buckets: blobs)');
    expect(overlapping).toThrow('watch overlapping prefixes of bucket blobs');
    expect(disjoint).not.toThrow();
  });

  it('runs the handler with the object and the area’s ports, and reports a failure', async () => {
    // Prepare
    const lines: string[] = [];
    const seen: string[] = [];
    const ok: BoundStorageEvent = { spec: storageSpec, definition: defineStorageEvent({ run: async ({ object }) => void seen.push(object.key) }), area };
    const failing: BoundStorageEvent = { ...ok, definition: defineStorageEvent({ run: async () => Promise.reject(new Error('no')) }) };
    const object = { bucket: 'blobs', key: 'in/x.txt', size: 1 };

    // Act
    const outcomes = [await runStorageEvent(ok, fakePorts(lines), object, 1), await runStorageEvent(failing, fakePorts(lines), object, 1)];

    // Assess
    expect(outcomes).toEqual(['succeeded', 'failed']);
    expect(seen).toEqual(['in/x.txt']);
    expect(parsedLines(lines).map((l) => [l['level'], l['key'], l['entryPoint']])).toEqual([
      ['info', 'in/x.txt', 'runner.react'],
      ['warn', 'in/x.txt', 'runner.react'],
    ]);
  });
});

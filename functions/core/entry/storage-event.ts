import * as z from 'zod';
import type { AreaModule, BucketSpec, StorageEventSpec } from '../../../lib/manifest/types.ts';
import { portsForArea, type Ports } from '../../ports.ts';
import type { Logger } from '../logger.ts';
import { withSecretScope } from '../secret-scope.ts';
import { runWithDeadline, type RunOutcome } from './deadline.ts';

/**
 * Deliveries of one storage event before it is given up: Lambda's for an asynchronous invocation
 * (the first and two retries; the stack sets it explicitly), and the local dispatcher's.
 */
export const STORAGE_EVENT_ATTEMPTS = 3;

/** An object that was written. */
export interface StoredObject {
  /** The bucket's logical name (`blobs`), as area modules declare it. */
  readonly bucket: string;
  readonly key: string;
  readonly size: number;
  /** The object's ETag without quotes, when the event carries it (not for copies locally). */
  readonly etag?: string;
}

/** What a storage-event handler receives: its area's view of the platform, a log and the object. */
export interface StorageEventContext {
  readonly ports: Ports;
  readonly log: Logger;
  readonly object: StoredObject;
  /** Aborted when the entry point's timeout passes: stop work then. */
  readonly signal: AbortSignal;
}

/** A storage-event entry point's handler module exports one of these (`<handler>.storage.ts`). */
export interface StorageEventDefinition {
  readonly kind: 'storageEvent';
  run(ctx: StorageEventContext): Promise<void>;
}

export function defineStorageEvent(definition: { run(ctx: StorageEventContext): Promise<void> }): StorageEventDefinition {
  return { kind: 'storageEvent', run: (ctx) => definition.run(ctx) };
}

/** A storage-event entry point with its handler's definition and its area, as both wirings bind them. */
export interface BoundStorageEvent {
  readonly spec: StorageEventSpec;
  readonly definition: StorageEventDefinition;
  readonly area: AreaModule;
}

/**
 * Checked at start and at synth: each storage event names a bucket some module declares, and two
 * on one bucket never both match a key (S3 refuses overlapping notification prefixes, so the cloud
 * could not deliver what the local platform would).
 */
export function validateStorageEvents(entries: readonly StorageEventSpec[], buckets: readonly BucketSpec[]): void {
  for (const entry of entries) {
    if (!buckets.some((b) => b.name === entry.bucket))
      throw new Error(
        `Storage event ${entry.id} watches bucket "${entry.bucket}", which no area module declares (buckets: ${buckets.map((b) => b.name).join(', ') || 'none'}).`,
      );
    const overlapping = entries.find(
      (other) => other !== entry && other.bucket === entry.bucket && (other.prefix.startsWith(entry.prefix) || entry.prefix.startsWith(other.prefix)),
    );
    if (overlapping !== undefined)
      throw new Error(
        `Storage events ${entry.id} ("${entry.prefix}") and ${overlapping.id} ("${overlapping.prefix}") watch overlapping prefixes of bucket ${entry.bucket}; S3 refuses that.`,
      );
  }
}

/** The storage events `object` is for: on its bucket, under their prefix. */
export function storageEventsFor<T extends { readonly spec: StorageEventSpec }>(bound: readonly T[], object: StoredObject): T[] {
  return bound.filter((b) => b.spec.bucket === object.bucket && object.key.startsWith(b.spec.prefix));
}

const s3Event = z.object({
  Records: z
    .array(
      z.object({
        eventName: z.string(),
        s3: z.object({
          bucket: z.object({ name: z.string() }),
          object: z.object({ key: z.string(), size: z.number().optional(), eTag: z.string().optional() }),
        }),
      }),
    )
    .default([]),
});

/**
 * The objects an S3 event notification says were created, in buckets named `<bucketPrefix><logical
 * name>`; removals and other buckets are left out. S3 URL-encodes keys in notifications (form
 * encoding: a space is `+`), while s3rver reports them as written: `keys` says which.
 */
export function createdObjectsOf(event: unknown, options: { bucketPrefix: string; keys: 'url-encoded' | 'as-written' }): StoredObject[] {
  const parsed = s3Event.safeParse(event);
  if (!parsed.success) throw new Error(`Not an S3 event notification: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data.Records.flatMap((record) => {
    const { bucket, object } = record.s3;
    if (!record.eventName.startsWith('ObjectCreated:') || !bucket.name.startsWith(options.bucketPrefix)) return [];
    const key = options.keys === 'url-encoded' ? decodeURIComponent(object.key.replace(/\+/g, ' ')) : object.key;
    const etag = object.eTag?.replace(/"/g, '');
    return [{ bucket: bucket.name.slice(options.bucketPrefix.length), key, size: object.size ?? 0, ...(etag ? { etag } : {}) }];
  });
}

/**
 * Runs one storage event's handler for one object, the same way in both wirings: the area's view
 * of the platform, the timeout, secrets scrubbed from what it logs, and a log line with the
 * outcome. A failure is reported, not thrown: retrying is the wiring's part.
 */
export async function runStorageEvent(bound: BoundStorageEvent, ports: Ports, object: StoredObject, attempt?: number): Promise<RunOutcome> {
  return withSecretScope(async () => {
    const log = ports.log.child({ entryPoint: bound.spec.id, bucket: object.bucket, key: object.key, ...(attempt === undefined ? {} : { attempt }) });
    const started = ports.clock.now();
    const { outcome, error } = await runWithDeadline(bound.spec.timeoutSec, `storage event ${bound.spec.id} for ${object.key}`, (signal) =>
      bound.definition.run({ ports: portsForArea(ports, bound.area), log, object, signal }),
    );
    const durationMs = ports.clock.now() - started;
    if (outcome === 'succeeded') log.info('storage event run ended', { outcome, durationMs });
    else log.warn('storage event run ended', { outcome, durationMs, error });
    return outcome;
  });
}

import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import * as z from 'zod';
import type { BucketObjects, OpenedObject } from '../core/files/bucket-objects.ts';

/** What a cache invalidation answers: SPEC part 3, initially `InProgress` where a cache exists. */
export interface SiteCacheInvalidation {
  readonly invalidationId: string;
  readonly status: string;
}

/** The cache in front of the site host, which owners clear after changing their files. */
export interface SiteCache {
  /**
   * Drops `paths` (site-host paths such as `/alice/*`, URL-encoded) from the cache. The caller
   * reference makes a retried request the same invalidation rather than a second one.
   */
  invalidate(paths: readonly string[], callerReference: string): Promise<SiteCacheInvalidation>;
  /**
   * Where the site host reads files: the bucket itself, or (locally) the bucket through a cache in
   * this process's memory. Resolves once every write to the bucket already answered has reached
   * that cache, so what it then serves is never older than such a write. Absent in the cloud,
   * where CloudFront is the cache and each function instance sees only its own requests.
   */
  readonly files?: (bucket: SiteFileSource) => Promise<SiteFileSource>;
}

export type SiteFileSource = Pick<BucketObjects, 'open'>;

/** What tells the local cache about every write to the bucket, whoever made it (presigned uploads too). */
export interface SiteWriteNotices {
  /** The bucket's physical name, as the notifications name it. */
  readonly bucket: string;
  /** s3rver's S3-style notifications (`{ Records: [...] }`) of every object written or removed, and bulk changes (`{ bucket }`). */
  readonly subscribe: (listener: (event: unknown) => void) => () => void;
  /** Resolves once the notifications of every write already answered have been delivered. */
  readonly flush: () => Promise<void>;
}

/** Bytes of files the local cache holds; the least recently served go first. */
export const SITE_CACHE_MAX_BYTES = 32 * 1024 * 1024;
/** A larger file is streamed from the bucket every time rather than held. */
export const SITE_CACHE_MAX_FILE_BYTES = 1024 * 1024;
/** What a remembered miss or a key counts for, beyond its body. */
const ENTRY_OVERHEAD_BYTES = 200;

interface CachedFile {
  /** Null: no such object (a remembered miss, which matters for folders and 404 pages). */
  readonly object: { readonly body: Buffer; readonly contentType: string | undefined; readonly etag: string | undefined } | null;
  readonly bytes: number;
}

/** A read from the bucket under way: a write to its key meanwhile makes its result unfit to keep. */
interface Load {
  stale: boolean;
}

const connectors = new WeakMap<SiteCache, (notices: SiteWriteNotices) => () => void>();

/**
 * The local site host's cache: site files (key to ETag, content type and body; bounded by
 * SITE_CACHE_MAX_BYTES, least recently used out first) in this process's memory. It serves
 * nothing until `connectLocalSiteCache` hands it the bucket's write notifications: every write
 * and removal (API uploads and deletes, presigned uploads published by the storage event, any
 * other writer) drops its key when its notification arrives, and before serving from memory a
 * read waits for the notifications of every write already answered (`flush`, one IPC round trip,
 * shared by the reads that arrive together). An invalidation clears it all: the notifications
 * already keep it true, so that is only the owner's explicit word. Invalidations complete at once,
 * with a `local-` id.
 */
export function createLocalSiteCache(options: { maxBytes?: number; maxFileBytes?: number } = {}): SiteCache {
  const maxBytes = options.maxBytes ?? SITE_CACHE_MAX_BYTES;
  const maxFileBytes = Math.min(options.maxFileBytes ?? SITE_CACHE_MAX_FILE_BYTES, maxBytes);
  // A Map iterates in insertion order: re-inserting on each hit makes its first key the least recently used.
  const entries = new Map<string, CachedFile>();
  const loads = new Map<string, Set<Load>>();
  let held = 0;
  let notices: SiteWriteNotices | null = null;
  let pendingFlush: Promise<void> | null = null;

  const drop = (key: string) => {
    const entry = entries.get(key);
    if (entry !== undefined) {
      entries.delete(key);
      held -= entry.bytes;
    }
    for (const load of loads.get(key) ?? []) load.stale = true;
  };
  const clear = () => {
    entries.clear();
    held = 0;
    for (const set of loads.values()) for (const load of set) load.stale = true;
  };
  const keep = (key: string, entry: CachedFile) => {
    drop(key);
    if (entry.bytes > maxBytes) return;
    entries.set(key, entry);
    held += entry.bytes;
    for (const [oldest, old] of entries) {
      if (held <= maxBytes) break;
      entries.delete(oldest);
      held -= old.bytes;
    }
  };
  // Reads arriving before the flush is sent share it: it is sent after each of them arrived.
  const synced = () =>
    (pendingFlush ??= new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        pendingFlush = null;
        (notices?.flush() ?? Promise.resolve()).then(resolve, reject);
      });
    }));

  const onNotice = (event: unknown) => {
    if (notices === null) return;
    const { bucket } = notices;
    const parsed = siteNotice.safeParse(event);
    // Unreadable: whatever it changed, nothing held may be older than it.
    if (!parsed.success) return clear();
    if ('bucket' in parsed.data) {
      if (parsed.data.bucket === bucket) clear();
      return;
    }
    for (const record of parsed.data.Records) if (record.s3.bucket.name === bucket) drop(record.s3.object.key);
  };

  const open = async (source: SiteFileSource, key: string, head: boolean): Promise<OpenedObject | null> => {
    const entry = entries.get(key);
    if (entry !== undefined) {
      entries.delete(key);
      entries.set(key, entry);
      if (entry.object === null) return null;
      const { body, contentType, etag } = entry.object;
      return { body: head ? null : Readable.from(body), contentType, etag, size: body.length };
    }
    const load: Load = { stale: false };
    let set = loads.get(key);
    if (set === undefined) loads.set(key, (set = new Set()));
    set.add(load);
    try {
      const object = await source.open(key, { head });
      if (object === null) {
        if (!load.stale) keep(key, { object: null, bytes: ENTRY_OVERHEAD_BYTES + key.length });
        return null;
      }
      // HEAD read no body to keep; a large file streams through.
      if (head || object.body === null || object.size > maxFileBytes) return object;
      const chunks: Buffer[] = [];
      for await (const chunk of object.body) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      if (!load.stale)
        keep(key, { object: { body, contentType: object.contentType, etag: object.etag }, bytes: ENTRY_OVERHEAD_BYTES + key.length + body.length });
      return { ...object, body: Readable.from(body), size: body.length };
    } finally {
      set.delete(load);
      if (set.size === 0) loads.delete(key);
    }
  };

  const cache: SiteCache = {
    invalidate() {
      clear();
      return Promise.resolve({ invalidationId: `local-${randomUUID()}`, status: 'Completed' });
    },
    async files(source) {
      if (notices === null) return source;
      await synced();
      return { open: (key, options = {}) => open(source, key, options.head === true) };
    },
  };
  connectors.set(cache, (given) => {
    notices = given;
    clear();
    const unsubscribe = given.subscribe(onNotice);
    return () => {
      unsubscribe();
      notices = null;
      clear();
    };
  });
  return cache;
}

/**
 * Lets a local site cache serve from memory, kept true by `notices`; returns the disconnect. A
 * cache of another kind (CloudFront's) is left alone: the answer is a no-op.
 */
export function connectLocalSiteCache(cache: SiteCache, notices: SiteWriteNotices): () => void {
  return connectors.get(cache)?.(notices) ?? (() => undefined);
}

/** The parts of a notification the cache reads: which keys of which bucket changed. */
const siteNotice = z.union([
  z.object({ bucket: z.string() }),
  z.object({ Records: z.array(z.object({ s3: z.object({ bucket: z.object({ name: z.string() }), object: z.object({ key: z.string() }) }) })) }),
]);

/**
 * CloudFront's CreateInvalidation on the site distribution. The SDK is imported on the first call,
 * so no other route's bundle or start pays for it.
 */
export function createCloudFrontSiteCache(options: {
  distributionId: string;
  region: string;
  /** Another endpoint and fixed credentials: tests point the adapter at moto. */
  endpoint?: string | undefined;
  credentials?: { accessKeyId: string; secretAccessKey: string };
}): SiteCache {
  let client: Promise<{ send: (paths: readonly string[], ref: string) => Promise<SiteCacheInvalidation> }> | undefined;
  const load = async () => {
    const { CloudFrontClient, CreateInvalidationCommand } = await import('@aws-sdk/client-cloudfront');
    const cloudFront = new CloudFrontClient({
      region: options.region,
      ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
      ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    });
    return {
      async send(paths: readonly string[], ref: string) {
        const out = await cloudFront.send(
          new CreateInvalidationCommand({
            DistributionId: options.distributionId,
            InvalidationBatch: { CallerReference: ref, Paths: { Quantity: paths.length, Items: [...paths] } },
          }),
        );
        const invalidation = out.Invalidation;
        if (invalidation?.Id === undefined) throw new Error('CloudFront answered CreateInvalidation without an invalidation id');
        return { invalidationId: invalidation.Id, status: invalidation.Status ?? 'InProgress' };
      },
    };
  };
  return {
    async invalidate(paths, callerReference) {
      // A failed load (it cannot, short of a broken install) is tried again by the next call.
      client ??= load().catch((error: unknown) => {
        client = undefined;
        throw error;
      });
      return (await client).send(paths, callerReference);
    },
  };
}

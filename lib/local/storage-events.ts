import {
  createdObjectsOf,
  runStorageEvent,
  STORAGE_EVENT_ATTEMPTS,
  storageEventsFor,
  type BoundStorageEvent,
  type StoredObject,
} from '../../functions/core/entry/storage-event.ts';
import type { Ports } from '../../functions/ports.ts';

/** The local stand-in for S3 event notifications to Lambda behind `npm start`. */
export interface LocalStorageEvents {
  /** Resolves once no storage-event handler is running or waiting to be retried. */
  idle(): Promise<void>;
  /** Stops listening and waits for the runs in progress; a retry not yet started is dropped (and logged). */
  close(): Promise<void>;
}

export interface LocalStorageEventsOptions {
  readonly storageEvents: readonly BoundStorageEvent[];
  readonly ports: Ports;
  /** Subscribes to s3rver's S3-style notifications; returns the unsubscribe. */
  readonly subscribe: (listener: (event: unknown) => void) => () => void;
  /** Resolves once the notifications of every write already answered have been delivered (the stores run in their own process). @default none to wait for */
  readonly flush?: () => Promise<void>;
  /** The wait before the attempt after `attempt` failed. @default 1 s, then 2 s */
  readonly retryDelayMs?: (attempt: number) => number;
}

/**
 * Runs the storage events of every object created in the local blob store: s3rver emits an S3-style
 * notification for each PutObject, presigned PUT, POST, copy and completed multipart upload, before
 * it answers the writer, so a client that saw its write succeed can wait for `idle()`, which first
 * lets the notifications already sent arrive (`flush`). Like Lambda
 * for S3's asynchronous invocations, a failed run is retried up to STORAGE_EVENT_ATTEMPTS in all,
 * then given up and logged at error; unlike the local task queue nothing is persisted, as S3 does
 * not keep undelivered events either.
 */
export function startLocalStorageEvents(options: LocalStorageEventsOptions): LocalStorageEvents {
  const { ports } = options;
  const retryDelayMs = options.retryDelayMs ?? ((attempt: number) => 1000 * attempt);
  const running = new Set<Promise<void>>();
  const waits = new Set<() => void>();
  let closed = false;

  const pause = (ms: number) =>
    new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waits.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      timer.unref();
      waits.add(done);
    });

  const dispatch = async (bound: BoundStorageEvent, object: StoredObject) => {
    for (let attempt = 1; attempt <= STORAGE_EVENT_ATTEMPTS; attempt++) {
      if ((await runStorageEvent(bound, ports, object, attempt)) === 'succeeded') return;
      if (attempt === STORAGE_EVENT_ATTEMPTS) break;
      await pause(retryDelayMs(attempt));
      if (closed) {
        ports.log.warn('storage event dropped: the platform stopped before its retry', { entryPoint: bound.spec.id, key: object.key, attempts: attempt });
        return;
      }
    }
    ports.log.error('storage event given up', { entryPoint: bound.spec.id, bucket: object.bucket, key: object.key, attempts: STORAGE_EVENT_ATTEMPTS });
  };

  // Called from the stores process's message event, where a throw would end the platform: any
  // failure to read or start the runs is logged instead.
  const unsubscribe = options.subscribe((event) => {
    // A bulk delete's notice (`{ bucket }`, stores-process.ts) creates nothing.
    if (closed || (typeof event === 'object' && event !== null && !('Records' in event))) return;
    try {
      // s3rver reports keys as written, where S3 URL-encodes them.
      const objects = createdObjectsOf(event, { bucketPrefix: ports.config.BUCKET_PREFIX, keys: 'as-written' });
      for (const object of objects) {
        for (const bound of storageEventsFor(options.storageEvents, object)) {
          const run = dispatch(bound, object)
            .catch((error: unknown) => ports.log.error('storage event dispatch failed', { entryPoint: bound.spec.id, key: object.key, error }))
            .finally(() => running.delete(run));
          running.add(run);
        }
      }
    } catch (error) {
      ports.log.error('unreadable blob store event', { error });
    }
  });

  return {
    async idle() {
      await options.flush?.();
      while (running.size > 0) await Promise.allSettled([...running]);
    },
    async close() {
      closed = true;
      unsubscribe();
      for (const wake of [...waits]) wake();
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}

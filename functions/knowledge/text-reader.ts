import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import * as z from 'zod';
import type { ExtractionLimits, TextKind } from './extract-text.ts';
import { readChunks, TEXT_WORKER_MARK, type TextJob, type TextJobResult } from './text-worker.ts';

/**
 * What reading a file's text gave: all of it in chunks; part of it (`truncated`: a limit cut it,
 * `message` says which); or nothing (`failed`: unreadable, or over the time or memory a read may take).
 */
export type TextReading =
  | { readonly status: 'indexed'; readonly chunks: readonly string[] }
  | { readonly status: 'truncated'; readonly chunks: readonly string[]; readonly message: string }
  | { readonly status: 'failed'; readonly message: string };

/** Reads files' text into chunks away from the request loop (the `knowledgeText` port). */
export interface TextReader {
  /** `owner`'s file of `kind`: its reads take turns with other owners' rather than queue behind them. */
  read(owner: string, kind: TextKind, bytes: Uint8Array): Promise<TextReading>;
}

export interface TextReaderSettings extends ExtractionLimits {
  /** Longest one file's read may take; the worker is then stopped. */
  readonly timeoutMs: number;
  /** Heap of each worker; a read needing more fails. */
  readonly memoryMb: number;
  /** Reads run at once, each in its own worker thread. */
  readonly workers: number;
}

/**
 * Plain text this small is read on the request loop: chunking is linear and takes well under a
 * millisecond here, less than handing the bytes to a thread. PDF, HTML and JSON always go to one.
 */
const INLINE_MAX_BYTES = 64 * 1024;
/** An idle worker (with pdf.js loaded, once it read a PDF) is stopped after this long. */
const IDLE_MS = 60_000;

/**
 * Set by the bundlers (esbuild `define`, lib/local/build.ts and lib/cloud/platform-function.ts) to
 * the URL of the bundled workers' directory, relative to the bundle; undefined when run from source.
 */
declare const PLATFORM_WORKERS_URL: string | undefined;

/**
 * The worker's script: its bundle beside this code's, or, from source (tsx, vitest), a module that
 * registers tsx in the new thread (Node 20 passes no loader hooks to worker threads) and imports
 * the TypeScript entry.
 */
function workerScript(name: string): URL {
  if (typeof PLATFORM_WORKERS_URL === 'string') return new URL(`${name}.mjs`, new URL(PLATFORM_WORKERS_URL, import.meta.url));
  // The package's ES module build (its CommonJS one cannot be imported by path).
  const tsx = pathToFileURL(
    createRequire(import.meta.url)
      .resolve('tsx/esm/api')
      .replace(/\.cjs$/, '.mjs'),
  ).href;
  const entry = new URL(`./${name}.ts`, import.meta.url).href;
  const source = `const { register } = await import(${JSON.stringify(tsx)}); register(); await import(${JSON.stringify(entry)});`;
  return new URL(`data:text/javascript,${encodeURIComponent(source)}`);
}

interface Job {
  readonly kind: TextKind;
  readonly bytes: Uint8Array;
  readonly resolve: (reading: TextReading) => void;
  readonly reject: (error: Error) => void;
}

type Outcome = { readonly kind: 'result'; readonly result: TextJobResult } | { readonly kind: 'timeout' } | { readonly kind: 'crash'; readonly error: Error };

function toReading(result: { chunks: string[]; truncated: string | null }): TextReading {
  return result.truncated === null ? { status: 'indexed', chunks: result.chunks } : { status: 'truncated', chunks: result.chunks, message: result.truncated };
}

export function createTextReader(settings: TextReaderSettings): TextReader {
  const limits: ExtractionLimits = { maxPages: settings.maxPages, maxChars: settings.maxChars };
  /** Waiting jobs by owner; the Map's order is the turn order (an owner served goes to the back). */
  const waiting = new Map<string, Job[]>();
  const idle: { worker: Worker; timer: NodeJS.Timeout }[] = [];
  let running = 0;
  let nextId = 1;

  function takeNext(): Job | undefined {
    for (const [owner, jobs] of waiting) {
      const job = jobs.shift();
      waiting.delete(owner);
      if (jobs.length > 0) waiting.set(owner, jobs);
      if (job !== undefined) return job;
    }
    return undefined;
  }

  function pump(): void {
    while (running < settings.workers) {
      const job = takeNext();
      if (job === undefined) return;
      running++;
      void runJob(job).finally(() => {
        running--;
        pump();
      });
    }
  }

  function idleWorker(): Worker {
    const kept = idle.pop();
    if (kept !== undefined) {
      clearTimeout(kept.timer);
      return kept.worker;
    }
    return new Worker(workerScript('text-worker'), {
      workerData: TEXT_WORKER_MARK,
      resourceLimits: { maxOldGenerationSizeMb: settings.memoryMb },
    });
  }

  function keep(worker: Worker): void {
    // Idle workers do not hold the process open, and go away after a while.
    worker.unref();
    const entry = {
      worker,
      timer: setTimeout(() => {
        idle.splice(idle.indexOf(entry), 1);
        void worker.terminate();
      }, IDLE_MS),
    };
    entry.timer.unref();
    idle.push(entry);
  }

  async function runJob(job: Job): Promise<void> {
    const worker = idleWorker();
    worker.ref();
    const id = nextId++;
    const outcome = await new Promise<Outcome>((resolve) => {
      const finish = (result: Outcome) => {
        clearTimeout(timer);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        resolve(result);
      };
      const onMessage = (result: TextJobResult) => {
        if (result.id === id) finish({ kind: 'result', result });
      };
      const onError = (error: Error) => finish({ kind: 'crash', error });
      const onExit = (code: number) => finish({ kind: 'crash', error: new Error(`the text worker exited with code ${code}`) });
      const timer = setTimeout(() => finish({ kind: 'timeout' }), settings.timeoutMs);
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.postMessage({ id, kind: job.kind, bytes: job.bytes, limits } satisfies TextJob);
    });
    if (outcome.kind !== 'result') {
      // A worker that ran out of time or memory is stopped; the next job gets a fresh one.
      void worker.terminate();
      if (outcome.kind === 'timeout') return job.resolve({ status: 'failed', message: `reading its text took longer than ${settings.timeoutMs / 1000} s` });
      const outOfMemory = (outcome.error as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';
      if (outOfMemory) return job.resolve({ status: 'failed', message: `reading its text needed more than ${settings.memoryMb} MB` });
      return job.reject(outcome.error);
    }
    keep(worker);
    const { result } = outcome;
    if (result.outcome === 'read') return job.resolve(toReading(result));
    if (result.outcome === 'unreadable') return job.resolve({ status: 'failed', message: result.reason });
    job.reject(new Error(`text extraction failed: ${result.message}`));
  }

  return {
    async read(owner, kind, bytes) {
      if ((kind === 'text' || kind === 'markdown' || kind === 'csv') && bytes.length <= INLINE_MAX_BYTES)
        return toReading(await readChunks(kind, bytes, limits));
      return new Promise<TextReading>((resolve, reject) => {
        const jobs = waiting.get(owner) ?? [];
        jobs.push({ kind, bytes, resolve, reject });
        waiting.set(owner, jobs);
        pump();
      });
    },
  };
}

/** The knowledge area's settings for reading files (its module's `settings`). */
export const textReadingSettings = {
  KNOWLEDGE_MAX_PDF_PAGES: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(500)
    .describe('PDF pages of one knowledge file that are read; a longer file is indexed up to them (`indexStatus: truncated`)'),
  // 5 MiB: a direct upload's text whole.
  KNOWLEDGE_MAX_TEXT_CHARS: z.coerce
    .number()
    .int()
    .min(1000)
    .max(100 * 1024 * 1024)
    .default(5 * 1024 * 1024)
    .describe("Characters of one knowledge file's text that are indexed; past them, `truncated`"),
  // Under the upload route's 29 s.
  KNOWLEDGE_READ_TIMEOUT_SEC: z.coerce
    .number()
    .min(1)
    .max(600)
    .default(20)
    .describe("Longest one knowledge file's text may take to read, in seconds; past it, `failed`"),
  KNOWLEDGE_READ_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(32)
    .max(4096)
    .default(256)
    .describe('Heap of a worker reading a knowledge file, in MiB; a file needing more is `failed`'),
  KNOWLEDGE_READ_WORKERS: z.coerce
    .number()
    .int()
    .min(1)
    .max(16)
    .default(2)
    .describe('Knowledge files read at once, each in a worker thread; more wait their turn, owner by owner'),
};

/** Declared here rather than read from `Config`, which is computed from the area list the module is part of. */
type TextReadingConfig = Readonly<z.infer<z.ZodObject<typeof textReadingSettings>>>;

export function textReaderFor(config: TextReadingConfig): TextReader {
  return createTextReader({
    maxPages: config.KNOWLEDGE_MAX_PDF_PAGES,
    maxChars: config.KNOWLEDGE_MAX_TEXT_CHARS,
    timeoutMs: config.KNOWLEDGE_READ_TIMEOUT_SEC * 1000,
    memoryMb: config.KNOWLEDGE_READ_MEMORY_MB,
    workers: config.KNOWLEDGE_READ_WORKERS,
  });
}

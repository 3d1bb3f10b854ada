/**
 * The knowledge area's worker thread (text-reader.ts starts it): reads a file's text and cuts it
 * into chunks off the request loop, one job at a time. Bundled on its own as `workers/text-worker.mjs`
 * beside the functions' bundles (lib/local/build.ts, lib/cloud/platform-function.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { chunkText } from '../search/chunk-text.ts';
import { ExtractionError, extractText, type ExtractionLimits, type TextKind } from './extract-text.ts';

export interface TextJob {
  readonly id: number;
  readonly kind: TextKind;
  readonly bytes: Uint8Array;
  readonly limits: ExtractionLimits;
}

export type TextJobResult =
  | { readonly id: number; readonly outcome: 'read'; readonly chunks: string[]; readonly truncated: string | null }
  | { readonly id: number; readonly outcome: 'unreadable'; readonly reason: string }
  | { readonly id: number; readonly outcome: 'error'; readonly message: string };

/** One job: the same code the request loop runs for small plain text (text-reader.ts). */
export async function readChunks(kind: TextKind, bytes: Uint8Array, limits: ExtractionLimits): Promise<{ chunks: string[]; truncated: string | null }> {
  const { text, truncated } = await extractText(kind, bytes, limits);
  return { chunks: chunkText(text), truncated };
}

/** What text-reader.ts passes as `workerData`: only a thread started as this worker answers jobs (not one merely importing it). */
export const TEXT_WORKER_MARK = 'knowledge-text-worker';

const port = parentPort;
if (port !== null && workerData === TEXT_WORKER_MARK)
  port.on('message', (job: TextJob) => {
    void readChunks(job.kind, job.bytes, job.limits).then(
      ({ chunks, truncated }) => port.postMessage({ id: job.id, outcome: 'read', chunks, truncated } satisfies TextJobResult),
      (error: unknown) =>
        port.postMessage(
          (error instanceof ExtractionError
            ? { id: job.id, outcome: 'unreadable', reason: error.message }
            : { id: job.id, outcome: 'error', message: (error as Error).message }) satisfies TextJobResult,
        ),
    );
  });

import { useRef, useState } from 'preact/hooks';
import { useApi, type Api } from '../../api.ts';
import { ErrorNote } from '../../ui/status.tsx';
import { formatBytes, joinPath, type PickedFile } from './files.ts';

export interface Upload {
  readonly id: number;
  /** Where it goes, inside the user's space (`notes/2026/a.md`). */
  readonly path: string;
  readonly size: number;
  readonly state: 'waiting' | 'uploading' | 'done' | 'failed';
  /** 0 to 1 while it is known (uploads to an upload URL); null while unknown. */
  readonly progress: number | null;
  readonly error?: unknown;
  /** What the upload added to say (how the file was indexed, ...). */
  readonly note?: string;
}

/** Sends one file; reports progress when it can; resolves with a note to show, or throws the API's error. */
export type UploadOne = (api: Api, file: PickedFile, folder: string, progress: (fraction: number) => void) => Promise<string | undefined>;

/**
 * A queue of uploads, two at a time, each with its own state and progress, so one refused file
 * (too large, over the quota) never stops the others; `onSettled` runs when the queue is empty.
 */
export function useUploads(uploadOne: UploadOne, onSettled: () => void) {
  const api = useApi();
  const [uploads, setUploads] = useState<readonly Upload[]>([]);
  const next = useRef(1);
  const update = (id: number, change: Partial<Upload>) => setUploads((all) => all.map((u) => (u.id === id ? { ...u, ...change } : u)));
  const add = async (files: readonly PickedFile[], target: string) => {
    const jobs = files.map((file) => ({ id: next.current++, file, folder: joinPath(target, file.folder) }));
    setUploads((all) => [
      ...all.filter((u) => u.state !== 'done'),
      ...jobs.map((job): Upload => ({ id: job.id, path: joinPath(job.folder, job.file.name), size: job.file.file.size, state: 'waiting', progress: 0 })),
    ]);
    const queue = [...jobs];
    const worker = async () => {
      for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
        const { id } = job;
        update(id, { state: 'uploading', progress: null });
        try {
          const note = await uploadOne(api, job.file, job.folder, (progress) => update(id, { progress }));
          update(id, { state: 'done', progress: 1, ...(note === undefined ? {} : { note }) });
        } catch (error) {
          update(id, { state: 'failed', error, progress: 0 });
        }
      }
    };
    await Promise.all([worker(), worker()]);
    onSettled();
  };
  return { uploads, add, clear: () => setUploads((all) => all.filter((u) => u.state === 'uploading' || u.state === 'waiting')) };
}

const STATE_WORDS: Record<Upload['state'], string> = { waiting: 'waiting', uploading: 'uploading', done: 'uploaded', failed: 'failed' };

/** The uploads, each with a labelled progress bar and its state in words (never only a colour). */
export function UploadList(props: { uploads: readonly Upload[]; onClear: () => void }) {
  if (props.uploads.length === 0) return null;
  const done = props.uploads.filter((u) => u.state === 'done').length;
  const busy = props.uploads.some((u) => u.state === 'uploading' || u.state === 'waiting');
  return (
    <div class="uploads">
      <p role="status" aria-live="polite">
        {busy ? `Uploading: ${done} of ${props.uploads.length} done.` : `Uploads finished: ${done} of ${props.uploads.length} uploaded.`}
        {busy ? null : (
          <>
            {' '}
            <button type="button" class="button button-link" onClick={props.onClear}>
              Clear the list
            </button>
          </>
        )}
      </p>
      <ul class="upload-list" aria-label="Uploads">
        {props.uploads.map((u) => (
          <li key={u.id} class={`upload upload-${u.state}`}>
            <span class="upload-name">
              <code>{u.path}</code> <span class="muted">{formatBytes(u.size)}</span>
            </span>
            <progress
              max={1}
              value={u.progress ?? undefined}
              aria-label={`Upload of ${u.path}`}
              aria-valuetext={u.progress === null ? STATE_WORDS[u.state] : `${Math.round(u.progress * 100)}%`}
            />
            <span class="upload-state">
              {STATE_WORDS[u.state]}
              {u.note === undefined ? null : <span class="muted"> · {u.note}</span>}
            </span>
            {u.state === 'failed' ? <ErrorNote error={u.error} /> : null}
          </li>
        ))}
      </ul>
    </div>
  );
}

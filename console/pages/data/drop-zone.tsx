import { useId, useRef, useState } from 'preact/hooks';
import { picked, type PickedFile } from './files.ts';

// What Chromium, Firefox and Safari give for a dropped item (the File and Directory Entries API).
interface Entry {
  readonly isFile: boolean;
  readonly isDirectory: boolean;
  readonly name: string;
  readonly fullPath: string;
}
interface FileEntry extends Entry {
  file(ok: (file: File) => void, failed: (error: unknown) => void): void;
}
interface DirectoryEntry extends Entry {
  createReader(): { readEntries(ok: (entries: Entry[]) => void, failed: (error: unknown) => void): void };
}

/** Every file under a dropped entry, with its path inside the drop (`site/css/a.css`). */
async function filesOf(entry: Entry): Promise<PickedFile[]> {
  const path = entry.fullPath.replace(/^\/+/, '') || entry.name;
  if (entry.isFile) {
    const file = await new Promise<File>((ok, failed) => (entry as FileEntry).file(ok, failed));
    return [picked(file, path)];
  }
  if (!entry.isDirectory) return [];
  const reader = (entry as DirectoryEntry).createReader();
  const children: Entry[] = [];
  // readEntries answers in batches (100 at a time in Chromium) until an empty one.
  for (;;) {
    const batch = await new Promise<Entry[]>((ok, failed) => reader.readEntries(ok, failed));
    if (batch.length === 0) break;
    children.push(...batch);
  }
  return (await Promise.all(children.map(filesOf))).flat();
}

/** The files of a drop, folders walked; entries are taken before the event ends (they expire with it). */
export async function filesOfDrop(data: DataTransfer): Promise<PickedFile[]> {
  const items = [...data.items].filter((item) => item.kind === 'file');
  const taken = items.map((item) => ({ entry: (item.webkitGetAsEntry?.() ?? null) as Entry | null, file: item.getAsFile() }));
  if (taken.length === 0) return [...data.files].map((file) => picked(file, file.name));
  const lists = await Promise.all(
    taken.map(({ entry, file }) => (entry !== null ? filesOf(entry) : Promise.resolve(file === null ? [] : [picked(file, file.name)]))),
  );
  return lists.flat();
}

/**
 * Where files come in: dropped (files and whole folders) or picked with the two buttons (files, or
 * a folder with everything in it). Each file keeps its path inside what was dropped or picked.
 */
export function DropZone(props: { label: string; hint?: string; onFiles: (files: PickedFile[]) => void; disabled?: boolean }) {
  const id = useId();
  const [over, setOver] = useState(false);
  const filesInput = useRef<HTMLInputElement>(null);
  const folderInput = useRef<HTMLInputElement>(null);
  const take = (list: FileList | null) => {
    const files = [...(list ?? [])].map((file) => picked(file, file.webkitRelativePath || file.name));
    if (files.length > 0) props.onFiles(files);
  };
  return (
    <div
      class={`drop-zone${over ? ' drop-zone-over' : ''}`}
      role="group"
      aria-labelledby={`${id}-label`}
      aria-describedby={props.hint === undefined ? undefined : `${id}-hint`}
      data-testid="drop-zone"
      onDragOver={(e) => {
        e.preventDefault();
        if (e.dataTransfer) e.dataTransfer.dropEffect = 'copy';
        setOver(true);
      }}
      onDragLeave={() => setOver(false)}
      onDrop={(e) => {
        e.preventDefault();
        setOver(false);
        if (props.disabled || !e.dataTransfer) return;
        void filesOfDrop(e.dataTransfer).then((files) => files.length > 0 && props.onFiles(files));
      }}
    >
      <p class="drop-zone-label" id={`${id}-label`}>
        {props.label}
      </p>
      {props.hint === undefined ? null : (
        <p class="hint" id={`${id}-hint`}>
          {props.hint}
        </p>
      )}
      <div class="drop-zone-buttons">
        <input
          ref={filesInput}
          id={`${id}-files`}
          class="visually-hidden"
          type="file"
          multiple
          tabIndex={-1}
          aria-label="Files to upload"
          onChange={(e) => {
            take((e.currentTarget as HTMLInputElement).files);
            (e.currentTarget as HTMLInputElement).value = '';
          }}
        />
        <input
          ref={folderInput}
          id={`${id}-folder`}
          class="visually-hidden"
          type="file"
          multiple
          tabIndex={-1}
          aria-label="Folder to upload"
          // Chromium, Firefox and Safari pick a folder (with everything in it) with this attribute.
          {...{ webkitdirectory: true }}
          onChange={(e) => {
            take((e.currentTarget as HTMLInputElement).files);
            (e.currentTarget as HTMLInputElement).value = '';
          }}
        />
        <button type="button" class="button" disabled={props.disabled} onClick={() => filesInput.current?.click()}>
          Choose files…
        </button>
        <button type="button" class="button" disabled={props.disabled} onClick={() => folderInput.current?.click()}>
          Choose a folder…
        </button>
      </div>
    </div>
  );
}

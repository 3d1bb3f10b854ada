import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { useApi, type Api } from '../../api.ts';
import { ErrorNote, Loading } from '../../ui/status.tsx';

export interface TreeFolder {
  readonly key: string;
  readonly name: string;
  /** The folder's path inside the user's space (`notes/2026`), as uploads and new folders take it. */
  readonly path: string;
}
export interface TreeFile {
  readonly key: string;
  readonly name: string;
  readonly path: string;
  readonly size: number;
}
export interface TreeListing<F extends TreeFile> {
  readonly folders: readonly TreeFolder[];
  readonly files: readonly F[];
  readonly nextCursor: string | null;
}

export interface TreeProps<F extends TreeFile> {
  /** The accessible name of the tree. */
  readonly label: string;
  /** One page of a folder's children ('' is the top). */
  readonly load: (api: Api, folder: string, cursor: string | undefined) => Promise<TreeListing<F>>;
  /** Changed after every change the page made: open folders load again. */
  readonly version: number;
  readonly file: (file: F) => ComponentChildren;
  readonly folderActions: (folder: TreeFolder) => ComponentChildren;
  readonly empty: ComponentChildren;
}

/**
 * A file tree: nested lists, each folder a button that opens it (its children loaded then, page by
 * page with "More"), so it is used by keyboard and read by screen readers as lists without any
 * special keys to learn.
 */
export function FileTree<F extends TreeFile>(props: TreeProps<F>) {
  return (
    <div class="tree" role="region" aria-label={props.label}>
      <FolderChildren {...props} folder="" depth={0} />
    </div>
  );
}

function FolderChildren<F extends TreeFile>(props: TreeProps<F> & { folder: string; depth: number }) {
  const api = useApi();
  const [pages, setPages] = useState<TreeListing<F>[] | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const loadFirst = () => {
    let current = true;
    setError(undefined);
    props.load(api, props.folder, undefined).then(
      (page) => current && setPages([page]),
      (e: unknown) => current && setError(e),
    );
    return () => {
      current = false;
    };
  };
  useEffect(loadFirst, [api, props.folder, props.version]);
  const more = async (cursor: string) => {
    setBusy(true);
    try {
      const page = await props.load(api, props.folder, cursor);
      setPages((all) => [...(all ?? []), page]);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  if (error !== undefined && pages === null) return <ErrorNote error={error} />;
  if (pages === null) return <Loading what={props.folder === '' ? 'files' : `${props.folder}`} />;
  const folders = pages.flatMap((p) => p.folders);
  const files = pages.flatMap((p) => p.files);
  const cursor = pages[pages.length - 1]?.nextCursor ?? null;
  if (folders.length === 0 && files.length === 0) return props.depth === 0 ? <p class="empty">{props.empty}</p> : <p class="tree-empty muted">Empty folder</p>;
  return (
    <>
      <ul class="tree-list">
        {folders.map((folder) => (
          <FolderItem {...props} key={folder.key} entry={folder} />
        ))}
        {files.map((file) => (
          <li key={file.key} class="tree-item tree-file">
            {props.file(file)}
          </li>
        ))}
      </ul>
      <ErrorNote error={error} />
      {cursor === null ? null : (
        <button type="button" class="button tree-more" disabled={busy} aria-busy={busy || undefined} onClick={() => void more(cursor)}>
          More in {props.folder === '' ? 'this list' : props.folder}
        </button>
      )}
    </>
  );
}

function FolderItem<F extends TreeFile>(props: TreeProps<F> & { entry: TreeFolder; depth: number }) {
  const [open, setOpen] = useState(false);
  const { entry } = props;
  return (
    <li class="tree-item tree-folder">
      <div class="tree-row">
        <button type="button" class="tree-toggle" aria-expanded={open} onClick={() => setOpen(!open)}>
          <span aria-hidden="true" class="tree-icon">
            {open ? '▾' : '▸'}
          </span>
          <span class="tree-name">{entry.name}/</span>
          <span class="visually-hidden"> folder</span>
        </button>
        <span class="tree-actions">{props.folderActions(entry)}</span>
      </div>
      {open ? (
        <div class="tree-children">
          <FolderChildren {...props} folder={entry.path} depth={props.depth + 1} />
        </div>
      ) : null}
    </li>
  );
}

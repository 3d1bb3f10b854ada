import { useRef, useState } from 'preact/hooks';
import { dataOf, useSubmit, type Api } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { Button, ConfirmButton, Form, TextInput } from '../ui/form.tsx';
import { Page, Section } from '../ui/page.tsx';
import { Badge, Empty, ErrorNote, Notice } from '../ui/status.tsx';
import { DropZone } from './data/drop-zone.tsx';
import { contentTypeOf, encodedContent, formatBytes, formatMb, downloadFrom, putWithProgress, type PickedFile } from './data/files.ts';
import { Highlight } from './data/highlight.tsx';
import { FileTree, type TreeFile, type TreeFolder, type TreeListing } from './data/tree.tsx';
import { UploadList, useUploads, type UploadOne } from './data/uploads.tsx';

/** Direct uploads carry at most 5 MB; base64 grows a file by a third, so binary files go direct up to 4 MB (under the cloud's 6 MB request limit). */
const DIRECT_TEXT_MAX = 5 * 1024 * 1024;
const DIRECT_BINARY_MAX = 4 * 1024 * 1024;

interface KnowledgeFile extends TreeFile {
  readonly indexStatus: string;
  readonly indexMessage?: string | undefined;
  readonly lastModified: string;
}

/** A key's path inside the user's space: `users/{userId}/notes/a.md` → `notes/a.md`. */
function spacePath(key: string): string {
  return key.replace(/^users\/[^/]+\//, '').replace(/\/$/, '');
}

const INDEX_TONES: Record<string, 'ok' | 'bad' | 'warn' | 'neutral'> = { indexed: 'ok', truncated: 'warn', failed: 'bad', rejected: 'bad' };

const uploadKnowledge: UploadOne = async (api, picked, folder, progress) => {
  const { file, name } = picked;
  const contentType = contentTypeOf(file, name);
  const target = folder === '' ? {} : { folder };
  if (file.size <= DIRECT_TEXT_MAX) {
    const { content, base64 } = await encodedContent(file);
    if (!base64 || file.size <= DIRECT_BINARY_MAX) {
      const done = await dataOf(api.client.POST('/knowledge/upload', { body: { fileName: name, content, contentType, isBase64: base64, ...target } }));
      return done.indexMessage ?? done.indexStatus;
    }
  }
  // Larger files go to an upload URL; the size is signed into it, so one over the limit is refused here, at once.
  const url = await dataOf(api.client.POST('/knowledge/upload-url', { body: { fileName: name, contentType, size: file.size, ...target } }));
  await putWithProgress(url.uploadUrl, url.headers, file, progress);
  return 'indexed when the platform has checked it';
};

export default function Knowledge(_props: PageProps) {
  const [version, setVersion] = useState(0);
  const refresh = () => setVersion((v) => v + 1);
  const [usage, setUsage] = useState<{ used: number; quota: number } | null>(null);
  const [target, setTarget] = useState('');
  const dropZone = useRef<HTMLDivElement>(null);
  const uploads = useUploads(uploadKnowledge, refresh);

  const load = async (api: Api, folder: string, cursor: string | undefined): Promise<TreeListing<KnowledgeFile>> => {
    const page = await dataOf(
      api.client.GET('/knowledge/list', { params: { query: { limit: 100, ...(folder === '' ? {} : { prefix: folder }), ...(cursor ? { cursor } : {}) } } }),
    );
    setUsage({ used: page.storageUsedMb, quota: page.storageQuotaMb });
    return {
      folders: page.folders.map((f) => ({ key: f.key, name: f.fileName, path: spacePath(f.key) })),
      files: page.files.map((f) => ({
        key: f.key,
        name: f.fileName,
        path: spacePath(f.key),
        size: f.size,
        indexStatus: f.indexStatus,
        indexMessage: f.indexMessage ?? f.rejectedReason,
        lastModified: f.lastModified,
      })),
      nextCursor: page.nextCursor,
    };
  };
  const download = useSubmit(async (api, key: string) => {
    const { downloadUrl } = await dataOf(api.client.POST('/knowledge/download-url', { body: { key } }));
    downloadFrom(downloadUrl);
    return downloadUrl;
  });
  const remove = useSubmit((api, key: string) => dataOf(api.client.DELETE('/knowledge/delete', { body: { key } })));
  const removeFolder = useSubmit((api, key: string) => dataOf(api.client.POST('/knowledge/delete-folder', { body: { key } })));
  const changeError = download.error ?? remove.error ?? removeFolder.error;

  return (
    <Page
      title="Knowledge"
      lead="Files your agents can search and read. Text, Markdown, CSV, JSON, HTML and PDF files are indexed for search when they arrive."
    >
      <p class="usage-line" aria-live="polite">
        {usage === null ? null : (
          <>
            Storage: {formatMb(usage.used)} of {formatMb(usage.quota)} used
            <meter min={0} max={usage.quota} value={usage.used} aria-label="Knowledge storage used" />
          </>
        )}
      </p>
      <Section title="Upload">
        <div class="upload-target">
          <TextInput
            label="Into folder"
            hint="Empty for the top. Nested folders with “/”; a dropped folder keeps its own folders inside this one."
            placeholder="notes/2026"
            value={target}
            onValue={setTarget}
          />
        </div>
        <div ref={dropZone}>
          <DropZone
            label={`Drop files or folders here to upload them into ${target.trim() === '' ? 'the top folder' : target.trim()}`}
            hint="Up to 5 MB a file directly; larger files (up to the limit the platform sets, 50 MB unless configured) through an upload link."
            onFiles={(files: PickedFile[]) => void uploads.add(files, target.trim())}
          />
        </div>
        <UploadList uploads={uploads.uploads} onClear={uploads.clear} />
        <NewFolder parent={target.trim()} onCreated={refresh} />
      </Section>
      <Section title="Files">
        <ErrorNote error={changeError} />
        <FileTree<KnowledgeFile>
          label="Knowledge files"
          load={load}
          version={version}
          empty="No files yet: drop some above."
          file={(f) => (
            <div class="tree-row">
              <span class="tree-name">{f.name}</span>
              <span class="muted tree-meta">{formatBytes(f.size)}</span>
              <Badge tone={INDEX_TONES[f.indexStatus] ?? 'neutral'}>{f.indexStatus}</Badge>
              {f.indexMessage === undefined ? null : <span class="muted tree-meta">{f.indexMessage}</span>}
              <span class="tree-actions">
                <Button variant="link" onClick={() => void download.run(f.key)} aria-label={`Download ${f.path}`}>
                  Download
                </Button>
                <ConfirmButton label="Delete" confirm={`Delete ${f.path}?`} busy={remove.busy} onConfirm={async () => (await remove.run(f.key)) && refresh()} />
              </span>
            </div>
          )}
          folderActions={(folder: TreeFolder) => (
            <>
              <Button
                variant="link"
                aria-label={`Upload here, into ${folder.path}`}
                onClick={() => {
                  setTarget(folder.path);
                  dropZone.current?.querySelector('button')?.focus();
                }}
              >
                Upload here
              </Button>
              <ConfirmButton
                label="Delete folder"
                confirm={`Delete ${folder.path} and everything in it? This cannot be undone.`}
                busy={removeFolder.busy}
                onConfirm={async () => (await removeFolder.run(folder.key)) && refresh()}
              />
            </>
          )}
        />
      </Section>
      <Search />
    </Page>
  );
}

function NewFolder(props: { parent: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const create = useSubmit((api) =>
    dataOf(api.client.POST('/knowledge/create-folder', { body: { folderName: name.trim(), ...(props.parent === '' ? {} : { parentFolder: props.parent }) } })),
  );
  return (
    <>
      <Form
        label="New folder"
        class="form form-inline"
        onSubmit={async () => {
          if (await create.run()) {
            setName('');
            props.onCreated();
          }
        }}
      >
        <TextInput label="New folder" hint={`Inside ${props.parent === '' ? 'the top folder' : props.parent}`} required value={name} onValue={setName} />
        <Button type="submit" busy={create.busy}>
          Create folder
        </Button>
      </Form>
      <ErrorNote error={create.error} />
      {create.result === undefined ? null : <Notice tone="success">Created {spacePath(create.result.key)}.</Notice>}
    </>
  );
}

function Search() {
  const [query, setQuery] = useState('');
  const [folder, setFolder] = useState('');
  const [fileType, setFileType] = useState('');
  const search = useSubmit((api) =>
    dataOf(
      api.client.POST('/knowledge/search', {
        body: {
          query: query.trim(),
          limit: 20,
          ...(folder.trim() === '' ? {} : { folder: folder.trim() }),
          ...(fileType.trim() === '' ? {} : { fileType: fileType.trim().replace(/^\./, '') }),
        },
      }),
    ),
  );
  const result = search.result;
  return (
    <Section title="Search">
      <Form label="Search knowledge" class="form form-inline" onSubmit={() => search.run()}>
        <TextInput label="Search for" type="search" required value={query} onValue={setQuery} placeholder="rain forecast" />
        <TextInput label="In folder" value={folder} onValue={setFolder} placeholder="notes" />
        <TextInput label="File type" value={fileType} onValue={setFileType} placeholder="md" />
        <Button type="submit" variant="primary" busy={search.busy}>
          Search
        </Button>
      </Form>
      <ErrorNote error={search.error} />
      {result === undefined ? null : (
        <div class="search-results" aria-live="polite">
          <p class="muted">
            {result.count} {result.count === 1 ? 'hit' : 'hits'} for “{result.query}” ({result.mode} search)
          </p>
          {result.results.length === 0 ? (
            <Empty>Nothing matches.</Empty>
          ) : (
            <ol class="hits" aria-label="Search results">
              {result.results.map((hit, n) => (
                <li key={`${hit.key}-${n}`} class="hit">
                  <p class="hit-title">
                    <strong>{hit.fileName}</strong> <code class="muted">{spacePath(hit.key)}</code> <span class="muted">score {hit.score.toFixed(2)}</span>
                  </p>
                  <p class="hit-chunk">
                    <Highlight text={hit.chunk} query={result.query} />
                  </p>
                </li>
              ))}
            </ol>
          )}
        </div>
      )}
    </Section>
  );
}

import { useRef, useState } from 'preact/hooks';
import { dataOf, useLoad, useSubmit, type Api } from '../api.ts';
import type { PageProps } from '../app.tsx';
import { Button, ConfirmButton, Form, TextInput } from '../ui/form.tsx';
import { Page, Section } from '../ui/page.tsx';
import { Badge, ErrorNote, Loading, Notice, When } from '../ui/status.tsx';
import { DropZone } from './data/drop-zone.tsx';
import { contentTypeOf, encodedContent, formatBytes, formatMb, putWithProgress, type PickedFile } from './data/files.ts';
import { FileTree, type TreeFile, type TreeFolder, type TreeListing } from './data/tree.tsx';
import { UploadList, useUploads, type UploadOne } from './data/uploads.tsx';

/** Direct uploads carry at most 5 MB; binary files (sent as base64, a third larger) go direct up to 4 MB. */
const DIRECT_TEXT_MAX = 5 * 1024 * 1024;
const DIRECT_BINARY_MAX = 4 * 1024 * 1024;

interface SiteFile extends TreeFile {
  readonly contentType: string;
  readonly lastModified: string;
}

const uploadSiteFile: UploadOne = async (api, picked, folder, progress) => {
  const { file, name } = picked;
  const contentType = contentTypeOf(file, name);
  const target = folder === '' ? {} : { folder };
  if (file.size <= DIRECT_TEXT_MAX) {
    const { content, base64 } = await encodedContent(file);
    if (!base64 || file.size <= DIRECT_BINARY_MAX) {
      await dataOf(api.client.POST('/website/upload', { body: { fileName: name, content, contentType, encoding: base64 ? 'base64' : 'text', ...target } }));
      return undefined;
    }
  }
  // Up to 25 MB: a PUT to the upload URL, whose signed size makes a larger file a refusal here.
  const url = await dataOf(api.client.POST('/website/upload-url', { body: { fileName: name, contentType, size: file.size, method: 'PUT', ...target } }));
  if (url.method !== 'PUT') throw new Error('The platform answered with a form upload where a PUT was asked for.');
  await putWithProgress(url.uploadUrl, url.headers, file, progress);
  return 'joins the site when the platform has checked it';
};

/** The address of a file on the live site (each path segment encoded). */
function liveUrl(siteUrl: string, key: string): string {
  return new URL(key.split('/').map(encodeURIComponent).join('/'), siteUrl.endsWith('/') ? siteUrl : `${siteUrl}/`).href;
}

export default function Websites(_props: PageProps) {
  const [version, setVersion] = useState(0);
  const info = useLoad((api) => dataOf(api.client.GET('/website/info')), [version]);
  const usage = useLoad((api) => dataOf(api.client.GET('/website/usage')), [version]);
  const refresh = () => setVersion((v) => v + 1);
  const [target, setTarget] = useState('');
  const dropZone = useRef<HTMLDivElement>(null);
  const uploads = useUploads(uploadSiteFile, refresh);
  const siteUrl = info.data?.siteUrl ?? null;

  const load = async (api: Api, folder: string, cursor: string | undefined): Promise<TreeListing<SiteFile>> => {
    const page = await dataOf(
      api.client.GET('/website/list', { params: { query: { limit: 100, ...(folder === '' ? {} : { prefix: folder }), ...(cursor ? { cursor } : {}) } } }),
    );
    return {
      folders: page.folders.map((f) => ({ key: f.key, name: f.fileName, path: f.key.replace(/\/$/, '') })),
      files: page.files.map((f) => ({ key: f.key, name: f.fileName, path: f.key, size: f.size, contentType: f.contentType, lastModified: f.lastModified })),
      nextCursor: page.nextCursor,
    };
  };
  const remove = useSubmit((api, key: string) => dataOf(api.client.POST('/website/delete', { body: { key } })));
  const removeFolder = useSubmit((api, folder: string) => dataOf(api.client.POST('/website/delete-folder', { body: { folder } })));
  const invalidate = useSubmit((api) => dataOf(api.client.POST('/website/invalidate', { body: {} })));

  return (
    <Page title="Website" lead="A static site of your own, public at its own address. Upload its files here; index.html is its home page.">
      <Section title="Your site">
        <ErrorNote error={info.error ?? usage.error} />
        {info.data === undefined ? (
          info.loading ? (
            <Loading what="the site" />
          ) : null
        ) : (
          <div class="site-summary">
            <p>
              <Badge tone={info.data.status === 'published' ? 'ok' : 'neutral'}>{info.data.status === 'published' ? 'published' : 'not published'}</Badge>{' '}
              {info.data.fileCount} {info.data.fileCount === 1 ? 'file' : 'files'}
              {info.data.hasIndexHtml ? null : <span class="muted"> · no index.html yet: upload one to publish the site</span>}
            </p>
            {siteUrl === null ? (
              <Notice tone="warning">
                Your account needs an alias before the site has an address: set one on the <a href="#/account">Account</a> page.
              </Notice>
            ) : (
              <p>
                Live at{' '}
                <a href={siteUrl} target="_blank" rel="noopener noreferrer" class="site-link">
                  {siteUrl}
                </a>
              </p>
            )}
          </div>
        )}
        {usage.data === undefined ? null : (
          <p class="usage-line">
            Storage: {formatMb(usage.data.storageUsedMb)} of {formatMb(usage.data.storageQuotaMb)} used ({usage.data.percentUsed.toFixed(1)}%, {usage.data.tier}{' '}
            tier)
            <meter min={0} max={100} value={usage.data.percentUsed} high={90} aria-label="Site storage used" />
          </p>
        )}
        <div class="form-inline">
          <Button busy={invalidate.busy} onClick={() => void invalidate.run()}>
            Clear the CDN cache
          </Button>
          <span class="hint">After changing files. The first 1,000 paths a month are free.</span>
        </div>
        <ErrorNote error={invalidate.error} />
        {invalidate.result === undefined ? null : (
          <Notice tone="success">
            Cache clearing {invalidate.result.status.toLowerCase()} for {invalidate.result.paths.join(', ')} ({invalidate.result.creditsCharged} credits).
          </Notice>
        )}
      </Section>
      <Section title="Upload">
        <div class="upload-target">
          <TextInput label="Into folder" hint="Empty for the top of the site; nested folders with “/”." placeholder="docs" value={target} onValue={setTarget} />
        </div>
        <div ref={dropZone}>
          <DropZone
            label={`Drop files or folders here to upload them into ${target.trim() === '' ? 'the top of the site' : target.trim()}`}
            hint="Up to 5 MB a file directly, up to 25 MB through an upload link. A dropped folder keeps its own folders."
            onFiles={(files: PickedFile[]) => void uploads.add(files, target.trim())}
          />
        </div>
        <UploadList uploads={uploads.uploads} onClear={uploads.clear} />
        <NewFolder parent={target.trim()} onCreated={refresh} />
      </Section>
      <Section title="Files">
        <ErrorNote error={remove.error ?? removeFolder.error} />
        <FileTree<SiteFile>
          label="Site files"
          load={load}
          version={version}
          empty="No files yet: drop an index.html above."
          file={(f) => (
            <div class="tree-row">
              <span class="tree-name">{f.name}</span>
              <span class="muted tree-meta">
                {formatBytes(f.size)} · <When at={f.lastModified} />
              </span>
              <span class="tree-actions">
                {siteUrl === null ? null : (
                  <a href={liveUrl(siteUrl, f.key)} target="_blank" rel="noopener noreferrer" aria-label={`Open ${f.path} on the live site`}>
                    Open
                  </a>
                )}
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
                confirm={`Delete ${folder.path} and everything in it?`}
                busy={removeFolder.busy}
                onConfirm={async () => (await removeFolder.run(folder.path)) && refresh()}
              />
            </>
          )}
        />
      </Section>
    </Page>
  );
}

function NewFolder(props: { parent: string; onCreated: () => void }) {
  const [name, setName] = useState('');
  const create = useSubmit((api) =>
    dataOf(api.client.POST('/website/create-folder', { body: { folder: name.trim(), ...(props.parent === '' ? {} : { parent: props.parent }) } })),
  );
  return (
    <>
      <Form
        label="New site folder"
        class="form form-inline"
        onSubmit={async () => {
          if (await create.run()) {
            setName('');
            props.onCreated();
          }
        }}
      >
        <TextInput label="New folder" hint={`Inside ${props.parent === '' ? 'the top of the site' : props.parent}`} required value={name} onValue={setName} />
        <Button type="submit" busy={create.busy}>
          Create folder
        </Button>
      </Form>
      <ErrorNote error={create.error} />
      {create.result === undefined ? null : <Notice tone="success">Created {create.result.key}.</Notice>}
    </>
  );
}

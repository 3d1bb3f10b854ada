/**
 * Files as the data pages handle them: a file with the path it had inside a dropped or picked
 * folder, its content type, and its bytes as the upload endpoints take them.
 */

/** A file to upload, with its path relative to what was dropped or picked (`site/css/a.css`). */
export interface PickedFile {
  readonly file: File;
  /** Folders above the file, inside the drop (`site/css`), '' for a loose file. */
  readonly folder: string;
  readonly name: string;
}

/** Splits a relative path (`site/css/a.css`) into its folder and name. */
export function picked(file: File, relativePath: string): PickedFile {
  const parts = relativePath.split('/').filter((p) => p !== '' && p !== '.');
  const name = parts.pop() ?? file.name;
  return { file, folder: parts.join('/'), name };
}

/** `a/b` + `c` → `a/b/c`, ignoring empty parts and stray slashes. */
export function joinPath(...parts: readonly string[]): string {
  return parts
    .flatMap((p) => p.split('/'))
    .filter(Boolean)
    .join('/');
}

const TYPES: Record<string, string> = {
  txt: 'text/plain',
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  json: 'application/json',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  js: 'text/javascript',
  mjs: 'text/javascript',
  svg: 'image/svg+xml',
  xml: 'application/xml',
  pdf: 'application/pdf',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  ico: 'image/x-icon',
  woff: 'font/woff',
  woff2: 'font/woff2',
  yaml: 'text/yaml',
  yml: 'text/yaml',
};

/** The file's type as the browser knows it, else by its extension, else bytes. */
export function contentTypeOf(file: File, name = file.name): string {
  if (file.type !== '') return file.type;
  const ext = /\.([a-z0-9]+)$/i.exec(name)?.[1]?.toLowerCase() ?? '';
  return TYPES[ext] ?? 'application/octet-stream';
}

/** Text that survives a JSON body as is (valid UTF-8); null for anything else, sent as base64. */
export function textOf(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

export function base64Of(bytes: Uint8Array): string {
  let binary = '';
  const step = 0x8000;
  for (let i = 0; i < bytes.length; i += step) binary += String.fromCharCode(...bytes.subarray(i, i + step));
  return btoa(binary);
}

/** The bytes of a file and how a JSON upload carries them: as text when they are text, else base64. */
export async function encodedContent(file: File): Promise<{ content: string; base64: boolean }> {
  const bytes = new Uint8Array(await file.arrayBuffer());
  const text = textOf(bytes);
  return text === null ? { content: base64Of(bytes), base64: true } : { content: text, base64: false };
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
  return `${(bytes / 1024 / 1024 / 1024).toFixed(2)} GB`;
}

export function formatMb(mb: number): string {
  return formatBytes(Math.round(mb * 1024 * 1024));
}

/**
 * PUTs a file to a presigned upload URL (another host: the storage, not the API) with the headers
 * the API signed into it, reporting progress; XMLHttpRequest because fetch reports no upload
 * progress.
 */
export function putWithProgress(
  url: string,
  headers: Readonly<Record<string, string | undefined>>,
  file: File,
  onProgress: (fraction: number) => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', url);
    // Content-Length is the browser's to set (from the body); the signed one is the file's size.
    for (const [name, value] of Object.entries(headers)) if (value !== undefined && name.toLowerCase() !== 'content-length') xhr.setRequestHeader(name, value);
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onload = () => (xhr.status >= 200 && xhr.status < 300 ? resolve() : reject(new Error(`The storage refused the upload (HTTP ${xhr.status}).`)));
    xhr.onerror = () => reject(new Error('The upload could not reach the storage.'));
    xhr.send(file);
  });
}

/**
 * Downloads from a URL the API handed out (a presigned download, which the storage answers as an
 * attachment): the browser saves the file and the console stays where it is.
 */
export function downloadFrom(url: string): void {
  const link = document.createElement('a');
  link.href = url;
  link.download = '';
  link.rel = 'noopener noreferrer';
  link.click();
}

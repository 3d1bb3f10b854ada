import { extensionOf } from '../core/files/paths.ts';

/**
 * Content types of the files static sites are made of, by extension. A short table rather than a
 * dependency: the site function's bundle stays small, and what it answers is fixed here.
 */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  htm: 'text/html; charset=utf-8',
  css: 'text/css; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  mjs: 'text/javascript; charset=utf-8',
  json: 'application/json',
  map: 'application/json',
  txt: 'text/plain; charset=utf-8',
  md: 'text/markdown; charset=utf-8',
  xml: 'application/xml',
  csv: 'text/csv; charset=utf-8',
  svg: 'image/svg+xml',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  avif: 'image/avif',
  ico: 'image/x-icon',
  woff: 'font/woff',
  woff2: 'font/woff2',
  ttf: 'font/ttf',
  otf: 'font/otf',
  pdf: 'application/pdf',
  mp4: 'video/mp4',
  webm: 'video/webm',
  mp3: 'audio/mpeg',
  wasm: 'application/wasm',
  webmanifest: 'application/manifest+json',
  zip: 'application/zip',
};

/** The content type of `fileName` by its extension; `fallback` for an extension not in the table. */
export function contentTypeOf(fileName: string, fallback = 'application/octet-stream'): string {
  return CONTENT_TYPES[extensionOf(fileName)] ?? fallback;
}

import type * as Unpdf from 'unpdf';
import { extensionOf } from '../core/files/paths.ts';

/** The kinds of file the knowledge area reads text from; every other file is stored and listed only. */
export type TextKind = 'text' | 'markdown' | 'csv' | 'json' | 'html' | 'pdf';

const KIND_BY_EXTENSION: Readonly<Record<string, TextKind>> = {
  txt: 'text',
  text: 'text',
  log: 'text',
  md: 'markdown',
  markdown: 'markdown',
  csv: 'csv',
  tsv: 'csv',
  json: 'json',
  html: 'html',
  htm: 'html',
  pdf: 'pdf',
};

const KIND_BY_CONTENT_TYPE: Readonly<Record<string, TextKind>> = {
  'text/plain': 'text',
  'text/markdown': 'markdown',
  'text/x-markdown': 'markdown',
  'text/csv': 'csv',
  'text/tab-separated-values': 'csv',
  'application/json': 'json',
  'text/html': 'html',
  'application/xhtml+xml': 'html',
  'application/pdf': 'pdf',
};

/**
 * What kind of text `fileName` holds: by its extension first (what users and the `fileType`
 * filter go by), then by its content type; null when it has no text the area can read.
 */
export function textKindOf(fileName: string, contentType: string): TextKind | null {
  const byExtension = KIND_BY_EXTENSION[extensionOf(fileName)];
  if (byExtension !== undefined) return byExtension;
  return KIND_BY_CONTENT_TYPE[contentType.split(';')[0]!.trim().toLowerCase()] ?? null;
}

/** The file type search filters on: the extension, or the kind's usual one for a file without. */
export function fileTypeOf(fileName: string, kind: TextKind | null): string {
  const extension = extensionOf(fileName);
  if (extension !== '' || kind === null) return extension;
  return { text: 'txt', markdown: 'md', csv: 'csv', json: 'json', html: 'html', pdf: 'pdf' }[kind];
}

/** A file the area could not read (a damaged PDF): stored and listed, not indexed. */
export class ExtractionError extends Error {}

/** How much of one file the area reads (knowledge.module.ts settings): past them, the rest is not indexed. */
export interface ExtractionLimits {
  /** PDF pages read, from the first. */
  readonly maxPages: number;
  /** Characters of text kept, from the start. */
  readonly maxChars: number;
}

/** A file's text; `truncated` says which limit cut it, in words for its owner, or is null when it is whole. */
export interface ExtractedText {
  readonly text: string;
  readonly truncated: string | null;
}

/** The text of a file of `kind`, for indexing: what a reader sees, not markup, within `limits`. */
export async function extractText(kind: TextKind, bytes: Uint8Array, limits: ExtractionLimits): Promise<ExtractedText> {
  if (kind === 'pdf') return pdfText(bytes, limits);
  return capText(plainText(kind, bytes), limits.maxChars, null);
}

function plainText(kind: Exclude<TextKind, 'pdf'>, bytes: Uint8Array): string {
  switch (kind) {
    case 'text':
    case 'markdown':
    case 'csv':
      return decodeUtf8(bytes);
    case 'json':
      return jsonText(decodeUtf8(bytes));
    case 'html':
      return htmlText(decodeUtf8(bytes));
  }
}

function capText(text: string, maxChars: number, truncated: string | null): ExtractedText {
  if (text.length <= maxChars) return { text, truncated };
  return { text: text.slice(0, maxChars), truncated: `only the first ${maxChars} characters of its text are indexed` };
}

function decodeUtf8(bytes: Uint8Array): string {
  // Not fatal: a stray invalid byte should not keep the rest of a file out of search.
  return new TextDecoder('utf-8', { ignoreBOM: false }).decode(bytes);
}

/** Keys and values as `key: value` lines, so `"title": "Forecast"` is found by both words without the punctuation. */
export function jsonText(source: string): string {
  let value: unknown;
  try {
    value = JSON.parse(source);
  } catch {
    return source;
  }
  const lines: string[] = [];
  const walk = (node: unknown, key: string | null) => {
    if (Array.isArray(node)) for (const item of node) walk(item, key);
    else if (node !== null && typeof node === 'object') for (const [k, v] of Object.entries(node)) walk(v, k);
    else if (node !== null) lines.push(key === null ? String(node) : `${key}: ${String(node)}`);
  };
  walk(value, null);
  return lines.join('\n');
}

/** Elements whose content a reader never sees. */
const INVISIBLE = ['script', 'style', 'noscript', 'template', 'svg', 'head', 'iframe', 'object'];
/** Elements that break lines, so words of adjacent blocks do not run together. */
const BLOCK = /<\/?(?:p|div|br|hr|li|ul|ol|tr|td|th|table|h[1-6]|section|article|header|footer|nav|aside|main|blockquote|pre|title|dt|dd)\b[^>]*>/gi;

const NAMED_ENTITIES: Readonly<Record<string, string>> = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: ' ',
  copy: '©',
  reg: '®',
  hellip: '…',
  mdash: '—',
  ndash: '–',
};

/** The visible text of an HTML document: no tags, scripts, styles or comments; entities decoded. */
export function htmlText(html: string): string {
  let text = html.replace(/<!--[\s\S]*?-->/g, ' ');
  const title = /<title\b[^>]*>([\s\S]*?)<\/title>/i.exec(text)?.[1] ?? '';
  for (const tag of INVISIBLE) text = text.replace(new RegExp(`<${tag}\\b[\\s\\S]*?</${tag}\\s*>`, 'gi'), ' ');
  text = `${title}\n${text}`
    .replace(BLOCK, '\n')
    .replace(/<[^>]*>/g, ' ')
    .replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, entity: string) => {
      if (entity.startsWith('#')) {
        const code = entity[1] === 'x' || entity[1] === 'X' ? parseInt(entity.slice(2), 16) : parseInt(entity.slice(1), 10);
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : ' ';
      }
      return NAMED_ENTITIES[entity.toLowerCase()] ?? whole;
    });
  return text;
}

/**
 * The PDF engine (pdf.js through `unpdf`, about 1.7 MB) is loaded on the first PDF only, by a
 * specifier the bundler does not follow: it stays out of the function bundles (200 KB budget) and
 * is shipped beside them as runtime files (knowledge.module.ts), so only a PDF pays its load.
 */
const loadModule = (specifier: string) => import(specifier) as Promise<unknown>;
let unpdf: Promise<typeof Unpdf> | undefined;

/**
 * Page by page, so the limits stop the work rather than trim its result: a few kilobytes of PDF
 * whose pages share one compressed stream expand to megabytes of text per page.
 */
async function pdfText(bytes: Uint8Array, limits: ExtractionLimits): Promise<ExtractedText> {
  unpdf ??= loadModule('unpdf') as Promise<typeof Unpdf>;
  const { getDocumentProxy } = await unpdf;
  try {
    // pdf.js takes ownership of (and detaches) the buffer it is given: hand it a copy.
    // Errors only: pdf.js otherwise prints its warnings (a damaged file's repairs) to the console.
    const document = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
    try {
      const pages = Math.min(document.numPages, limits.maxPages);
      const texts: string[] = [];
      let chars = 0;
      for (let number = 1; number <= pages; number++) {
        const page = await document.getPage(number);
        const content = await page.getTextContent();
        // As unpdf's extractText: the items' strings, a line break where pdf.js saw a line end.
        const text = content.items.map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : '')).join('');
        page.cleanup();
        texts.push(text);
        chars += text.length + 2;
        if (chars > limits.maxChars && number < document.numPages) return capText(texts.join('\n\n'), limits.maxChars, null);
      }
      const truncated = document.numPages > pages ? `only the first ${pages} of its ${document.numPages} pages are indexed` : null;
      return capText(texts.join('\n\n'), limits.maxChars, truncated);
    } finally {
      // Frees the worker-side document (the proxy has no destroy of its own in these types).
      await document.loadingTask.destroy();
    }
  } catch (error) {
    throw new ExtractionError(`Unreadable PDF: ${(error as Error).message}`);
  }
}

/** Chunk sizes in characters: a few paragraphs each, so a hit shows its context. */
export const CHUNK_CHARS = 1200;
/** Each chunk repeats the end of the one before, so a phrase cut by a boundary is whole in one of them. */
export const CHUNK_OVERLAP_CHARS = 200;

export interface ChunkOptions {
  readonly size?: number;
  readonly overlap?: number;
}

/**
 * Tidies extracted text: one space for runs of blanks, at most one empty line between paragraphs,
 * no blanks at line ends. Extraction leaves a lot of them (HTML indentation, PDF layout).
 */
export function tidyText(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replace(/[^\S\n]+/g, ' ')
    .replace(/ ?\n ?/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

/**
 * Splits text into overlapping chunks of at most `size` characters. A chunk ends at a paragraph,
 * sentence or word boundary in its second half when there is one, and the next starts `overlap`
 * characters before that end, at a word boundary, so no word is cut and every stretch of
 * `overlap` characters lies whole in some chunk.
 */
export function chunkText(text: string, options: ChunkOptions = {}): string[] {
  const size = options.size ?? CHUNK_CHARS;
  const overlap = Math.min(options.overlap ?? CHUNK_OVERLAP_CHARS, Math.floor(size / 2));
  const tidy = tidyText(text);
  if (tidy === '') return [];
  const chunks: string[] = [];
  let start = 0;
  while (start < tidy.length) {
    let end = Math.min(start + size, tidy.length);
    if (end < tidy.length) end = boundaryBefore(tidy, start + Math.floor(size / 2), end);
    const chunk = tidy.slice(start, end).trim();
    if (chunk !== '') chunks.push(chunk);
    if (end >= tidy.length) break;
    // Never past `end`: a word longer than the overlap is cut rather than text skipped. The word
    // start is looked for only up to `end`, so each chunk costs its own length and the whole text
    // is linear (searching the rest of the text made text without blanks quadratic).
    start = Math.max(wordStartAfter(tidy, end - overlap, end), start + 1);
  }
  return chunks;
}

/** The best place to end a chunk in [from, to]: after a paragraph, else a sentence, else a word; `to` when there is none. */
function boundaryBefore(text: string, from: number, to: number): number {
  const window = text.slice(from, to);
  for (const pattern of [/\n\n/g, /[.!?]\s/g, /\s/g]) {
    let last = -1;
    for (const match of window.matchAll(pattern)) last = match.index + match[0].length;
    if (last > 0) return from + last;
  }
  return to;
}

/** The start of the first word at or after `at` and before `limit`; `at` itself (inside a word) when none starts there. */
function wordStartAfter(text: string, at: number, limit: number): number {
  if (at <= 0) return 0;
  for (let i = at; i < limit; i++) if (isBlank(text.charCodeAt(i - 1))) return i;
  return at;
}

/** The blanks tidyText leaves: space and line break (it folds every other blank into a space). */
function isBlank(code: number): boolean {
  return code === 32 || code === 10;
}

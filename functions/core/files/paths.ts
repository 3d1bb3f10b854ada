import { ValidationError } from '../errors.ts';

/**
 * Paths of users' files in the file areas (knowledge, websites): every path from a client goes
 * through these checks before it becomes part of a key, so nothing outside the caller's space can
 * be named. Absolute paths, `.` and `..`, empty segments, backslashes and control characters are
 * 400s; names are Unicode NFC.
 */

/** S3 keys are at most 1024 bytes; a segment (folder or file name) at most 255, as on most file systems. */
const MAX_KEY_BYTES = 1024;
const MAX_SEGMENT_BYTES = 255;

// Control characters would make keys that look alike differ, and break the store's entry keys (file-tree.store.ts).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A file's place in its owner's space: `folder` is '' (the root) or ends with `/`. */
export interface FilePath {
  readonly folder: string;
  readonly fileName: string;
}

/** `a/b/` -> `a/`; '' for a folder at the root. */
export function parentOf(folder: string): string {
  const trimmed = folder.slice(0, -1);
  const slash = trimmed.lastIndexOf('/');
  return slash < 0 ? '' : trimmed.slice(0, slash + 1);
}

/** The last segment of a folder path, without its slash. */
export function folderName(folder: string): string {
  return folder.slice(parentOf(folder).length, -1);
}

/** `a/b/` -> [`a/`, `a/b/`]: the folder and every folder above it, outermost first. */
export function foldersOf(folder: string): string[] {
  const out: string[] = [];
  for (let at = folder.indexOf('/'); at >= 0; at = folder.indexOf('/', at + 1)) out.push(folder.slice(0, at + 1));
  return out;
}

/** The lower-case extension of a file name (`pdf`), '' when it has none. */
export function extensionOf(fileName: string): string {
  const dot = fileName.lastIndexOf('.');
  return dot <= 0 ? '' : fileName.slice(dot + 1).toLowerCase();
}

function invalid(field: string, problem: string): ValidationError {
  return new ValidationError('Invalid parameters', [`${field}: ${problem}`]);
}

/** Refusals common to every path: what could escape the owner's space or name two things alike. */
export function checkCharacters(field: string, value: string): void {
  if (CONTROL.test(value)) throw invalid(field, 'must not contain control characters');
  if (value.includes('\\')) throw invalid(field, 'must use "/" between folders, not "\\"');
}

export function checkSegments(field: string, segments: readonly string[]): void {
  for (const segment of segments) {
    if (segment === '') throw invalid(field, 'must not contain empty segments ("//")');
    if (segment === '.' || segment === '..') throw invalid(field, 'must not contain "." or ".." segments');
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES) throw invalid(field, `each name must be at most ${MAX_SEGMENT_BYTES} bytes`);
  }
}

/**
 * A folder path relative to the owner's space, checked and normalised (Unicode NFC, one trailing
 * slash): '' for the root (absent or empty), else `a/b/`. Absolute paths, `.` and `..`, empty
 * segments, backslashes and control characters are 400s.
 */
export function normaliseFolder(field: string, input: string | undefined): string {
  if (input === undefined || input === '') return '';
  const value = input.normalize('NFC');
  checkCharacters(field, value);
  if (value.startsWith('/')) throw invalid(field, 'must be a path inside your space, not an absolute path');
  const path = value.endsWith('/') ? value.slice(0, -1) : value;
  checkSegments(field, path.split('/'));
  return `${path}/`;
}

/** A file name: one segment, normalised like a folder's. */
export function normaliseFileName(field: string, input: string): string {
  const value = input.normalize('NFC');
  checkCharacters(field, value);
  if (value.includes('/')) throw invalid(field, 'must be a name without "/" (put the folder in `folder`)');
  checkSegments(field, [value]);
  return value;
}

/** Checks that the whole key fits S3's limit once the owner's prefix is in front. */
export function checkKeyLength(field: string, key: string): void {
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw invalid(field, `the resulting key must be at most ${MAX_KEY_BYTES} bytes`);
}

/** A file's path from a path relative to the owner's space (`a/b/c.txt`). */
export function filePathOf(field: string, relative: string): FilePath {
  checkCharacters(field, relative);
  if (relative === '' || relative.endsWith('/')) throw invalid(field, 'must name a file (a folder key ends with "/")');
  if (relative.startsWith('/')) throw invalid(field, 'must be a path inside your space, not an absolute path');
  const slash = relative.lastIndexOf('/');
  // `a//b.txt`: the folder part `a/` would lose its empty segment to normaliseFolder's trailing slash.
  if (slash > 0 && relative[slash - 1] === '/') throw invalid(field, 'must not contain empty segments ("//")');
  const folder = normaliseFolder(field, slash < 0 ? '' : relative.slice(0, slash));
  return { folder, fileName: normaliseFileName(field, relative.slice(slash + 1)) };
}

/**
 * The owner and path of a key read from storage (a storage event), or null when the key is not one
 * this module would make: such objects are left alone rather than guessed at.
 */
export function parseStoredKey(prefix: string, key: string): { userId: string; path: FilePath } | null {
  if (!key.startsWith(prefix)) return null;
  const rest = key.slice(prefix.length);
  const slash = rest.indexOf('/');
  if (slash <= 0) return null;
  const userId = rest.slice(0, slash);
  try {
    return { userId, path: filePathOf('key', rest.slice(slash + 1)) };
  } catch {
    return null;
  }
}

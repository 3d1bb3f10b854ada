import { ValidationError } from '../core/errors.ts';
import { checkCharacters, filePathOf, normaliseFolder, type FilePath } from '../core/files/paths.ts';

/**
 * Where sites live in the websites bucket: `sites/{userId}/{folder}{fileName}`. Keyed by the
 * owner's id, not their alias: an alias can change (POST /user/alias), and the site follows its
 * owner without copying objects. Clients only ever see keys relative to their own site
 * (`about/index.html`), so no client path can name another user's objects.
 */
export const SITES_PREFIX = 'sites/';

/** Where presigned uploads land first; their storage event moves them under `sites/` (websites.service.ts). */
export const INCOMING_PREFIX = 'incoming/';

/** The file every folder of a site answers with (`/{alias}/` and `/{alias}/dir/`). */
export const INDEX_FILE = 'index.html';

/** The page a site answers missing files with, when it has one. */
export const NOT_FOUND_FILE = '404.html';

export function siteObjectKey(userId: string, relative: string): string {
  return `${SITES_PREFIX}${userId}/${relative}`;
}

export function incomingObjectKey(userId: string, relative: string): string {
  return `${INCOMING_PREFIX}${userId}/${relative}`;
}

/** A file's key relative to its site. */
export function relativeKey(path: FilePath): string {
  return `${path.folder}${path.fileName}`;
}

/**
 * Segments that a URL would read as `.` or `..` once decoded (`%2e%2e`) are refused too: a site's
 * files are addressed by URL, where such a name could only mean climbing out of its folder.
 */
function checkEncodedDots(field: string, value: string): void {
  for (const segment of value.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      continue;
    }
    if (decoded !== segment && (decoded === '.' || decoded === '..' || decoded.includes('/') || decoded.includes('\\')))
      throw new ValidationError('Invalid parameters', [`${field}: must not contain encoded "/", "\\", "." or ".." segments`]);
  }
}

/** A file's path from a client's key, relative to the caller's site (`about/index.html`). */
export function sitePathFromClient(field: string, input: string): FilePath {
  const value = input.normalize('NFC');
  checkCharacters(field, value);
  checkEncodedDots(field, value);
  return filePathOf(field, value);
}

/** A folder from a client, relative to the caller's site: '' for the root, else ending with `/`. */
export function siteFolderFromClient(field: string, input: string | undefined): string {
  if (input !== undefined) checkEncodedDots(field, input.normalize('NFC'));
  return normaliseFolder(field, input);
}

import { NotFoundError } from '../core/errors.ts';
import { checkSegments, filePathOf, normaliseFolder, checkCharacters, type FilePath } from '../core/files/paths.ts';

/**
 * Where users' files live in the knowledge bucket: `users/{userId}/{folder}/{fileName}`. Every
 * path from a client goes through this module before it becomes a key, so nothing outside the
 * caller's prefix can be named: a client gives either a path relative to its own space
 * (`reports/2024/q1.pdf`) or a full key, and either is refused (400) when it could climb out or
 * is ambiguous, and answered as missing (404) when it is another user's.
 */
export const USERS_PREFIX = 'users/';

/** Where presigned uploads land first; their storage event moves them under `users/` (knowledge.service.ts). */
export const INCOMING_PREFIX = 'incoming/';

/** The prefix of every key of `userId`. */
export function userPrefix(userId: string): string {
  return `${USERS_PREFIX}${userId}/`;
}

export function fileKey(userId: string, path: FilePath): string {
  return `${userPrefix(userId)}${path.folder}${path.fileName}`;
}

/** A folder's key: the owner's prefix for the root, else ending with `/`. */
export function folderKey(userId: string, folder: string): string {
  return `${userPrefix(userId)}${folder}`;
}

/**
 * The part of a client's key or path inside the caller's space. A value starting with `users/` is
 * always a full key (a top folder named `users` is then named by its full key): it must be under
 * `users/{callerId}/` (another user's is a 404, like a missing file, so keys of others cannot be
 * probed); anything else is read as a path relative to the caller's space.
 */
function relativeToCaller(field: string, userId: string, input: string): string {
  const value = input.normalize('NFC');
  checkCharacters(field, value);
  if (!value.startsWith(USERS_PREFIX)) return value;
  const rest = value.slice(USERS_PREFIX.length);
  const slash = rest.indexOf('/');
  const owner = slash < 0 ? rest : rest.slice(0, slash);
  // Checked whole before the owner, so `users/other/../me/x` is a 400 and not a 404 or a read.
  checkSegments(field, rest.replace(/\/$/, '').split('/'));
  if (owner !== userId) throw new NotFoundError(`No file or folder ${value}.`);
  return slash < 0 ? '' : rest.slice(slash + 1);
}

/** A file's path from a client's `key` (full key or path relative to the caller's space). */
export function filePathFromClient(field: string, userId: string, input: string): FilePath {
  return filePathOf(field, relativeToCaller(field, userId, input));
}

/** A folder path from a client's folder key or relative folder path; '' is the root. */
export function folderFromClient(field: string, userId: string, input: string | undefined): string {
  if (input === undefined) return '';
  return normaliseFolder(field, relativeToCaller(field, userId, input));
}

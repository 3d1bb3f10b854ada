import { throwFirstFailure } from '../all-settled.ts';
import type { FileTreeEntry, FileTreeFile, FileTreeStore } from './file-tree.store.ts';
import type { BucketObjects } from './bucket-objects.ts';
import { foldersOf, parseStoredKey, type FilePath } from './paths.ts';
import { storageQuotaExceeded } from './uploads.ts';
import type { Logger } from '../logger.ts';

/**
 * The steps of the file areas (knowledge, websites) over their file tree store, so both keep
 * their owners' usage the same way: bytes reserved before an object is written and given back
 * when a write fails, a file is replaced or deleted.
 */

/**
 * Reserves `bytes` in the owner's usage within `quotaBytes`, then runs `write` (the object's),
 * giving the bytes back when it throws. False, and nothing written, when the bytes do not fit.
 */
export async function writeWithinQuota<F extends FileTreeFile>(
  store: FileTreeStore<F>,
  userId: string,
  bytes: number,
  quotaBytes: number,
  write: () => Promise<void>,
): Promise<boolean> {
  if ((await store.reserve(userId, bytes, quotaBytes)) === null) return false;
  try {
    await write();
  } catch (error) {
    await store.release(userId, bytes);
    throw error;
  }
  return true;
}

/** Creates `folder` and every folder above it that is missing. */
export async function putFolders<F extends FileTreeFile>(store: FileTreeStore<F>, userId: string, folder: string, now: number): Promise<void> {
  for (const each of foldersOf(folder)) await store.putFolder(userId, each, now);
}

/**
 * Writes the entry of a file whose object is in place and whose bytes were reserved, with its
 * folders, and gives back the bytes of the file it replaced. The write answers the entry it
 * replaced, so of concurrent uploads to one key each gives back exactly the bytes of the one
 * before it. Answers the owner's usage after it.
 */
export async function settleFile<F extends FileTreeFile>(store: FileTreeStore<F>, record: F): Promise<number> {
  await putFolders(store, record.userId, record.folder, record.lastModified);
  const replaced = await store.putFile(record);
  return replaced !== null && replaced.size > 0 ? store.release(record.userId, replaced.size) : store.usedBytes(record.userId);
}

/**
 * Deletes a file's entry, then its data (`removeData`: the object, the index), and gives its bytes
 * back. Null when there was no such file, or a concurrent delete took it (and gave them back).
 */
export async function removeFile<F extends FileTreeFile>(
  store: FileTreeStore<F>,
  userId: string,
  path: FilePath,
  removeData: (removed: F) => Promise<void>,
): Promise<F | null> {
  const removed = await store.deleteFile(userId, path);
  if (removed === null) return null;
  await removeData(removed);
  if (removed.size > 0) await store.release(userId, removed.size);
  return removed;
}

/** Entries removed at once while a folder is deleted: a big folder stays within the route's timeout, and the stores are not flooded. */
const FOLDER_DELETE_PARALLELISM = 25;

/**
 * Removes everything inside `folder`, at any depth (files through `removeOne`, which answers
 * whether it removed one), but not the folder's own entry, which the caller deletes last. `found`
 * says whether the folder existed or held anything.
 */
export async function removeSubtree<F extends FileTreeFile>(
  store: FileTreeStore<F>,
  userId: string,
  folder: string,
  removeOne: (file: F) => Promise<boolean>,
): Promise<{ found: boolean; deletedCount: number }> {
  let found = await store.hasFolder(userId, folder);
  let deletedCount = 0;
  const removeEntry = async (entry: FileTreeEntry<F>): Promise<boolean> => {
    if (entry.kind === 'file') return removeOne(entry);
    await store.deleteFolder(userId, entry.folder);
    return false;
  };
  for await (const entries of store.listSubtree(userId, folder)) {
    found ||= entries.length > 0;
    for (let at = 0; at < entries.length; at += FOLDER_DELETE_PARALLELISM) {
      const outcomes = await Promise.allSettled(entries.slice(at, at + FOLDER_DELETE_PARALLELISM).map(removeEntry));
      throwFirstFailure(outcomes);
      deletedCount += outcomes.filter((o) => o.status === 'fulfilled' && o.value).length;
    }
  }
  return { found, deletedCount };
}

/**
 * Before an upload URL is handed out: 403 `storage quota exceeded` when the owner's usage leaves no
 * room for `neededBytes` (or none at all, when the client did not say). Only spares a useless
 * upload: the storage event reserves the real size.
 */
export async function assertRoomFor<F extends FileTreeFile>(
  store: FileTreeStore<F>,
  userId: string,
  neededBytes: number | undefined,
  quota: { readonly quotaBytes: number; readonly quotaMb: number },
): Promise<void> {
  const usedBytes = await store.usedBytes(userId);
  const needed = neededBytes ?? 0;
  if (usedBytes + needed > quota.quotaBytes || (needed === 0 && usedBytes >= quota.quotaBytes)) throw storageQuotaExceeded(usedBytes, needed, quota.quotaMb);
}

/**
 * The owner and path of an object put through an upload URL under `prefix`; null, with the object
 * deleted, for a key no URL names: nothing may stay there unaccounted.
 */
export async function incomingUpload(
  prefix: string,
  key: string,
  objects: Pick<BucketObjects, 'delete'>,
  log: Logger,
): Promise<{ userId: string; path: FilePath } | null> {
  const parsed = parseStoredKey(prefix, key);
  if (parsed !== null) return parsed;
  log.warn('unexpected object under an upload prefix deleted', { key });
  await objects.delete(key);
  return null;
}

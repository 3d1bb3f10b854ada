import type * as z from 'zod';
import type { UserActor } from '../core/auth/actor.ts';
import type { Clock } from '../core/clock.ts';
import type { Config } from '../core/config.ts';
import type { StoredObject } from '../core/entry/storage-event.ts';

import { NotFoundError, PayloadTooLargeError, ValidationError, type AccessDeniedError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { SearchDocument, SearchIndex, SearchPartition } from '../search/search-index.ts';
import { fileTypeOf, textKindOf } from './extract-text.ts';
import type { TextReader } from './text-reader.ts';
import { assertRoomFor, incomingUpload, putFolders, removeFile, removeSubtree, settleFile, writeWithinQuota } from '../core/files/file-tree.ts';
import { checkKeyLength, extensionOf, normaliseFileName, normaliseFolder, type FilePath } from '../core/files/paths.ts';
import { fileKey, filePathFromClient, folderFromClient, folderKey, INCOMING_PREFIX, USERS_PREFIX } from './knowledge-paths.ts';
import type { BucketObjects } from '../core/files/bucket-objects.ts';
import {
  decodeContent,
  DOWNLOAD_URL_EXPIRES_SEC,
  MAX_DIRECT_UPLOAD_BYTES,
  MB,
  storageQuotaExceeded,
  toMb,
  UPLOAD_URL_EXPIRES_SEC,
} from '../core/files/uploads.ts';
import { type createFolderBody, type listQuery, type searchBody, type uploadBody, type uploadUrlBody } from './knowledge.schema.ts';
import type { IndexStatus, KnowledgeFileRecord, KnowledgeStore } from './knowledge.store.ts';

export interface KnowledgePorts {
  readonly knowledgeStore: KnowledgeStore;
  readonly knowledgeObjects: BucketObjects;
  readonly searchIndex: SearchIndex;
  readonly knowledgeText: TextReader;
  readonly clock: Clock;
  readonly log: Logger;
  readonly config: Pick<Config, 'KNOWLEDGE_QUOTA_MB' | 'KNOWLEDGE_UPLOAD_URL_MAX_MB'>;
}

/** What `content-type` a file gets when the client names none: by its extension, else SPEC's `text/plain`. */
const CONTENT_TYPE_BY_EXTENSION: Readonly<Record<string, string>> = {
  pdf: 'application/pdf',
  md: 'text/markdown',
  markdown: 'text/markdown',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
  html: 'text/html',
  htm: 'text/html',
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  zip: 'application/zip',
};

function contentTypeFor(fileName: string, given: string | undefined): string {
  return given ?? CONTENT_TYPE_BY_EXTENSION[extensionOf(fileName)] ?? 'text/plain';
}

const partitionOf = (userId: string): SearchPartition => ({ index: 'knowledge', owner: userId });

function quotaBytes(ports: Pick<KnowledgePorts, 'config'>): number {
  return ports.config.KNOWLEDGE_QUOTA_MB * MB;
}

function usage(bytes: number, ports: Pick<KnowledgePorts, 'config'>) {
  return { storageUsedMb: toMb(bytes), storageQuotaMb: ports.config.KNOWLEDGE_QUOTA_MB, storageUsedBytes: bytes };
}

function quotaExceeded(usedBytes: number, neededBytes: number, ports: Pick<KnowledgePorts, 'config'>): AccessDeniedError {
  return storageQuotaExceeded(usedBytes, neededBytes, ports.config.KNOWLEDGE_QUOTA_MB);
}

/** A file's documents for the index, ready before anything is written. */
interface Prepared {
  readonly status: Extract<IndexStatus, 'indexed' | 'truncated' | 'unsupported' | 'failed'>;
  /** Why a file is `truncated` or `failed`, for its owner. */
  readonly message?: string;
  readonly fileType: string;
  readonly documents: readonly SearchDocument[];
}

async function prepareIndex(
  userId: string,
  file: { readonly fileName: string; readonly contentType: string; readonly bytes: Uint8Array },
  ports: Pick<KnowledgePorts, 'knowledgeText' | 'log'>,
): Promise<Prepared> {
  const kind = textKindOf(file.fileName, file.contentType);
  const fileType = fileTypeOf(file.fileName, kind);
  if (kind === null) return { status: 'unsupported', fileType, documents: [] };
  const reading = await ports.knowledgeText.read(userId, kind, file.bytes);
  if (reading.status === 'failed') {
    ports.log.warn('knowledge: text extraction failed', { fileName: file.fileName, error: reading.message });
    return { status: 'failed', message: reading.message, fileType, documents: [] };
  }
  const documents = reading.chunks.map((text, i) => ({ id: String(i), text }));
  return reading.status === 'truncated' ? { status: 'truncated', message: reading.message, fileType, documents } : { status: 'indexed', fileType, documents };
}

/**
 * The steps every stored file goes through, for direct and presigned uploads alike: the bytes
 * were reserved in the owner's usage by the caller and the object is in place; this indexes it
 * (replacing what was indexed under its key, or removing it for a file without text), writes its
 * entry and its folders', and gives back the bytes of the file it replaced.
 */
async function settleStoredFile(
  userId: string,
  path: FilePath,
  file: { readonly size: number; readonly contentType: string; readonly prepared: Prepared },
  ports: KnowledgePorts,
): Promise<{ record: KnowledgeFileRecord; usedBytes: number }> {
  const key = fileKey(userId, path);
  const { prepared } = file;
  let status: IndexStatus = prepared.status;
  let message = prepared.message;
  try {
    if (prepared.documents.length > 0)
      await ports.searchIndex.putGroup(partitionOf(userId), {
        group: key,
        fields: { fileName: path.fileName, fileType: prepared.fileType, key, folder: path.folder },
        documents: prepared.documents,
      });
    else await ports.searchIndex.deleteGroup(partitionOf(userId), key);
  } catch (error) {
    // The file is stored either way; its entry says it is not searchable.
    ports.log.error('knowledge: indexing failed', { key, error });
    status = 'failed';
    message = 'its text could not be indexed';
  }
  const record: KnowledgeFileRecord = {
    userId,
    kind: 'file',
    folder: path.folder,
    fileName: path.fileName,
    size: file.size,
    contentType: file.contentType,
    indexStatus: status,
    ...(message === undefined ? {} : { indexMessage: message }),
    lastModified: ports.clock.now(),
  };
  return { record, usedBytes: await settleFile(ports.knowledgeStore, record) };
}

/** POST /knowledge/upload: stores the file and indexes it before answering. */
export async function uploadFile(actor: UserActor, input: z.infer<typeof uploadBody>, ports: KnowledgePorts) {
  const { userId } = actor;
  const path: FilePath = { folder: normaliseFolder('folder', input.folder), fileName: normaliseFileName('fileName', input.fileName) };
  const key = fileKey(userId, path);
  checkKeyLength('fileName', key);
  const bytes = decodeContent(input.content, input.isBase64, 'isBase64 is true');
  if (bytes.length > MAX_DIRECT_UPLOAD_BYTES)
    throw new PayloadTooLargeError(
      MAX_DIRECT_UPLOAD_BYTES,
      `The file is ${bytes.length} bytes; direct uploads are limited to 5 MB (${MAX_DIRECT_UPLOAD_BYTES} bytes). Use POST /knowledge/upload-url for larger files.`,
    );
  const contentType = contentTypeFor(path.fileName, input.contentType);
  // Read before anything is reserved or written: a file that cannot be read is still stored.
  const prepared = await prepareIndex(userId, { fileName: path.fileName, contentType, bytes }, ports);
  if (!(await writeWithinQuota(ports.knowledgeStore, userId, bytes.length, quotaBytes(ports), () => ports.knowledgeObjects.put(key, bytes, contentType))))
    throw quotaExceeded(await ports.knowledgeStore.usedBytes(userId), bytes.length, ports);
  const { record, usedBytes } = await settleStoredFile(userId, path, { size: bytes.length, contentType, prepared }, ports);
  return {
    key,
    fileName: path.fileName,
    size: record.size,
    contentType,
    ...usage(usedBytes, ports),
    indexStatus: record.indexStatus,
    ...(record.indexMessage === undefined ? {} : { indexMessage: record.indexMessage }),
  };
}

function uploadUrlMaxBytes(ports: Pick<KnowledgePorts, 'config'>): number {
  return ports.config.KNOWLEDGE_UPLOAD_URL_MAX_MB * MB;
}

/**
 * POST /knowledge/upload-url: a presigned PUT for one file. The object lands under `incoming/`,
 * where its storage event checks its real size against the limit and the quota before it becomes
 * the user's file (`indexUploadedObject`): the checks here only spare the client a useless upload.
 */
export async function createUploadUrl(actor: UserActor, input: z.infer<typeof uploadUrlBody>, ports: KnowledgePorts) {
  const { userId } = actor;
  const path: FilePath = { folder: normaliseFolder('folder', input.folder), fileName: normaliseFileName('fileName', input.fileName) };
  const key = fileKey(userId, path);
  checkKeyLength('fileName', `${INCOMING_PREFIX}${key}`);
  const maxSize = uploadUrlMaxBytes(ports);
  if (input.size !== undefined && input.size > maxSize)
    throw new PayloadTooLargeError(maxSize, `The file is ${input.size} bytes; uploads through a URL are limited to ${maxSize} bytes.`);
  await assertRoomFor(ports.knowledgeStore, userId, input.size, { quotaBytes: quotaBytes(ports), quotaMb: ports.config.KNOWLEDGE_QUOTA_MB });
  const contentType = contentTypeFor(path.fileName, input.contentType);
  const uploadUrl = await ports.knowledgeObjects.presignPut(incomingKeyOf(key), { contentType, size: input.size, expiresIn: UPLOAD_URL_EXPIRES_SEC });
  return {
    uploadUrl,
    method: 'PUT' as const,
    headers: { 'content-type': contentType, ...(input.size === undefined ? {} : { 'content-length': String(input.size) }) },
    key,
    contentType,
    expiresIn: UPLOAD_URL_EXPIRES_SEC,
    maxSize,
  };
}

/** `users/u/a.txt` -> `incoming/u/a.txt`. */
function incomingKeyOf(key: string): string {
  return `${INCOMING_PREFIX}${key.slice(USERS_PREFIX.length)}`;
}

/**
 * The storage event of an object put through an upload URL: moves it from `incoming/` to the
 * user's key and indexes it, or deletes it when it is over the size limit or the user's quota
 * (recording the rejection when no file of that key exists). Exactly the object's bytes are
 * reserved, whatever the client said when it asked for the URL.
 */
export async function indexUploadedObject(object: StoredObject, ports: KnowledgePorts): Promise<void> {
  const parsed = await incomingUpload(INCOMING_PREFIX, object.key, ports.knowledgeObjects, ports.log);
  if (parsed === null) return;
  const { userId, path } = parsed;
  const key = fileKey(userId, path);
  const incoming = await ports.knowledgeObjects.get(object.key);
  // A later event for the same key already moved it (each event handles what is there when it runs).
  if (incoming === null) return;
  const size = incoming.body.length;
  const reject = async (reason: string) => {
    await ports.knowledgeObjects.delete(object.key);
    ports.log.warn('knowledge: presigned upload rejected', { key, size, reason });
    if ((await ports.knowledgeStore.getFile(userId, path)) !== null) return;
    await ports.knowledgeStore.putFile({
      userId,
      kind: 'file',
      folder: path.folder,
      fileName: path.fileName,
      size: 0,
      contentType: incoming.contentType,
      indexStatus: 'rejected',
      lastModified: ports.clock.now(),
      rejectedReason: reason,
    });
  };
  const maxSize = uploadUrlMaxBytes(ports);
  if (size > maxSize) return reject(`the file is ${size} bytes; uploads through a URL are limited to ${maxSize} bytes`);
  const prepared = await prepareIndex(userId, { fileName: path.fileName, contentType: incoming.contentType, bytes: incoming.body }, ports);
  if (!(await writeWithinQuota(ports.knowledgeStore, userId, size, quotaBytes(ports), () => ports.knowledgeObjects.copy(object.key, key))))
    return reject(`storage quota exceeded: the file is ${size} bytes and the quota is ${ports.config.KNOWLEDGE_QUOTA_MB} MB`);
  await ports.knowledgeObjects.delete(object.key);
  await settleStoredFile(userId, path, { size, contentType: incoming.contentType, prepared }, ports);
}

/** POST /knowledge/download-url */
export async function createDownloadUrl(actor: UserActor, input: { key: string }, ports: KnowledgePorts) {
  const path = filePathFromClient('key', actor.userId, input.key);
  const key = fileKey(actor.userId, path);
  const record = await ports.knowledgeStore.getFile(actor.userId, path);
  if (record === null || record.indexStatus === 'rejected') throw new NotFoundError(`No file ${key}.`);
  const downloadUrl = await ports.knowledgeObjects.presignGet(key, { fileName: path.fileName, expiresIn: DOWNLOAD_URL_EXPIRES_SEC });
  return { downloadUrl, key, expiresIn: DOWNLOAD_URL_EXPIRES_SEC };
}

/** GET /knowledge/list: one folder's files and folders, a page at a time, with the owner's usage. */
export async function listFiles(actor: UserActor, input: z.infer<typeof listQuery>, ports: KnowledgePorts) {
  const { userId } = actor;
  const folder = folderFromClient('prefix', userId, input.prefix);
  const [page, usedBytes] = await Promise.all([
    ports.knowledgeStore.listChildren(userId, folder, input.limit, input.cursor),
    ports.knowledgeStore.usedBytes(userId),
  ]);
  const files = [];
  const folders = [];
  for (const entry of page.items) {
    if (entry.kind === 'folder') folders.push({ key: folderKey(userId, entry.folder), fileName: entry.folder.slice(folder.length, -1) });
    else
      files.push({
        key: fileKey(userId, entry),
        fileName: entry.fileName,
        size: entry.size,
        contentType: entry.contentType,
        lastModified: new Date(entry.lastModified).toISOString(),
        indexStatus: entry.indexStatus,
        ...(entry.indexMessage === undefined ? {} : { indexMessage: entry.indexMessage }),
        ...(entry.rejectedReason === undefined ? {} : { rejectedReason: entry.rejectedReason }),
      });
  }
  return { files, folders, prefix: folder, nextCursor: page.nextCursor, ...usage(usedBytes, ports) };
}

/** POST|DELETE /knowledge/delete: the file, its chunks in the index, and its bytes in the usage. */
export async function deleteFile(actor: UserActor, input: { key: string }, ports: KnowledgePorts) {
  const { userId } = actor;
  const path = filePathFromClient('key', userId, input.key);
  const key = fileKey(userId, path);
  if ((await removeFile(ports.knowledgeStore, userId, path, () => ports.knowledgeObjects.delete(key))) === null) throw new NotFoundError(`No file ${key}.`);
  await ports.searchIndex.deleteGroup(partitionOf(userId), key);
  return { key, deleted: true };
}

/** POST /knowledge/create-folder: the folder and any missing folder above it. */
export async function createFolder(actor: UserActor, input: z.infer<typeof createFolderBody>, ports: KnowledgePorts) {
  const { userId } = actor;
  const parent = folderFromClient('parentFolder', userId, input.parentFolder);
  const folder = parent + normaliseFolder('folderName', input.folderName);
  const key = folderKey(userId, folder);
  checkKeyLength('folderName', key);
  await putFolders(ports.knowledgeStore, userId, folder, ports.clock.now());
  return { key };
}

/** POST /knowledge/delete-folder: everything inside, at any depth, then the folder; irreversible. */
export async function deleteFolder(actor: UserActor, input: { key: string }, ports: KnowledgePorts) {
  const { userId } = actor;
  const folder = folderFromClient('key', userId, input.key);
  if (folder === '') throw new ValidationError('Invalid parameters', ['key: must name a folder inside your space, not its root']);
  const key = folderKey(userId, folder);
  // The index is cleared for the whole folder at once below, so files only lose their objects here.
  const { found, deletedCount } = await removeSubtree(ports.knowledgeStore, userId, folder, async (file) => {
    const fileKeyOf = fileKey(userId, file);
    return (await removeFile(ports.knowledgeStore, userId, file, () => ports.knowledgeObjects.delete(fileKeyOf))) !== null;
  });
  if (!found) throw new NotFoundError(`No folder ${key}.`);
  await ports.searchIndex.deleteGroupsWithPrefix(partitionOf(userId), key);
  await ports.knowledgeStore.deleteFolder(userId, folder);
  return { key, deletedCount };
}

/** POST /knowledge/search: the caller's chunks best matching the query, best first. */
export async function searchFiles(actor: UserActor, input: z.infer<typeof searchBody>, ports: KnowledgePorts) {
  const { userId } = actor;
  const folder = folderFromClient('folder', userId, input.folder);
  const hits = await ports.searchIndex.query(partitionOf(userId), {
    text: input.query,
    limit: input.limit,
    ...(input.fileType === undefined ? {} : { equals: { fileType: input.fileType } }),
    ...(folder === '' ? {} : { groupPrefix: folderKey(userId, folder) }),
  });
  const results = hits.map((hit) => ({
    fileName: hit.fields['fileName'] ?? hit.group.slice(hit.group.lastIndexOf('/') + 1),
    chunk: hit.text,
    score: hit.score,
    key: hit.group,
  }));
  return { results, query: input.query, count: results.length, mode: ports.searchIndex.mode };
}

import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { TableName } from '../area-list.ts';
import { decodeCursor, encodeCursor, type Page } from '../db/cursor.ts';
import { readQuery, sendIf, type Db } from '../db/dynamo.ts';
import { ValidationError } from '../errors.ts';
import { folderName, parentOf, type FilePath } from './paths.ts';

/**
 * Entries are keyed `{parent folder}\u001f{name}` (the unit separator, a control character no
 * client path may hold): the children of a folder are one `begins_with` range, sorted by name,
 * and the whole subtree of folder `a/` is the range `a/`. Folders' names end with `/`, so a file
 * and a folder of one name are two entries.
 */
const SEPARATOR = '\u001f';

export function fileEntry(path: FilePath): string {
  return `${path.folder}${SEPARATOR}${path.fileName}`;
}

export function folderEntry(folder: string): string {
  return `${parentOf(folder)}${SEPARATOR}${folderName(folder)}/`;
}

type Stored<T> = T & { readonly entry: string };

/** What every file entry holds; an area's records add their own fields. */
export interface FileTreeFile {
  readonly userId: string;
  readonly kind: 'file';
  /** '' for the root, else ending with `/`. */
  readonly folder: string;
  readonly fileName: string;
  readonly size: number;
  readonly contentType: string;
  /** Milliseconds since the epoch. */
  readonly lastModified: number;
}

export interface FileTreeFolder {
  readonly userId: string;
  readonly kind: 'folder';
  /** The folder's own path, ending with `/`. */
  readonly folder: string;
  readonly createdAt: number;
}

export type FileTreeEntry<F extends FileTreeFile> = F | FileTreeFolder;

/** The two tables of a file area: entries (`userId`, `entry`) and one usage counter per owner (`userId`). */
export interface FileTreeTables {
  readonly files: TableName;
  readonly usage: TableName;
}

/**
 * Files, folders and per-user usage of a file area (knowledge, websites), so listings, usage and
 * quotas never scan a bucket.
 */
export interface FileTreeStore<F extends FileTreeFile> {
  getFile(userId: string, path: FilePath): Promise<F | null>;
  /** Writes the file's entry; answers the entry it replaced, whose bytes the caller gives back. */
  putFile(record: F): Promise<F | null>;
  /** Deletes the file's entry; answers it when this call deleted it (a concurrent delete gets null). */
  deleteFile(userId: string, path: FilePath): Promise<F | null>;
  hasFolder(userId: string, folder: string): Promise<boolean>;
  /** Creates the folder's entry unless it exists. */
  putFolder(userId: string, folder: string, now: number): Promise<void>;
  deleteFolder(userId: string, folder: string): Promise<void>;
  /** A page of the folder's children (files and folders), by name. */
  listChildren(userId: string, folder: string, limit: number, cursor: string | undefined): Promise<Page<FileTreeEntry<F>>>;
  /** Every entry inside the folder, at any depth, a page of the store at a time. */
  listSubtree(userId: string, folder: string): AsyncGenerator<FileTreeEntry<F>[]>;
  /** Bytes the user's files take, counting uploads under way (strongly consistent). */
  usedBytes(userId: string): Promise<number>;
  /** Bytes and number of the user's files (entries written, rejected uploads included), in one read. */
  usage(userId: string): Promise<{ readonly bytes: number; readonly files: number }>;
  /**
   * Adds `bytes` to the user's usage if it stays within `quotaBytes`: one conditional update, so
   * of concurrent reservations exactly those that fit land. Answers the new usage, or null.
   */
  reserve(userId: string, bytes: number, quotaBytes: number): Promise<number | null>;
  /** Gives `bytes` back; answers the new usage. */
  release(userId: string, bytes: number): Promise<number>;
}

export function createFileTreeStore<F extends FileTreeFile>(db: Db, tables: FileTreeTables): FileTreeStore<F> {
  const files = () => db.table(tables.files);
  const usage = () => db.table(tables.usage);
  /** The record without its sort key, which is derived from it. */
  function strip<T extends FileTreeEntry<F>>(item: Stored<T>): T;
  function strip<T extends FileTreeEntry<F>>(item: Stored<T> | undefined): T | null;
  function strip(item: Stored<FileTreeEntry<F>> | undefined): FileTreeEntry<F> | null {
    if (item === undefined) return null;
    const { entry: _entry, ...record } = item;
    // What is left is the record that was written: the entry key is derived from it.
    return record as unknown as FileTreeEntry<F>;
  }

  /** The owner's entries whose sort key starts with `prefix`: a folder's children, or its whole subtree. */
  const underPrefix = (userId: string, prefix: string) => ({
    TableName: files(),
    KeyConditionExpression: 'userId = :u AND begins_with(#entry, :prefix)',
    ExpressionAttributeNames: { '#entry': 'entry' },
    ExpressionAttributeValues: { ':u': userId, ':prefix': prefix },
    ConsistentRead: true,
  });

  const countFiles = async (userId: string, delta: number) => {
    await db.doc.send(
      new UpdateCommand({
        TableName: usage(),
        Key: { userId },
        UpdateExpression: 'ADD #files :delta',
        ExpressionAttributeNames: { '#files': 'files' },
        ExpressionAttributeValues: { ':delta': delta },
      }),
    );
  };

  async function* querySubtree(userId: string, prefix: string): AsyncGenerator<FileTreeEntry<F>[]> {
    let start: Record<string, unknown> | undefined;
    do {
      const read = await readQuery<Stored<FileTreeEntry<F>>>(db, underPrefix(userId, prefix), { max: 500, start, maxCalls: 1 });
      yield read.items.map((item) => strip(item));
      start = read.lastKey;
    } while (start !== undefined);
  }

  return {
    async getFile(userId, path) {
      const out = await db.doc.send(new GetCommand({ TableName: files(), Key: { userId, entry: fileEntry(path) }, ConsistentRead: true }));
      return strip(out.Item as Stored<F> | undefined);
    },
    async putFile(record) {
      const out = await db.doc.send(new PutCommand({ TableName: files(), Item: { ...record, entry: fileEntry(record) }, ReturnValues: 'ALL_OLD' }));
      const replaced = strip(out.Attributes as Stored<F> | undefined);
      // Counted by the write that created the entry, so concurrent writes of one key count it once.
      if (replaced === null) await countFiles(record.userId, 1);
      return replaced;
    },
    async deleteFile(userId, path) {
      const out = await db.doc.send(
        new DeleteCommand({
          TableName: files(),
          Key: { userId, entry: fileEntry(path) },
          ReturnValues: 'ALL_OLD',
        }),
      );
      const removed = strip(out.Attributes as Stored<F> | undefined);
      if (removed !== null) await countFiles(userId, -1);
      return removed;
    },
    async hasFolder(userId, folder) {
      const out = await db.doc.send(new GetCommand({ TableName: files(), Key: { userId, entry: folderEntry(folder) }, ConsistentRead: true }));
      return out.Item !== undefined;
    },
    async putFolder(userId, folder, now) {
      const record: Stored<FileTreeFolder> = { userId, kind: 'folder', folder, createdAt: now, entry: folderEntry(folder) };
      // Exists already: nothing to do (the first creation time stays).
      await sendIf(db.doc.send(new PutCommand({ TableName: files(), Item: record, ConditionExpression: 'attribute_not_exists(userId)' })));
    },
    async deleteFolder(userId, folder) {
      await db.doc.send(new DeleteCommand({ TableName: files(), Key: { userId, entry: folderEntry(folder) } }));
    },
    async listChildren(userId, folder, limit, cursor) {
      const prefix = `${folder}${SEPARATOR}`;
      const start = decodeCursor(cursor);
      // A cursor is only taken back by the listing that made it: another user's or folder's is a 400.
      if (start !== undefined && (start['userId'] !== userId || typeof start['entry'] !== 'string' || !start['entry'].startsWith(prefix)))
        throw new ValidationError('Invalid query parameters', ['cursor: is not a cursor returned by this listing']);
      const read = await readQuery<Stored<FileTreeEntry<F>>>(db, underPrefix(userId, prefix), { max: limit + 1, start });
      // One item past the page tells whether there is a next one, so the last page says it is the last.
      const more = read.items.length > limit;
      const items = read.items.slice(0, limit);
      const last = items[items.length - 1];
      return {
        items: items.map((item) => strip(item)),
        nextCursor: more && last !== undefined ? encodeCursor({ userId, entry: last.entry }) : null,
      };
    },
    listSubtree(userId, folder) {
      return querySubtree(userId, folder);
    },
    async usage(userId) {
      const out = await db.doc.send(new GetCommand({ TableName: usage(), Key: { userId }, ConsistentRead: true }));
      const read = (name: string) => (typeof out.Item?.[name] === 'number' ? (out.Item[name] as number) : 0);
      return { bytes: read('bytes'), files: read('files') };
    },
    async usedBytes(userId) {
      const out = await db.doc.send(new GetCommand({ TableName: usage(), Key: { userId }, ConsistentRead: true }));
      return typeof out.Item?.['bytes'] === 'number' ? out.Item['bytes'] : 0;
    },
    async reserve(userId, bytes, quotaBytes) {
      if (bytes > quotaBytes) return null;
      const out = await sendIf(
        db.doc.send(
          new UpdateCommand({
            TableName: usage(),
            Key: { userId },
            UpdateExpression: 'ADD #bytes :bytes',
            ConditionExpression: 'attribute_not_exists(#bytes) OR #bytes <= :room',
            ExpressionAttributeNames: { '#bytes': 'bytes' },
            ExpressionAttributeValues: { ':bytes': bytes, ':room': quotaBytes - bytes },
            ReturnValues: 'UPDATED_NEW',
          }),
        ),
      );
      return out === null ? null : (out.Attributes?.['bytes'] as number);
    },
    async release(userId, bytes) {
      const out = await db.doc.send(
        new UpdateCommand({
          TableName: usage(),
          Key: { userId },
          UpdateExpression: 'ADD #bytes :bytes',
          ExpressionAttributeNames: { '#bytes': 'bytes' },
          ExpressionAttributeValues: { ':bytes': -bytes },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return out.Attributes?.['bytes'] as number;
    },
  };
}

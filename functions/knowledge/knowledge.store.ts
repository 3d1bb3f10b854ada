import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { decodeCursor, encodeCursor, type Page } from '../core/db/cursor.ts';
import { readQuery, sendIf, type Db } from '../core/db/dynamo.ts';
import { ValidationError } from '../core/errors.ts';
import { folderName, parentOf, type FilePath } from './knowledge-paths.ts';

/**
 * `indexed`: its text is searchable; `unsupported`: a type without text the area reads;
 * `failed`: it could not be read (a damaged PDF); `rejected`: a presigned upload over the size
 * limit or the quota, whose object was deleted.
 */
export type IndexStatus = 'indexed' | 'unsupported' | 'failed' | 'rejected';

export interface KnowledgeFileRecord {
  readonly userId: string;
  readonly kind: 'file';
  /** '' for the root, else ending with `/`. */
  readonly folder: string;
  readonly fileName: string;
  readonly size: number;
  readonly contentType: string;
  readonly indexStatus: IndexStatus;
  /** Milliseconds since the epoch. */
  readonly lastModified: number;
  /** Why a presigned upload was rejected. */
  readonly rejectedReason?: string;
}

export interface KnowledgeFolderRecord {
  readonly userId: string;
  readonly kind: 'folder';
  /** The folder's own path, ending with `/`. */
  readonly folder: string;
  readonly createdAt: number;
}

export type KnowledgeEntry = KnowledgeFileRecord | KnowledgeFolderRecord;

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

/** Files, folders and per-user usage of the knowledge area (tables `knowledge-files`, `knowledge-usage`). */
export interface KnowledgeStore {
  getFile(userId: string, path: FilePath): Promise<KnowledgeFileRecord | null>;
  /** Writes the file's entry; answers the entry it replaced, whose bytes the caller gives back. */
  putFile(record: KnowledgeFileRecord): Promise<KnowledgeFileRecord | null>;
  /** Deletes the file's entry; answers it when this call deleted it (a concurrent delete gets null). */
  deleteFile(userId: string, path: FilePath): Promise<KnowledgeFileRecord | null>;
  hasFolder(userId: string, folder: string): Promise<boolean>;
  /** Creates the folder's entry unless it exists. */
  putFolder(userId: string, folder: string, now: number): Promise<void>;
  deleteFolder(userId: string, folder: string): Promise<void>;
  /** A page of the folder's children (files and folders), by name. */
  listChildren(userId: string, folder: string, limit: number, cursor: string | undefined): Promise<Page<KnowledgeEntry>>;
  /** Every entry inside the folder, at any depth, a page of the store at a time. */
  listSubtree(userId: string, folder: string): AsyncGenerator<KnowledgeEntry[]>;
  /** Bytes the user's files take, counting uploads under way (strongly consistent). */
  usedBytes(userId: string): Promise<number>;
  /**
   * Adds `bytes` to the user's usage if it stays within `quotaBytes`: one conditional update, so
   * of concurrent reservations exactly those that fit land. Answers the new usage, or null.
   */
  reserve(userId: string, bytes: number, quotaBytes: number): Promise<number | null>;
  /** Gives `bytes` back; answers the new usage. */
  release(userId: string, bytes: number): Promise<number>;
}

export function createKnowledgeStore(db: Db): KnowledgeStore {
  const files = () => db.table('knowledge-files');
  const usage = () => db.table('knowledge-usage');
  /** The record without its sort key, which is derived from it. */
  function strip<T extends KnowledgeEntry>(item: Stored<T>): T;
  function strip<T extends KnowledgeEntry>(item: Stored<T> | undefined): T | null;
  function strip(item: Stored<KnowledgeEntry> | undefined): KnowledgeEntry | null {
    if (item === undefined) return null;
    const { entry: _entry, ...record } = item;
    return record;
  }

  /** The owner's entries whose sort key starts with `prefix`: a folder's children, or its whole subtree. */
  const underPrefix = (userId: string, prefix: string) => ({
    TableName: files(),
    KeyConditionExpression: 'userId = :u AND begins_with(#entry, :prefix)',
    ExpressionAttributeNames: { '#entry': 'entry' },
    ExpressionAttributeValues: { ':u': userId, ':prefix': prefix },
    ConsistentRead: true,
  });

  async function* querySubtree(userId: string, prefix: string): AsyncGenerator<KnowledgeEntry[]> {
    let start: Record<string, unknown> | undefined;
    do {
      const read = await readQuery<Stored<KnowledgeEntry>>(db, underPrefix(userId, prefix), { max: 500, start, maxCalls: 1 });
      yield read.items.map((item) => strip(item));
      start = read.lastKey;
    } while (start !== undefined);
  }

  return {
    async getFile(userId, path) {
      const out = await db.doc.send(new GetCommand({ TableName: files(), Key: { userId, entry: fileEntry(path) }, ConsistentRead: true }));
      return strip(out.Item as Stored<KnowledgeFileRecord> | undefined);
    },
    async putFile(record) {
      const out = await db.doc.send(new PutCommand({ TableName: files(), Item: { ...record, entry: fileEntry(record) }, ReturnValues: 'ALL_OLD' }));
      return strip(out.Attributes as Stored<KnowledgeFileRecord> | undefined);
    },
    async deleteFile(userId, path) {
      const out = await db.doc.send(
        new DeleteCommand({
          TableName: files(),
          Key: { userId, entry: fileEntry(path) },
          ReturnValues: 'ALL_OLD',
        }),
      );
      return strip(out.Attributes as Stored<KnowledgeFileRecord> | undefined);
    },
    async hasFolder(userId, folder) {
      const out = await db.doc.send(new GetCommand({ TableName: files(), Key: { userId, entry: folderEntry(folder) }, ConsistentRead: true }));
      return out.Item !== undefined;
    },
    async putFolder(userId, folder, now) {
      const record: Stored<KnowledgeFolderRecord> = { userId, kind: 'folder', folder, createdAt: now, entry: folderEntry(folder) };
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
      const read = await readQuery<Stored<KnowledgeEntry>>(db, underPrefix(userId, prefix), { max: limit + 1, start });
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

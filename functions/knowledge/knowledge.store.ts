import type { Db } from '../core/db/dynamo.ts';
import { createFileTreeStore, type FileTreeEntry, type FileTreeFile, type FileTreeStore } from '../core/files/file-tree.store.ts';

/**
 * `indexed`: its text is searchable; `truncated`: the part of its text within the reading limits
 * (pages, characters) is searchable, the rest is not; `unsupported`: a type without text the area
 * reads; `failed`: it could not be read (a damaged PDF, or over the time or memory a read may
 * take); `rejected`: a presigned upload over the size limit or the quota, whose object was deleted.
 */
export type IndexStatus = 'indexed' | 'truncated' | 'unsupported' | 'failed' | 'rejected';

export interface KnowledgeFileRecord extends FileTreeFile {
  readonly indexStatus: IndexStatus;
  /** Why a file is `truncated` or `failed`, in words for its owner. */
  readonly indexMessage?: string;
  /** Why a presigned upload was rejected. */
  readonly rejectedReason?: string;
}

export type KnowledgeEntry = FileTreeEntry<KnowledgeFileRecord>;

/** Files, folders and per-user usage of the knowledge area (tables `knowledge-files`, `knowledge-usage`). */
export type KnowledgeStore = FileTreeStore<KnowledgeFileRecord>;

export function createKnowledgeStore(db: Db): KnowledgeStore {
  return createFileTreeStore<KnowledgeFileRecord>(db, { files: 'knowledge-files', usage: 'knowledge-usage' });
}

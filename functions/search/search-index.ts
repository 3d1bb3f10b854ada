/**
 * The search engine every area shares (knowledge files, and the public resource search of skills,
 * agents and MCP servers): a port, so the local wiring and the cloud choose their own adapters.
 *
 * Documents are held in groups (a knowledge file is one group; each of its chunks a document): a
 * group is written and removed as a whole, so re-indexing a file never leaves chunks of the old one.
 * Groups live in partitions (`{index, owner}`), and a query reads exactly one partition, so no query
 * can see another owner's documents.
 */

/** One owner's part of one index: `{index: 'knowledge', owner: userId}`, `{index: 'resources', owner: 'public'}`. */
export interface SearchPartition {
  readonly index: string;
  readonly owner: string;
}

/** One searchable piece of text (a chunk of a file, a resource's description). */
export interface SearchDocument {
  /** Unique within its group, e.g. the chunk's number. */
  readonly id: string;
  readonly text: string;
}

/** Everything indexed for one thing (a file): its documents and the metadata they share. */
export interface SearchGroup {
  /** The thing's key within the partition (a file's key); `putGroup` replaces what was indexed under it. */
  readonly group: string;
  /** Metadata for filters and results (fileName, folder, fileType, ...); values are strings. */
  readonly fields: Readonly<Record<string, string>>;
  readonly documents: readonly SearchDocument[];
}

export interface SearchQuery {
  readonly text: string;
  /** At most this many hits, best first. */
  readonly limit: number;
  /** Only documents whose fields equal these values. */
  readonly equals?: Readonly<Record<string, string>>;
  /** Only documents of groups whose key starts with this (a folder). */
  readonly groupPrefix?: string;
}

export interface SearchHit {
  readonly group: string;
  readonly id: string;
  readonly text: string;
  /** Higher is better; hits come in descending order of score. */
  readonly score: number;
  readonly fields: Readonly<Record<string, string>>;
}

/** `hybrid`: lexical and vector similarity together (an embedder is configured); `lexical`: BM25 only. */
export type SearchMode = 'hybrid' | 'lexical';

export interface SearchIndex {
  readonly mode: SearchMode;
  /** Indexes the group, replacing every document previously indexed under its key; searchable when it resolves. */
  putGroup(partition: SearchPartition, group: SearchGroup): Promise<void>;
  /** Removes the group's documents; none appears in a query that starts after it resolves. */
  deleteGroup(partition: SearchPartition, group: string): Promise<void>;
  /** Removes every group whose key starts with `prefix`; answers how many groups were removed. */
  deleteGroupsWithPrefix(partition: SearchPartition, prefix: string): Promise<number>;
  query(partition: SearchPartition, query: SearchQuery): Promise<readonly SearchHit[]>;
}

/** Text to vectors (Amazon Bedrock Titan Text Embeddings V2 in both wirings when configured). */
export interface Embedder {
  readonly model: string;
  readonly dimensions: number;
  /** One vector per text, in order; `query` and `document` may be embedded differently. */
  embed(texts: readonly string[], purpose: 'document' | 'query'): Promise<Float32Array[]>;
}

import type { Db } from '../core/db/dynamo.ts';
import { ValidationError } from '../core/errors.ts';
import { createBedrockEmbedder } from './bedrock-embedder.ts';
import { INDEX_SLICE_CHARS, PartitionIndex } from './partition-index.ts';
import type { Embedder, SearchIndex, SearchPartition } from './search-index.ts';
import type { SearchSettings } from './search.settings.ts';
import { createSearchStore, partitionKey, type SearchStore, type StoredDocument } from './search.store.ts';

/** The largest document text: a chunk, not a file (DynamoDB items stop at 400 KB, vectors included). */
export const MAX_DOCUMENT_CHARS = 32_768;

export interface SearchEngineOptions {
  readonly store: SearchStore;
  /** Null: lexical search only. */
  readonly embedder: Embedder | null;
  /** Partitions kept in memory, least recently used dropped first. @default 64 */
  readonly cachedPartitions?: number;
}

interface Cached {
  readonly version: number;
  readonly index: PartitionIndex;
}

/**
 * The search engine over a `SearchStore`: each partition's documents are indexed in memory
 * (BM25 with stemming, and vectors when an embedder is configured) and cached by the partition's
 * version. A query reads the version (one strongly consistent GetItem) and uses the cache when it
 * matches, else rebuilds the partition from the store; writes made by this process update the cache
 * in place. So a process sees every write, its own at once and other processes' on the next query.
 */
export function createSearchEngine(options: SearchEngineOptions): SearchIndex {
  const { store, embedder } = options;
  const capacity = options.cachedPartitions ?? 64;
  const cache = new Map<string, Cached>();
  const loading = new Map<string, Promise<Cached>>();
  /** Writes to one partition run one after another in this process, so each finds the cache one version behind. */
  const writing = new Map<string, Promise<unknown>>();

  function remember(key: string, cached: Cached): void {
    cache.delete(key);
    cache.set(key, cached);
    while (cache.size > capacity) cache.delete(cache.keys().next().value!);
  }

  async function current(partition: SearchPartition): Promise<PartitionIndex> {
    const key = partitionKey(partition);
    const version = await store.version(partition);
    const cached = cache.get(key);
    if (cached !== undefined && cached.version === version) {
      remember(key, cached);
      return cached.index;
    }
    let load = loading.get(key);
    if (load === undefined) {
      load = store
        .readPartition(partition)
        .then(async ({ version: read, documents }) => {
          const built = { version: read, index: await PartitionIndex.build(documents) };
          const now = cache.get(key);
          if (now === undefined || now.version <= read) remember(key, built);
          return built;
        })
        .finally(() => loading.delete(key));
      loading.set(key, load);
    }
    return (await load).index;
  }

  /**
   * Runs a change of the partition, then applies it to the cached index when that is exactly one
   * version behind and `apply` can (it answers false for a change too large to index in one go:
   * the cached index is dropped instead, and the next query builds it in slices).
   */
  function change<T>(
    partition: SearchPartition,
    write: () => Promise<{ version: number; result: T }>,
    apply: (index: PartitionIndex, result: T) => boolean,
  ): Promise<T> {
    const key = partitionKey(partition);
    const run = (writing.get(key) ?? Promise.resolve())
      .catch(() => undefined)
      .then(async () => {
        const { version, result } = await write();
        const cached = cache.get(key);
        if (cached !== undefined && cached.version === version - 1 && apply(cached.index, result)) {
          remember(key, { version, index: cached.index });
        } else if (cached !== undefined && cached.version !== version) cache.delete(key);
        return result;
      });
    writing.set(key, run);
    void run.finally(() => {
      if (writing.get(key) === run) writing.delete(key);
    });
    return run;
  }

  return {
    mode: embedder === null ? 'lexical' : 'hybrid',

    async putGroup(partition, group) {
      for (const document of group.documents)
        if (document.text.length > MAX_DOCUMENT_CHARS)
          throw new ValidationError(
            `A search document holds at most ${MAX_DOCUMENT_CHARS} characters; ${group.group} ${document.id} has ${document.text.length}.`,
          );
      const vectors =
        embedder === null || group.documents.length === 0
          ? null
          : await embedder.embed(
              group.documents.map((d) => d.text),
              'document',
            );
      const documents: StoredDocument[] = group.documents.map((d, i) => ({
        group: group.group,
        id: d.id,
        text: d.text,
        fields: group.fields,
        ...(vectors?.[i] ? { vector: vectors[i] } : {}),
      }));
      await change(
        partition,
        async () => ({ version: await store.replaceGroup(partition, group.group, documents), result: documents }),
        (index, docs) => {
          if (docs.reduce((chars, d) => chars + d.text.length, 0) > INDEX_SLICE_CHARS) return false;
          index.putGroup(group.group, docs);
          return true;
        },
      );
    },

    async deleteGroup(partition, group) {
      await change(
        partition,
        async () => {
          const { groups, version } = await store.deleteGroups(partition, group, true);
          return { version, result: groups };
        },
        (index, groups) => {
          index.removeGroups(groups);
          return true;
        },
      );
    },

    async deleteGroupsWithPrefix(partition, prefix) {
      const groups = await change(
        partition,
        async () => {
          const { groups: removed, version } = await store.deleteGroups(partition, prefix, false);
          return { version, result: removed };
        },
        (index, removed) => {
          index.removeGroups(removed);
          return true;
        },
      );
      return groups.length;
    },

    async query(partition, query) {
      if (query.limit < 1 || query.text.trim() === '') return [];
      const [index, vector] = await Promise.all([
        current(partition),
        embedder === null ? null : embedder.embed([query.text], 'query').then((v) => v[0] ?? null),
      ]);
      return index.query(query, vector);
    },
  };
}

/** The `searchIndex` port as configured: the engine over the search tables, with Titan embeddings when SEARCH_EMBEDDER is `bedrock`. */
export function createSearchIndex({ db, config }: { readonly db: Db; readonly config: SearchSettings & { readonly AWS_REGION: string } }): SearchIndex {
  const embedder =
    config.SEARCH_EMBEDDER === 'bedrock'
      ? createBedrockEmbedder({
          modelId: config.EMBEDDING_MODEL_ID,
          dimensions: config.EMBEDDING_DIMENSIONS,
          region: config.BEDROCK_REGION ?? config.AWS_REGION,
          ...(config.BEDROCK_ENDPOINT ? { endpoint: config.BEDROCK_ENDPOINT } : {}),
        })
      : null;
  return createSearchEngine({ store: createSearchStore(db), embedder });
}

import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { createSearchIndex } from './search-engine.ts';
import type { SearchIndex } from './search-index.ts';
import { searchSettings } from './search.settings.ts';

/**
 * The search engine every area shares (knowledge files, public resources): no routes of its own,
 * the `searchIndex` port over its two tables. See docs/ARCHITECTURE.md, "Search".
 */
export const searchArea = defineArea({
  name: 'search',
  tables: [
    // Every indexed document: `{index}#{owner}` partitions, `{group} {id}` sort keys (search.store.ts).
    { name: 'search-documents', partitionKey: 'partition', sortKey: 'docKey' },
    // One version counter per partition, bumped after each change: what in-memory indexes are checked against.
    { name: 'search-partitions', partitionKey: 'partition' },
  ],
  provides: {
    searchIndex: providePort<SearchIndex>({ tables: ['search-documents', 'search-partitions'], embeddings: true }, (kernel): SearchIndex =>
      createSearchIndex(kernel),
    ),
  },
  settings: searchSettings,
});

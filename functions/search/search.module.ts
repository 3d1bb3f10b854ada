import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { createSearchIndex } from './search-engine.ts';
import type { SearchIndex } from './search-index.ts';
import { SEARCH_LIBRARY_FILES } from './partition-index.ts';
import { searchSettings } from './search.settings.ts';

/**
 * `GET /search` for anyone: 120 a minute per signed-in caller, 60 per address for anonymous ones
 * (each query may rebuild the shared index in a cold container, so it is not free to repeat).
 */
const SEARCH_RATE_LIMIT = { limit: 120, windowSec: 60, bucket: 'search', anonymousLimit: 60 } as const;

/**
 * The search engine every area shares (knowledge files, public resources): the `searchIndex` port
 * over its two tables, and the public resource search (SPEC 4.7) over what the agents, MCP and
 * skills areas put in it (resource-index.ts). See docs/ARCHITECTURE.md, "Search".
 */
export const searchArea = defineArea({
  name: 'search',
  routes: [
    // Envelope B; anonymous callers and role tokens (an agent's run) may search public resources.
    { method: 'GET', path: '/search', handler: 'search-resources', auth: 'optional', callers: 'role', rateLimit: SEARCH_RATE_LIMIT },
  ],
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
  // GET /search shows each result's owner by their current alias.
  uses: ['users'],
  settings: searchSettings,
  // GET /search queries: the index libraries ship beside its bundle (partition-index.ts).
  runtimeFiles: SEARCH_LIBRARY_FILES,
});

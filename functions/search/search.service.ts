import type * as z from 'zod';
import { RESOURCE_PARTITION, toResourceResults } from './resource-index.ts';
import type { UserStore } from '../users/user.store.ts';
import type { SearchIndex } from './search-index.ts';
import type { searchResourcesQuery } from './search.schema.ts';

export interface SearchPorts {
  readonly searchIndex: SearchIndex;
  readonly users: Pick<UserStore, 'getMany'>;
}

/**
 * Hits asked of the engine per result wanted: a resource matching in several chunks (a skill's
 * body) is several hits but one result, so asking for `limit` hits alone could leave the page short.
 */
const HITS_PER_RESULT = 4;

/**
 * GET /search (SPEC 4.7): public agents, MCP servers, their tools and skills best matching `q`,
 * best first. Only public resources are ever in the index (resource-index.ts), so the caller,
 * anonymous or not, changes nothing.
 */
export async function searchResources(input: z.infer<typeof searchResourcesQuery>, ports: SearchPorts) {
  const hits = await ports.searchIndex.query(RESOURCE_PARTITION, {
    text: input.q,
    limit: input.limit * HITS_PER_RESULT,
    ...(input.type === 'all' ? {} : { equals: { resultType: input.type } }),
  });
  const found = toResourceResults(hits);
  // Owners are shown by their alias now, not the one they had when the resource was indexed: an
  // alias change re-indexes nothing, and one BatchGetItem of the page's owners keeps every slug true.
  const owners = await ports.users.getMany(found.map((r) => r.ownerId).filter((id) => id !== ''));
  const results = found
    .flatMap((result) => {
      if (result.ownerId === '') return [result];
      const alias = owners.get(result.ownerId)?.alias ?? null;
      // An owner gone or without an alias has no address to show: the resource is left out.
      if (alias === null) return [];
      return [{ ...result, owner: alias, slug: `${alias}/${result.slug.slice(result.slug.indexOf('/') + 1)}` }];
    })
    .slice(0, input.limit)
    // In SPEC 4.7's order; only public resources are indexed.
    .map(({ resourceId, resourceType, name, description, slug, score, owner }) => ({
      resourceId,
      resourceType,
      name,
      description,
      slug,
      score,
      owner,
      visibility: 'public' as const,
    }));
  return { results, query: input.q, type: input.type, count: results.length, mode: ports.searchIndex.mode };
}

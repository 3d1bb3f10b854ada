import { syncResource, type PublicResource } from '../../functions/search/resource-index.ts';
import { createSearchEngine } from '../../functions/search/search-engine.ts';
import { createSearchStore } from '../../functions/search/search.store.ts';
import { DEFAULT_SPARES } from '../../lib/local/platform.ts';
import { createUser, startTestPlatform } from '../support/local-platform.ts';
import { elapsedSince, type BenchModule } from './harness.ts';
import { get, keepAliveAgent } from './http-load.ts';
import { measured, versus } from './stats.ts';
import { random, zipfQueries, zipfWord } from './zipf-text.ts';

/** Accounts owning the catalogue, so a page's results have a few owners to look up. */
const OWNERS = 50;
const SMALL = 1_000;
const LARGE = 10_000;
const QUERIES = 300;
const WARM_UP = 20;
/**
 * Writers seeding the catalogue side by side, as many Lambda containers of the agents, MCP and
 * skills functions would: one engine queues its writes to a partition, so one writer alone would
 * take minutes for 10,000 resources.
 */
const SEED_WRITERS = 8;
/** Below the signed-in limit of `GET /search` (120 a minute), after which the test clock moves to a fresh window. */
const REQUESTS_PER_WINDOW = 100;
const RATE_WINDOW_MS = 60_000;

/**
 * The `i`th resource of the catalogue: agents, MCP servers with three tools each, and skills with a
 * short body, in turn; a two-word name and a 15-word description, as a published resource has.
 */
function resource(i: number, next: () => number, owners: readonly { readonly alias: string; readonly userId: string }[]): PublicResource {
  const words = (n: number) => Array.from({ length: n }, () => zipfWord(next));
  const type = (['agent', 'mcp', 'skill'] as const)[i % 3]!;
  const { alias: owner, userId: ownerId } = owners[i % owners.length]!;
  const name = `${words(2).join('-')}-${i}`;
  return {
    resourceType: type,
    resourceId: `bench-${type}-${i}`,
    name,
    description: words(15).join(' '),
    slug: `${owner}/${name}`,
    owner,
    ownerId,
    ...(type === 'mcp' ? { tools: [0, 1, 2].map((t) => ({ name: `${words(2).join('_')}_${t}`, description: words(8).join(' ') })) } : {}),
    ...(type === 'skill' ? { body: words(120).join(' ') } : {}),
  };
}

/**
 * `GET /search` over HTTP against the local platform (auth, rate limit, the shared engine over
 * dynalite, deduplication, the envelope) with 1,000 and then 10,000 public resources indexed. The
 * catalogue is seeded through `syncResource` over the platform's search tables, as the agents, MCP
 * and skills services call it: creating 10,000 agents over HTTP (each one's source checked by the
 * Python runtime) would take far longer than the search being measured.
 */
export const searchBench: BenchModule = {
  name: 'search',
  async run({ progress, defer }) {
    progress('search: starting the platform');
    const platform = await startTestPlatform({ ...DEFAULT_SPARES });
    defer(() => platform.stop({ removeData: true }));
    const user = await createUser(platform, { alias: 'benchsearch' });
    // Real accounts: results show each owner's current alias, read with the page (search.service.ts).
    const owners = await Promise.all(
      Array.from({ length: OWNERS }, async (_, i) => ({ alias: `owner${i}`, userId: (await createUser(platform, { alias: `owner${i}` })).userId })),
    );
    // The platform's own search tables, through engines of their own: its engine (the one answering
    // GET /search) finds the versions moved and rebuilds the partition during the warm-up queries.
    const writers = Array.from({ length: SEED_WRITERS }, () => createSearchEngine({ store: createSearchStore(platform.running.ports.db), embedder: null }));
    const agent = keepAliveAgent();
    defer(() => agent.destroy());
    const next = random(1);
    let seeded = 0;
    const seedTo = async (total: number): Promise<number> => {
      const startedAt = performance.now();
      const from = seeded;
      const all = Array.from({ length: total - from }, (_, i) => resource(from + i, next, owners));
      await Promise.all(
        writers.map(async (writer, w) => {
          for (let i = w; i < all.length; i += SEED_WRITERS) await syncResource(writer, all[i]!.resourceType, all[i]!.resourceId, all[i]!);
        }),
      );
      seeded = total;
      return elapsedSince(startedAt);
    };

    let sent = 0;
    const search = async (q: string): Promise<number> => {
      if (sent++ % REQUESTS_PER_WINDOW === 0) platform.clock.alignToWindow(RATE_WINDOW_MS);
      const startedAt = performance.now();
      const reply = await get(agent, {
        name: 'search',
        url: `${platform.url}/search?q=${encodeURIComponent(q)}`,
        headers: { authorization: `Bearer ${user.token}` },
      });
      const ms = elapsedSince(startedAt);
      if (reply.status !== 200) throw new Error(`GET /search: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
      return ms;
    };
    const asked = await zipfQueries(QUERIES);
    const measure = async (label: string) => {
      progress(`search: ${QUERIES} queries at ${label} resources`);
      for (const q of asked.slice(0, WARM_UP)) await search(q);
      const samples: number[] = [];
      for (const q of asked) samples.push(await search(q));
      return samples;
    };

    progress(`search: indexing ${SMALL} resources`);
    await seedTo(SMALL);
    const small = await measure(String(SMALL));
    progress(`search: indexing ${LARGE - SMALL} more resources`);
    const seedMs = await seedTo(LARGE);
    const large = await measure(String(LARGE));

    const smallRow = measured(`GET /search, ${SMALL} resources`, small, {
      note: 'two-word queries, type all, limit 10, signed in; index seeded through syncResource, not 10,000 creates over HTTP (see the module)',
    });
    const largeRow = measured(`GET /search, ${LARGE} resources`, large, { note: 'target: p50 under 50 ms' });
    return [
      smallRow,
      versus(largeRow, smallRow),
      measured(`index ${LARGE - SMALL} resources`, [seedMs], {
        perSecond: ((LARGE - SMALL) / seedMs) * 1000,
        note: `syncResource, ${SEED_WRITERS} writers side by side; a third are MCP servers with 3 tools, a third skills with a 120-word body`,
      }),
    ];
  },
};

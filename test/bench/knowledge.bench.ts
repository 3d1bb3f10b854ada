import { createSearchEngine } from '../../functions/search/search-engine.ts';
import type { SearchIndex, SearchPartition } from '../../functions/search/search-index.ts';
import { createSearchStore } from '../../functions/search/search.store.ts';
import { startLocalDb } from '../support/local-db.ts';
import { elapsedSince, type BenchModule } from './harness.ts';
import { measured, versus } from './stats.ts';
import { random, zipfQueries, zipfWord } from './zipf-text.ts';

const CHUNK_WORDS = 170;
const CHUNKS_PER_FILE = 20;
const SMALL = 1_000;
const LARGE = 10_000;
const QUERIES = 300;
const REBUILDS = 5;

function corpus(chunks: number, seed: number): string[] {
  const next = random(seed);
  return Array.from({ length: chunks }, () => Array.from({ length: CHUNK_WORDS }, () => zipfWord(next)).join(' '));
}

async function index(engine: SearchIndex, partition: SearchPartition, chunks: readonly string[]): Promise<void> {
  for (let start = 0; start < chunks.length; start += CHUNKS_PER_FILE) {
    const file = `docs/file-${start / CHUNKS_PER_FILE}.md`;
    const documents = chunks.slice(start, start + CHUNKS_PER_FILE).map((text, i) => ({ id: String(i), text }));
    await engine.putGroup(partition, { group: file, fields: { fileName: file, fileType: 'md' }, documents });
  }
}

/**
 * What a search engine replaces: every chunk (kept lower-cased) scanned for each query word, as a
 * substring, occurrences counted, the best five kept.
 */
function linearScan(chunks: readonly string[], query: string): number {
  const words = query.toLowerCase().split(' ');
  const scores: number[] = [];
  for (const chunk of chunks) {
    let score = 0;
    for (const word of words) for (let at = chunk.indexOf(word); at !== -1; at = chunk.indexOf(word, at + word.length)) score++;
    if (score > 0) scores.push(score);
  }
  return scores.sort((a, b) => b - a).slice(0, 5).length;
}

/**
 * The shared search engine (knowledge files, resource search) over dynalite, as the platform runs
 * it: search at 1,000 and 10,000 chunks of Zipf-distributed English words, queries interleaved,
 * next to a linear scan of the same 10,000 chunks; indexing throughput; the rebuild another
 * process pays on its first query after a write.
 */
export const knowledgeBench: BenchModule = {
  name: 'knowledge',
  async run({ progress, defer }) {
    const local = await startLocalDb();
    defer(() => local.stop());
    const engine = createSearchEngine({ store: createSearchStore(local.db), embedder: null });
    const small: SearchPartition = { index: 'bench', owner: 'small' };
    const large: SearchPartition = { index: 'bench', owner: 'large' };
    const smallChunks = corpus(SMALL, 1);
    const largeChunks = corpus(LARGE, 2);

    progress(`knowledge: indexing ${SMALL} + ${LARGE} chunks`);
    await index(engine, small, smallChunks);
    const startedAt = performance.now();
    await index(engine, large, largeChunks);
    const indexingMs = elapsedSince(startedAt);
    const megabytes = largeChunks.reduce((sum, chunk) => sum + Buffer.byteLength(chunk), 0) / 1e6;

    progress('knowledge: searching');
    const asked = await zipfQueries(QUERIES);
    const found = { small: 0, large: 0 };
    const samples = { small: [] as number[], large: [] as number[], scan: [] as number[] };
    for (const [i, query] of asked.entries()) {
      // Rotated, so no case always runs first (warm caches) or last.
      const steps = [
        async () => {
          const t = performance.now();
          found.small += (await engine.query(small, { text: query, limit: 5 })).length;
          samples.small.push(elapsedSince(t));
        },
        async () => {
          const t = performance.now();
          found.large += (await engine.query(large, { text: query, limit: 5 })).length;
          samples.large.push(elapsedSince(t));
        },
        () => {
          const t = performance.now();
          linearScan(largeChunks, query);
          samples.scan.push(elapsedSince(t));
        },
      ];
      for (let s = 0; s < steps.length; s++) await steps[(i + s) % steps.length]!();
    }
    if (found.large === 0 || found.small === 0) throw new Error('the bench queries found nothing: the corpus or the engine is broken');

    progress('knowledge: rebuilds');
    const rebuilds: number[] = [];
    for (let i = 0; i < REBUILDS; i++) {
      // A fresh engine is another process: its first query reads the whole partition.
      const other = createSearchEngine({ store: createSearchStore(local.db), embedder: null });
      const t = performance.now();
      await other.query(large, { text: asked[i]!, limit: 5 });
      rebuilds.push(elapsedSince(t));
    }

    const scan = measured(`linear scan, ${LARGE} chunks`, samples.scan, { note: 'substring counts of each query word in every chunk, top 5' });
    const searchSmall = measured(`search, ${SMALL} chunks`, samples.small, { note: 'two-word queries, limit 5; includes the version read' });
    const searchLarge = measured(`search, ${LARGE} chunks`, samples.large, { note: 'target: p50 under 50 ms, growing far slower than the corpus' });
    return [
      searchSmall,
      versus(versus(searchLarge, searchSmall), scan),
      scan,
      measured(`index ${LARGE} chunks (${megabytes.toFixed(1)} MB)`, [indexingMs], {
        note: `${(megabytes / (indexingMs / 1000)).toFixed(2)} MB/s, ${CHUNKS_PER_FILE} chunks a file, written to DynamoDB`,
      }),
      measured(`first query in another process, ${LARGE} chunks`, rebuilds, { note: 'reads the partition from DynamoDB and indexes it' }),
    ];
  },
};

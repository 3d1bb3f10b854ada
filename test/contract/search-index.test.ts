/**
 * The SearchIndex contract (search-index.contract.ts) against the search engine over the real
 * DynamoDB stand-in: lexical only, and hybrid with Titan embeddings from the real AWS SDK talking to
 * a loopback Bedrock stand-in. Then what only hybrid search does: find by meaning.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBedrockEmbedder } from '../../functions/search/bedrock-embedder.ts';
import { INDEX_SLICE_CHARS } from '../../functions/search/partition-index.ts';
import { createSearchEngine, MAX_DOCUMENT_CHARS } from '../../functions/search/search-engine.ts';
import type { SearchIndex } from '../../functions/search/search-index.ts';
import { createSearchStore } from '../../functions/search/search.store.ts';
import { startBedrockStandIn, type BedrockStandIn } from '../support/bedrock-stand-in.ts';
import { startLocalDb, type LocalDb } from '../support/local-db.ts';
import { describeSearchIndexContract } from './search-index.contract.ts';

const SYNONYMS = { automobile: 'car', vehicle: 'car' };
const MODEL = 'amazon.titan-embed-text-v2:0';

/** The SDK signs requests; the stand-in only checks that they are signed. */
function withTestCredentials(): void {
  process.env['AWS_ACCESS_KEY_ID'] ??= 'test-access-key';
  process.env['AWS_SECRET_ACCESS_KEY'] ??= 'test-secret-key';
}

describeSearchIndexContract('engine over DynamoDB, lexical', {
  async start() {
    const local = await startLocalDb();
    const engine = () => createSearchEngine({ store: createSearchStore(local.db), embedder: null });
    return { index: engine(), other: engine(), close: () => local.stop() };
  },
});

describeSearchIndexContract('engine over DynamoDB, hybrid (Titan V2 through a Bedrock stand-in)', {
  async start() {
    withTestCredentials();
    const [local, bedrock] = await Promise.all([startLocalDb(), startBedrockStandIn(SYNONYMS)]);
    const engine = () =>
      createSearchEngine({
        store: createSearchStore(local.db),
        embedder: createBedrockEmbedder({ modelId: MODEL, dimensions: 1024, region: 'us-east-1', endpoint: bedrock.endpoint }),
      });
    return {
      index: engine(),
      other: engine(),
      close: async () => {
        await Promise.all([local.stop(), bedrock.close()]);
      },
    };
  },
});

describe('search engine', () => {
  let local: LocalDb;
  let bedrock: BedrockStandIn;
  let lexical: SearchIndex;
  let hybrid: SearchIndex;

  beforeAll(async () => {
    withTestCredentials();
    [local, bedrock] = await Promise.all([startLocalDb(), startBedrockStandIn(SYNONYMS)]);
    lexical = createSearchEngine({ store: createSearchStore(local.db), embedder: null });
    hybrid = createSearchEngine({
      store: createSearchStore(local.db),
      embedder: createBedrockEmbedder({ modelId: MODEL, dimensions: 512, region: 'us-east-1', endpoint: bedrock.endpoint }),
    });
  });
  afterAll(async () => {
    await Promise.all([local.stop(), bedrock.close()]);
  });

  it('finds by meaning in hybrid mode what lexical search cannot find', async () => {
    // Prepare
    const partition = { index: 'meaning', owner: 'u1' };
    const group = { group: 'garage.txt', fields: {}, documents: [{ id: '0', text: 'The red car is parked in the garage' }] };
    await hybrid.putGroup(partition, group);

    // Act
    const byMeaning = await hybrid.query(partition, { text: 'automobile', limit: 5 });
    const byWord = await lexical.query(partition, { text: 'automobile', limit: 5 });

    // Assess
    expect(hybrid.mode).toBe('hybrid');
    expect(lexical.mode).toBe('lexical');
    expect(byMeaning.map((h) => h.group)).toEqual(['garage.txt']);
    expect(byWord).toEqual([]);
  });

  it('asks Titan for vectors of the configured size, one text per call, documents and query alike', async () => {
    const before = bedrock.requests.length;
    await hybrid.putGroup(
      { index: 'calls', owner: 'u1' },
      {
        group: 'g',
        fields: {},
        documents: [
          { id: '0', text: 'alpha' },
          { id: '1', text: 'beta' },
        ],
      },
    );
    await hybrid.query({ index: 'calls', owner: 'u1' }, { text: 'gamma', limit: 1 });
    expect(
      bedrock.requests
        .slice(before)
        .map((r) => [r.modelId, r.inputText, r.dimensions])
        .sort(),
    ).toEqual([
      [MODEL, 'alpha', 512],
      [MODEL, 'beta', 512],
      [MODEL, 'gamma', 512],
    ]);
  });

  it('ranks lexical hits by BM25: more occurrences in a shorter text first', async () => {
    const partition = { index: 'bm25', owner: 'u1' };
    await lexical.putGroup(partition, {
      group: 'long.txt',
      fields: {},
      documents: [{ id: '0', text: 'Quarterly sales forecast for the northern region and the southern one' }],
    });
    await lexical.putGroup(partition, { group: 'short.txt', fields: {}, documents: [{ id: '0', text: 'Forecast forecast forecast: rain' }] });
    const hits = await lexical.query(partition, { text: 'forecasts', limit: 5 });
    expect(hits.map((h) => h.group)).toEqual(['short.txt', 'long.txt']);
    expect(hits[0]!.score).toBeGreaterThan(hits[1]!.score);
  });

  it('refuses a document longer than a chunk, writing nothing', async () => {
    const partition = { index: 'long', owner: 'u1' };
    const put = lexical.putGroup(partition, { group: 'big', fields: {}, documents: [{ id: '0', text: 'word '.repeat(MAX_DOCUMENT_CHARS / 5 + 1) }] });
    await expect(put).rejects.toThrow(/at most 32768 characters/);
    expect(await lexical.query(partition, { text: 'word', limit: 1 })).toEqual([]);
  });

  it('keeps a cached partition current through writes of groups larger than one indexing slice', async () => {
    // Prepare: the partition cached by a query, and a group of more text than one slice
    const partition = { index: 'slices', owner: 'u1' };
    await lexical.putGroup(partition, { group: 'small.txt', fields: {}, documents: [{ id: '0', text: 'a walrus on the ice' }] });
    expect((await lexical.query(partition, { text: 'walrus', limit: 5 })).map((h) => h.group)).toEqual(['small.txt']);
    const big = (word: string) => ({
      group: 'big.txt',
      fields: {},
      documents: Array.from({ length: Math.ceil(INDEX_SLICE_CHARS / 30_000) + 1 }, (_, i) => ({ id: String(i), text: `${word} `.repeat(30_000 / 8) })),
    });

    // Act
    await lexical.putGroup(partition, big('narwhal'));
    const afterPut = await lexical.query(partition, { text: 'narwhal walrus', limit: 20 });
    await lexical.putGroup(partition, big('penguin'));
    const afterReplace = await lexical.query(partition, { text: 'narwhal', limit: 20 });

    // Assess
    expect(new Set(afterPut.map((h) => h.group))).toEqual(new Set(['small.txt', 'big.txt']));
    expect(afterReplace).toEqual([]);
    expect((await lexical.query(partition, { text: 'penguin', limit: 1 })).map((h) => h.group)).toEqual(['big.txt']);
  });
});

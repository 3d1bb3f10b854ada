/**
 * The SearchIndex port's contract (functions/search/search-index.ts), one suite every adapter must
 * pass: stemmed lexical matches ranked best first, groups replaced and removed as a whole, prefix
 * removal that respects path boundaries, filters, partitions that never leak into each other, and
 * writes seen by another process over the same storage. search-index.test.ts runs it per adapter.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SearchIndex, SearchPartition } from '../../functions/search/search-index.ts';

export interface SearchIndexContractSetup {
  start(): Promise<{
    readonly index: SearchIndex;
    /** The same storage as another process sees it (its own memory, no shared cache). */
    readonly other: SearchIndex;
    close(): Promise<void>;
  }>;
}

let counter = 0;
/** A fresh partition per test, so tests do not see each other's documents. */
const fresh = (): SearchPartition => ({ index: 'contract', owner: `owner-${Date.now()}-${counter++}` });

const file = (group: string, texts: readonly string[], fields: Record<string, string> = {}) => ({
  group,
  fields: { fileName: group.split('/').pop()!, ...fields },
  documents: texts.map((text, i) => ({ id: String(i), text })),
});

export function describeSearchIndexContract(adapterName: string, setup: SearchIndexContractSetup): void {
  describe(`SearchIndex contract: ${adapterName}`, () => {
    let index: SearchIndex;
    let other: SearchIndex;
    let close: () => Promise<void>;

    beforeAll(async () => {
      ({ index, other, close } = await setup.start());
    });
    afterAll(async () => {
      await close();
    });

    it('finds documents by stemmed terms, with their group, text and fields, in descending score', async () => {
      // Prepare
      const p = fresh();
      await index.putGroup(p, file('reports/q3.md', ['Quarterly sales forecast for the northern region', 'Office plants need water'], { fileType: 'md' }));
      await index.putGroup(p, file('notes/forecasts.txt', ['Forecast forecast forecast: rain, then sun'], { fileType: 'txt' }));

      // Act
      const hits = await index.query(p, { text: 'forecasting', limit: 5 });

      // Assess: both forecasts, nothing else; the order of equal-looking hits is the adapter's (vectors may weigh in)
      expect(hits.map((h) => `${h.group} ${h.id}`).sort()).toEqual(['notes/forecasts.txt 0', 'reports/q3.md 0']);
      expect(hits[0]!.score).toBeGreaterThanOrEqual(hits[1]!.score);
      expect(hits.find((h) => h.group === 'reports/q3.md')).toMatchObject({
        id: '0',
        text: 'Quarterly sales forecast for the northern region',
        fields: { fileName: 'q3.md', fileType: 'md' },
      });
    });

    it('answers at most `limit` hits, and none for an empty or unknown query', async () => {
      const p = fresh();
      await index.putGroup(
        p,
        file(
          'many.txt',
          Array.from({ length: 8 }, (_, i) => `invoice number ${i}`),
        ),
      );
      expect(await index.query(p, { text: 'invoice', limit: 3 })).toHaveLength(3);
      expect(await index.query(p, { text: '   ', limit: 3 })).toEqual([]);
      expect(await index.query(p, { text: 'zebra', limit: 3 })).toEqual([]);
    });

    it('replaces every document of a group when it is put again', async () => {
      const p = fresh();
      await index.putGroup(p, file('a.txt', ['apples and pears', 'more apples', 'apples again']));
      await index.putGroup(p, file('a.txt', ['bananas only']));
      expect(await index.query(p, { text: 'apples', limit: 10 })).toEqual([]);
      expect((await index.query(p, { text: 'bananas', limit: 10 })).map((h) => h.id)).toEqual(['0']);
    });

    it('removes one group, leaving the others', async () => {
      const p = fresh();
      await index.putGroup(p, file('x/keep.txt', ['glacier melt data']));
      await index.putGroup(p, file('x/drop.txt', ['glacier photos']));
      await index.deleteGroup(p, 'x/drop.txt');
      expect((await index.query(p, { text: 'glacier', limit: 10 })).map((h) => h.group)).toEqual(['x/keep.txt']);
    });

    it('removes the groups under a prefix and counts them, never those that only share its first characters', async () => {
      const p = fresh();
      await index.putGroup(p, file('docs/a.txt', ['lighthouse keeper', 'lighthouse lamp']));
      await index.putGroup(p, file('docs/sub/b.txt', ['lighthouse history']));
      await index.putGroup(p, file('docs-old/c.txt', ['lighthouse archive']));
      expect(await index.deleteGroupsWithPrefix(p, 'docs/')).toBe(2);
      expect((await index.query(p, { text: 'lighthouse', limit: 10 })).map((h) => h.group)).toEqual(['docs-old/c.txt']);
      expect(await index.deleteGroupsWithPrefix(p, 'nothing/')).toBe(0);
    });

    it('filters by field values and by group prefix', async () => {
      const p = fresh();
      await index.putGroup(p, file('team/plan.md', ['budget plan'], { fileType: 'md' }));
      await index.putGroup(p, file('team/budget.pdf', ['budget figures'], { fileType: 'pdf' }));
      await index.putGroup(p, file('home/budget.md', ['household budget'], { fileType: 'md' }));
      const groups = async (query: Parameters<SearchIndex['query']>[1]) => (await index.query(p, query)).map((h) => h.group).sort();
      expect(await groups({ text: 'budget', limit: 10, equals: { fileType: 'md' } })).toEqual(['home/budget.md', 'team/plan.md']);
      expect(await groups({ text: 'budget', limit: 10, groupPrefix: 'team/' })).toEqual(['team/budget.pdf', 'team/plan.md']);
      expect(await groups({ text: 'budget', limit: 10, groupPrefix: 'team/', equals: { fileType: 'pdf' } })).toEqual(['team/budget.pdf']);
    });

    it('never answers from another partition', async () => {
      const alice = fresh();
      const bob = fresh();
      await index.putGroup(alice, file('secret.txt', ['alice private diary entry']));
      expect(await index.query(bob, { text: 'diary', limit: 10 })).toEqual([]);
      expect(await index.deleteGroupsWithPrefix(bob, '')).toBe(0);
      expect(await index.query(alice, { text: 'diary', limit: 10 })).toHaveLength(1);
    });

    it('keeps group keys with spaces, percent signs, hashes and non-Latin letters apart', async () => {
      const p = fresh();
      const odd = ['my notes/a b.txt', 'my notes/a%20b.txt', 'my notes/#1.txt', 'заметки/файл.txt'];
      for (const group of odd) await index.putGroup(p, file(group, [`walrus ${group}`]));
      await index.deleteGroup(p, 'my notes/a b.txt');
      expect((await index.query(p, { text: 'walrus', limit: 10 })).map((h) => h.group).sort()).toEqual(odd.slice(1).sort());
      expect(await index.deleteGroupsWithPrefix(p, 'заметки/')).toBe(1);
    });

    it('shows every write to another process over the same storage, deletions included', async () => {
      const p = fresh();
      await index.putGroup(p, file('shared.txt', ['orchid care guide']));
      expect(await other.query(p, { text: 'orchid', limit: 5 })).toHaveLength(1);
      await index.putGroup(p, file('shared.txt', ['cactus care guide']));
      expect(await other.query(p, { text: 'orchid', limit: 5 })).toEqual([]);
      await other.deleteGroup(p, 'shared.txt');
      expect(await index.query(p, { text: 'cactus', limit: 5 })).toEqual([]);
    });

    it('keeps every group when many are put at once', async () => {
      const p = fresh();
      await Promise.all(Array.from({ length: 12 }, (_, i) => index.putGroup(p, file(`batch/${i}.txt`, [`parallel upload ${i}`]))));
      expect(await index.query(p, { text: 'parallel', limit: 20 })).toHaveLength(12);
      expect(await other.query(p, { text: 'parallel', limit: 20 })).toHaveLength(12);
    });
  });
}

/**
 * The in-memory index of one search partition (functions/search/partition-index.ts): terms common
 * to most of a large partition leave the picking of hits to the query's rarer terms, without
 * changing which documents a query can find.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { chunkText } from '../../functions/search/chunk-text.ts';
import { INDEX_SLICE_CHARS, loadTextLibraries, MAX_TERM_CHARS, PartitionIndex } from '../../functions/search/partition-index.ts';

const doc = (i: number, text: string) => ({ group: `g${i}`, id: '0', text, fields: {} });

/** 1,200 documents that all say "platform"; a few also say "walrus". */
function largePartition(walruses: number): Promise<PartitionIndex> {
  return PartitionIndex.build(Array.from({ length: 1200 }, (_, i) => doc(i, i < walruses ? `platform walrus note ${i}` : `platform note ${i}`)));
}

describe('PartitionIndex', async () => {
  it('picks hits by the rare term of a query whose other term is in nearly every document', async () => {
    const index = await largePartition(8);
    const hits = index.query({ text: 'platform walrus', limit: 5 }, null);
    expect(hits).toHaveLength(5);
    expect(hits.every((h) => h.text.includes('walrus'))).toBe(true);
  });

  it('still fills the page from the common term when the rare one finds fewer than asked for', async () => {
    const index = await largePartition(2);
    const hits = index.query({ text: 'platform walrus', limit: 5 }, null);
    expect(hits).toHaveLength(5);
    expect(hits.slice(0, 2).every((h) => h.text.includes('walrus'))).toBe(true);
  });

  it('searches a query made only of common terms as it is', async () => {
    expect((await largePartition(0)).query({ text: 'platform note', limit: 3 }, null)).toHaveLength(3);
  });

  it('forgets the terms of removed documents: a term gone from most documents counts again', async () => {
    // Prepare: "platform" in all 1,200, so it is common and adds nothing to a walrus's score
    const index = await largePartition(8);
    const score = (text: string) => index.query({ text, limit: 1 }, null)[0]!.score;
    expect(score('platform walrus')).toBe(score('walrus'));

    // Act: 1,000 of the platform documents replaced by documents without it
    for (let i = 100; i < 1100; i++) index.putGroup(`g${i}`, [doc(i, `note ${i}`)]);

    // Assess: in 200 of 1,200 it is no longer common, and it adds to the score
    expect(index.size).toBe(1200);
    expect(score('platform walrus')).toBeGreaterThan(score('walrus'));
  });

  it('gives the event loop back while it builds a partition larger than one slice', async () => {
    // Prepare: the libraries loaded, so only indexing stands between the build and its answer
    await loadTextLibraries();
    const text = 'platform walrus note '.repeat(60);
    const documents = Array.from({ length: Math.ceil((3 * INDEX_SLICE_CHARS) / text.length) }, (_, i) => doc(i, text));
    let turns = 0;
    const count = () => {
      turns++;
      if (turns < 100) setImmediate(count);
    };
    setImmediate(count);

    // Act
    const index = await PartitionIndex.build(documents);

    // Assess: the loop ran other callbacks between slices
    expect(index.size).toBe(documents.length);
    expect(turns).toBeGreaterThanOrEqual(2);
  });

  it('indexes no run of more than MAX_TERM_CHARS characters: base64 adds only its short runs', async () => {
    // Prepare: base64 of (reproducible) random bytes, split by the tokenizer at "/" into runs of every length
    const bytes = Array.from({ length: 1536 }, (_, i) => createHash('sha256').update(String(i)).digest());
    const blob = Buffer.concat(bytes).toString('base64');
    const runs = blob.split('/');
    const long = runs.find((run) => run.length > MAX_TERM_CHARS)!;
    const short = runs.find((run) => run.length >= 20 && run.length <= MAX_TERM_CHARS)!;

    // Act
    const index = await PartitionIndex.build(chunkText(blob).map((text, i) => ({ group: 'blob', id: String(i), text, fields: {} })));

    // Assess
    // (a third of the runs are longer; chunk boundaries cut a few runs into two)
    expect(index.termCount).toBeLessThan(runs.length * 0.75);
    expect(index.query({ text: long, limit: 5 }, null)).toEqual([]);
    expect(index.query({ text: short, limit: 5 }, null)[0]?.text).toContain(short);
  });

  it('still finds long words of ordinary text', async () => {
    const index = await PartitionIndex.build([doc(1, 'a supercalifragilisticexpialidocious walrus'), doc(2, 'a plain note')]);
    expect(index.query({ text: 'supercalifragilisticexpialidocious', limit: 5 }, null).map((h) => h.group)).toEqual(['g1']);
  });
});

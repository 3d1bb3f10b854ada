import { readFileSync } from 'node:fs';
import { loadTextLibraries } from '../../functions/search/partition-index.ts';

/** Words of this project's own prose, so bench corpora have an English vocabulary and stems. */
const VOCABULARY = [
  ...new Set(
    ['README.md', 'docs/ARCHITECTURE.md', 'docs/SPEC.md']
      .map((path) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8'))
      .join(' ')
      .toLowerCase()
      .match(/[a-z]{3,}/g)!,
  ),
];

/** A deterministic generator, so every run indexes the same text and asks the same queries. */
export function random(seed: number): () => number {
  let state = seed;
  return () => (state = (state * 16807) % 2147483647) / 2147483647;
}

/** Zipf-like word ranks: a few words are everywhere, most are rare, as in real text. */
export function zipfWord(next: () => number): string {
  const rank = Math.floor(Math.exp(next() * Math.log(VOCABULARY.length)) - 1);
  return VOCABULARY[Math.min(rank, VOCABULARY.length - 1)]!;
}

/** Two-word queries of words the engine does not drop as stop words, drawn like the corpus. */
export async function zipfQueries(count: number): Promise<string[]> {
  const { processTerm } = await loadTextLibraries();
  const next = random(7);
  const word = () => {
    for (;;) {
      const candidate = zipfWord(next);
      if (processTerm(candidate) !== null) return candidate;
    }
  };
  return Array.from({ length: count }, () => `${word()} ${word()}`);
}

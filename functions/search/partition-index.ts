import MiniSearch from 'minisearch';
import { stemmer } from 'stemmer';
import type { SearchHit, SearchQuery } from './search-index.ts';
import type { StoredDocument } from './search.store.ts';

/**
 * English words too common to tell documents apart: left out of the index and of queries, so a
 * query's cost follows its meaningful terms (BM25 would give them almost no weight anyway).
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all am an and any are as at be because been before being below between both but by can could did do ' +
    'does doing down during each few for from further had has have having he her here hers herself him himself his how i if in into is it ' +
    'its itself just me more most my myself no nor not now of off on once only or other our ours ourselves out over own same she should so ' +
    'some such than that the their theirs them themselves then there these they this those through to too under until up very was we were ' +
    'what when where which while who whom why will with would you your yours yourself yourselves'
  ).split(' '),
);

/** Lower case, stop words out, Porter stems: `Forecasting` and `forecasts` both index as `forecast`. */
export function processTerm(term: string): string | null {
  const lower = term.toLowerCase();
  return STOP_WORDS.has(lower) ? null : stemmer(lower);
}

/** How much of a hybrid score comes from the lexical rank; the rest is vector similarity. */
const LEXICAL_WEIGHT = 0.5;

interface Entry extends StoredDocument {
  readonly key: string;
}

/**
 * One partition's documents in memory: a MiniSearch (BM25+) index of their text, and their vectors
 * when an embedder indexed them. Built from the stored documents and kept current by the engine.
 */
export class PartitionIndex {
  private readonly lexical = new MiniSearch<Entry>({ idField: 'key', fields: ['text'], storeFields: [], processTerm });
  private readonly entries = new Map<string, Entry>();
  private readonly byGroup = new Map<string, Set<string>>();

  constructor(documents: readonly StoredDocument[] = []) {
    for (const document of documents) this.add(document);
  }

  get size(): number {
    return this.entries.size;
  }

  /** Replaces the group's documents with these. */
  putGroup(group: string, documents: readonly StoredDocument[]): void {
    this.removeGroup(group);
    for (const document of documents) this.add(document);
  }

  removeGroup(group: string): void {
    const keys = this.byGroup.get(group);
    if (keys === undefined) return;
    for (const key of keys) {
      this.lexical.discard(key);
      this.entries.delete(key);
    }
    this.byGroup.delete(group);
  }

  removeGroups(groups: readonly string[]): void {
    for (const group of groups) this.removeGroup(group);
  }

  /**
   * The best `query.limit` documents passing the filters: by BM25 alone, or, with a query vector,
   * by a weighted sum of the BM25 score (relative to the best one) and cosine similarity, over the
   * union of both candidate sets.
   */
  query(query: SearchQuery, vector: Float32Array | null): SearchHit[] {
    const passes = (entry: Entry) =>
      (query.groupPrefix === undefined || entry.group.startsWith(query.groupPrefix)) &&
      Object.entries(query.equals ?? {}).every(([name, value]) => entry.fields[name] === value);
    const scores = new Map<string, number>();
    const lexical = this.lexical.search(query.text, { filter: (result) => passes(this.entries.get(result.id as string)!) });
    const best = lexical[0]?.score ?? 0;
    const lexicalWeight = vector === null ? 1 : LEXICAL_WEIGHT;
    for (const result of lexical) scores.set(result.id as string, vector === null ? result.score : (lexicalWeight * result.score) / best);
    if (vector !== null) {
      for (const entry of this.entries.values()) {
        if (entry.vector === undefined || !passes(entry)) continue;
        const similarity = cosine(vector, entry.vector);
        if (similarity <= 0) continue;
        scores.set(entry.key, (scores.get(entry.key) ?? 0) + (1 - LEXICAL_WEIGHT) * similarity);
      }
    }
    return [...scores]
      .sort((a, b) => b[1] - a[1])
      .slice(0, query.limit)
      .map(([key, score]) => {
        const { group, id, text, fields } = this.entries.get(key)!;
        return { group, id, text, fields, score };
      });
  }

  private add(document: StoredDocument): void {
    const key = `${document.group}\u0000${document.id}`;
    const entry: Entry = { ...document, key };
    this.entries.set(key, entry);
    let keys = this.byGroup.get(document.group);
    if (keys === undefined) this.byGroup.set(document.group, (keys = new Set()));
    keys.add(key);
    this.lexical.add(entry);
  }
}

function cosine(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return 0;
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}

import type MiniSearchClass from 'minisearch';
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

/**
 * The index library (MiniSearch) and the stemmer, loaded on the first index a process builds, by a
 * specifier the bundler does not follow: functions that only write to search (agents, MCP, skills
 * index their public resources) never load them and do not carry them (200 KB bundle budget); the
 * areas that query ship them beside their bundles (`SEARCH_LIBRARY_FILES`), as skills ships js-yaml.
 */
const loadModule = (specifier: string) => import(specifier) as Promise<unknown>;

/** The runtime files of the libraries, for the modules of areas whose functions query (`runtimeFiles`). */
export const SEARCH_LIBRARY_FILES = [
  ...['package.json', 'LICENSE.txt', 'dist/es/index.js'].map((file) => `node_modules/minisearch/${file}`),
  ...['package.json', 'license', 'index.js'].map((file) => `node_modules/stemmer/${file}`),
];

interface TextLibraries {
  readonly MiniSearch: typeof MiniSearchClass;
  readonly processTerm: (term: string) => string | null;
  readonly tokenize: (text: string) => string[];
}

let libraries: Promise<TextLibraries> | undefined;

/** MiniSearch, and the one term processing of index and queries: lower case, stop words out, Porter stems. */
export function loadTextLibraries(): Promise<TextLibraries> {
  libraries ??= Promise.all([loadModule('minisearch'), loadModule('stemmer')]).then(([minisearch, stemmerModule]) => {
    const MiniSearch = (minisearch as { default: typeof MiniSearchClass }).default;
    const { stemmer } = stemmerModule as { stemmer: (word: string) => string };
    // Stems of recent terms: a text repeats its words, and stemming was most of the indexing time.
    const stems = new Map<string, string | null>();
    const processTerm = (term: string): string | null => {
      if (term.length > MAX_TERM_CHARS) return null;
      const known = stems.get(term);
      if (known !== undefined) return known;
      const lower = term.toLowerCase();
      const stem = STOP_WORDS.has(lower) ? null : stemmer(lower);
      if (stems.size >= MAX_REMEMBERED_STEMS) stems.clear();
      stems.set(term, stem);
      return stem;
    };
    return { MiniSearch, processTerm, tokenize: MiniSearch.getDefault('tokenize') as (text: string) => string[] };
  });
  return libraries;
}

const MAX_REMEMBERED_STEMS = 50_000;

/**
 * The longest term indexed or searched. No word is longer (a SHA-256 in hex is 64); longer runs
 * without a blank or punctuation are encoded data, such as base64, where every run is a distinct
 * term that no one searches for and that costs the index its length in radix-tree nodes.
 */
export const MAX_TERM_CHARS = 64;

/** How much of a hybrid score comes from the lexical rank; the rest is vector similarity. */
const LEXICAL_WEIGHT = 0.5;

/**
 * Common terms (Lucene's CommonTermsQuery): a query term found in more than this share of a large
 * partition's documents adds almost nothing to BM25 (its IDF is near zero) yet costs a score for
 * every one of them, so when the query also has rarer terms, those alone pick the hits, unless they
 * find fewer than asked for.
 */
const COMMON_TERM_SHARE = 0.2;
const COMMON_TERMS_MIN_DOCUMENTS = 1000;

/** Text indexed between two returns to the event loop while a partition is built (tens of milliseconds of work). */
export const INDEX_SLICE_CHARS = 128 * 1024;

interface Entry extends StoredDocument {
  readonly key: string;
  /** Its distinct terms, to keep the document frequencies when it is removed. */
  readonly terms: readonly string[];
}

/**
 * One partition's documents in memory: a MiniSearch (BM25+) index of their text, and their vectors
 * when an embedder indexed them. Built from the stored documents and kept current by the engine.
 */
export class PartitionIndex {
  /** Set while a document is added: MiniSearch hands every term it indexes to processTerm. */
  private adding: Set<string> | null = null;
  private readonly lexical: MiniSearchClass<Entry>;
  private readonly processTerm: TextLibraries['processTerm'];
  private readonly tokenize: TextLibraries['tokenize'];
  private readonly entries = new Map<string, Entry>();
  private readonly byGroup = new Map<string, Set<string>>();
  /** In how many documents each term is. */
  private readonly frequencies = new Map<string, number>();

  /**
   * An index of `documents`, once the libraries are loaded. A partition can hold megabytes of text
   * (seconds of indexing), and a query that finds it uncached builds it on the request loop: the
   * build gives the loop back after every `INDEX_SLICE_CHARS` of text, so other requests wait for
   * one slice, not for the whole partition.
   */
  static async build(documents: readonly StoredDocument[] = []): Promise<PartitionIndex> {
    const index = new PartitionIndex(await loadTextLibraries());
    let slice = 0;
    for (const document of documents) {
      index.add(document);
      slice += document.text.length;
      if (slice >= INDEX_SLICE_CHARS) {
        slice = 0;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    return index;
  }

  private constructor(libraries: TextLibraries) {
    this.processTerm = libraries.processTerm;
    this.tokenize = libraries.tokenize;
    this.lexical = new libraries.MiniSearch<Entry>({
      idField: 'key',
      fields: ['text'],
      storeFields: [],
      processTerm: (term) => {
        const processed = this.processTerm(term);
        if (processed !== null) this.adding?.add(processed);
        return processed;
      },
    });
  }

  get size(): number {
    return this.entries.size;
  }

  /** How many distinct terms the index holds. */
  get termCount(): number {
    return this.frequencies.size;
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
      for (const term of this.entries.get(key)?.terms ?? []) {
        const left = (this.frequencies.get(term) ?? 1) - 1;
        if (left === 0) this.frequencies.delete(term);
        else this.frequencies.set(term, left);
      }
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
    const equals = Object.entries(query.equals ?? {});
    const filtered = query.groupPrefix !== undefined || equals.length > 0;
    const passes = (entry: Entry) =>
      (query.groupPrefix === undefined || entry.group.startsWith(query.groupPrefix)) && equals.every(([name, value]) => entry.fields[name] === value);
    // MiniSearch answers best first; without filters it needs no callback per match.
    const search = (text: string) => this.lexical.search(text, filtered ? { filter: (result) => passes(this.entries.get(result.id as string)!) } : {});
    const rare = this.withoutCommonTerms(query.text);
    const byRare = rare === null ? null : search(rare);
    const lexical = byRare !== null && byRare.length >= query.limit ? byRare : search(query.text);
    if (vector === null) return lexical.slice(0, query.limit).map((result) => this.hit(result.id as string, result.score));
    const scores = new Map<string, number>();
    const best = lexical[0]?.score ?? 0;
    for (const result of lexical) scores.set(result.id as string, (LEXICAL_WEIGHT * result.score) / best);
    for (const entry of this.entries.values()) {
      if (entry.vector === undefined || !passes(entry)) continue;
      const similarity = cosine(vector, entry.vector);
      if (similarity <= 0) continue;
      scores.set(entry.key, (scores.get(entry.key) ?? 0) + (1 - LEXICAL_WEIGHT) * similarity);
    }
    return [...scores]
      .sort((a, b) => b[1] - a[1])
      .slice(0, query.limit)
      .map(([key, score]) => this.hit(key, score));
  }

  /** The query's words that are not common terms, when it has both kinds in a large partition; else null. */
  private withoutCommonTerms(text: string): string | null {
    if (this.entries.size < COMMON_TERMS_MIN_DOCUMENTS) return null;
    const cutoff = this.entries.size * COMMON_TERM_SHARE;
    const words = this.tokenize(text).filter((word) => word !== '' && this.processTerm(word) !== null);
    const rare = words.filter((word) => (this.frequencies.get(this.processTerm(word)!) ?? 0) <= cutoff);
    return rare.length > 0 && rare.length < words.length ? rare.join(' ') : null;
  }

  private hit(key: string, score: number): SearchHit {
    const { group, id, text, fields } = this.entries.get(key)!;
    return { group, id, text, fields, score };
  }

  private add(document: StoredDocument): void {
    const key = `${document.group}\u0000${document.id}`;
    const terms = new Set<string>();
    const entry: Entry = { ...document, key, terms: [] };
    this.adding = terms;
    try {
      this.lexical.add(entry);
    } finally {
      this.adding = null;
    }
    const stored: Entry = { ...entry, terms: [...terms] };
    for (const term of terms) this.frequencies.set(term, (this.frequencies.get(term) ?? 0) + 1);
    this.entries.set(key, stored);
    let keys = this.byGroup.get(document.group);
    if (keys === undefined) this.byGroup.set(document.group, (keys = new Set()));
    keys.add(key);
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

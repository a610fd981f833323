/**
 * The embedded engine with a sentence encoder (SEARCH_ENCODER=use, the default): a short query (fewer than
 * `minWords` words, a person typing keywords) is ranked by the embedded engine alone, exactly as with
 * SEARCH_ENCODER=none, and never reaches the encoder. A longer query, or an agent's retrieval instruction
 * (instruction.ts), is ranked by a fusion of the lexical score (BM25F without the word vectors, which the encoder
 * supersedes, plus learning from use) and the cosine between the query's and each tool's sentence vector. A tool is a
 * hit when the query's words reach it or its cosine is at least `threshold`, so a query that shares no word with the
 * right tool can still find it ("a knee-length red dress for a wedding" → a product search tool). Score: lexical
 * score / best lexical score + weight × cosine + what usage adds. Weight, threshold and the length rule were chosen
 * on the MetaTool tuning split (docs/search.md).
 *
 * Query vectors are kept in an LRU keyed by the normalised query. Tool vectors are computed in the background after
 * replaceAll/upsert return (about 10–25 ms of the encoder's thread per tool) and kept in a `SentenceVectorStore`
 * (Postgres in the service), so a restart reads them instead of encoding again; until a tool has its vector it is
 * ranked by its words alone. Until the model is loaded (it loads in the encoder's thread, not blocking anything) long
 * queries are ranked by words alone too. `settled()` waits for the backlog.
 */
import { createHash } from 'node:crypto';
import type { SearchDocument, SearchEngine, SearchHit, SearchQuery, SearchResult } from './engine.js';
import { createEmbeddedSearch, rankDocuments } from './embedded.js';
import { categoryCode } from './inverted-index.js';
import { DEFAULT_RANKING, type RankingParams } from './ranker.js';
import type { SentenceEncoder } from './sentence-encoder.js';
import { withoutInstruction } from './instruction.js';
import { VectorRows } from './scan.js';
import { TopK } from './top-k.js';
import { coverageOf } from './match.js';
import type { UsageSource } from './usage.js';

export interface EncoderRanking {
  weight: number;
  threshold: number;
  /** Queries of at least this many words (or led by a retrieval instruction) are fused; shorter ones are lexical only. */
  minWords: number;
}

export const DEFAULT_ENCODER_RANKING: EncoderRanking = { weight: 5, threshold: 0.3, minWords: 4 };
/** Tools encoded per call of the thread: small, so that a query waits for at most one batch. */
const BATCH = 8;
/** Query vectors kept (512 floats, 2 KiB each: 2 MiB). */
export const QUERY_CACHE_SIZE = 1000;
/** Part of each kept vector's key: a vector of another model never matches. */
const MODEL_ID = 'universal-sentence-encoder-lite-512';
/**
 * The encoder reads at most this much of a query (the words still read all of it, up to 2,000 characters): its cost
 * grows with length (2,000 characters took 120 ms of the thread, or 400 ms for text that splits into one token per
 * letter; 500 characters 70–90 ms, a short query about 12 ms), and an agent writes its task before its instructions.
 */
export const ENCODED_QUERY_CHARS = 500;
/** And at most this much of a tool (name and description; a publisher's long description costs the thread too). */
export const ENCODED_DOC_CHARS = 1000;

/** Where tool vectors are kept between restarts (core/repos/sentence-vectors.ts), by the hash of the text encoded. */
export interface SentenceVectorStore {
  load(hashes: string[]): Promise<Map<string, Float32Array>>;
  save(rows: { hash: string; vector: Float32Array }[]): Promise<void>;
  /** Deletes the vectors of every other text (called with the whole index's texts at a full load). */
  keepOnly(hashes: string[]): Promise<void>;
}

/** Counters since the engine was created (exported as metrics, docs/observability.md). */
export interface EncoderStats {
  /** The model is loaded and the thread lives. */
  ready: boolean;
  failed: boolean;
  /** Queries the encoder encoded, and those whose vector came from the cache. */
  queriesEncoded: number;
  queryCacheHits: number;
  /** Long queries ranked by words alone because the model was not loaded yet (or had failed). */
  queriesWithoutEncoder: number;
  /** Tool vectors computed by the encoder, and read from the store. */
  documentsEncoded: number;
  documentsLoaded: number;
  /** Tools still without a vector. */
  documentsWaiting: number;
}

interface Entry {
  text: string;
  hash: string;
  /** null: not encoded yet; false: the encoder refused this text (the tool is ranked by its words). */
  vector: Float32Array | null | false;
  /** Looked for in the store already. */
  looked: boolean;
  category: number;
  broken: boolean;
  quality: number;
  /** Its row in the packed rows it was last packed into (see `Rows`). */
  row?: number;
  /** The tool's document: whether a word hit is in its own text (`coverageOf`, the rule of its badge) is read from it. */
  doc: SearchDocument;
}

export type EncodedSearchEngine = SearchEngine & {
  /** Resolves once every indexed tool has its sentence vector (or the encoder failed). */
  settled(): Promise<void>;
  /** Resolves once the model is loaded (or failed to). */
  whenReady(): Promise<void>;
  encoderStats(): EncoderStats;
};

/** What the encoder reads of a tool: its name as words ("getWeatherForecast" → "get weather forecast"), then the description. */
export const sentenceOf = (doc: SearchDocument) =>
  `${doc.name
    .replace(/[_-]+/g, ' ')
    .replace(/(?<=[a-z0-9])(?=[A-Z])/g, ' ')
    .toLowerCase()}: ${doc.description}`.slice(0, ENCODED_DOC_CHARS);

const hashOf = (text: string) => createHash('sha256').update(`${MODEL_ID}\n${text}`).digest('hex').slice(0, 40);

const wordCount = (text: string) => (text.match(/[\p{L}\p{N}]+/gu) ?? []).length;

/**
 * Whether a query is ranked with the encoder: an agent's retrieval instruction before the request, or a request of
 * `minWords` words or more. Returns the text the encoder reads (normalised: the cache's key), or undefined.
 */
export function encodedQueryText(q: string, minWords = DEFAULT_ENCODER_RANKING.minWords): string | undefined {
  const request = withoutInstruction(q);
  if (request === q && wordCount(request) < minWords) return undefined;
  return request.replace(/\s+/g, ' ').trim().slice(0, ENCODED_QUERY_CHARS);
}

/** Dimensions of the encoder's vectors. */
const DIMENSIONS = 512;

/**
 * Tools in rows for the scan: their ids, entries, each id's row, and the sentence vectors in one block of WebAssembly
 * memory (scan.ts; a row whose tool has no vector yet is zeros, so its cosine is 0).
 */
interface Rows {
  ids: string[];
  entries: Entry[];
  rowOf: Map<string, number>;
  vectors: VectorRows;
  /** Each row's category code, whether its tool is BROKEN, and its quality: the scan reads no entry object. */
  category: Int32Array;
  broken: Uint8Array;
  quality: Float64Array;
}

function packRows(ids: string[], entries: Entry[]): Rows {
  const rows: Rows = {
    ids,
    entries,
    rowOf: new Map(ids.map((id, row) => [id, row])),
    vectors: new VectorRows(entries.length, DIMENSIONS),
    category: Int32Array.from(entries, (e) => e.category),
    broken: Uint8Array.from(entries, (e) => (e.broken ? 1 : 0)),
    quality: Float64Array.from(entries, (e) => e.quality),
  };
  entries.forEach((e, row) => {
    e.row = row;
    placeVector(rows, e);
  });
  return rows;
}

/** Copies an entry's vector into its row (when it got one after the rows were packed, or at packing). */
function placeVector(rows: Rows, e: Entry): void {
  const row = e.row;
  if (row === undefined || rows.entries[row] !== e || !e.vector || e.vector.length !== DIMENSIONS) return;
  rows.vectors.set(row, e.vector);
}

interface Scored {
  id: string;
  score: number;
  quality: number;
}
/** The fused order: score, then quality, then id (a total order, so the first k are the same however found). */
const byRank = (a: Scored, b: Scored) => b.score - a.score || b.quality - a.quality || (a.id < b.id ? -1 : 1);

/** The lexical half of the fusion: the embedded ranking without the word vectors (the encoder supersedes them). */
export const FUSED_LEXICAL: RankingParams = { ...DEFAULT_RANKING, semanticWeight: 0 };

export function createEncodedSearch(
  encoder: SentenceEncoder,
  opts: { ranking?: EncoderRanking; usage?: UsageSource; store?: SentenceVectorStore } = {},
): EncodedSearchEngine {
  const ranking = opts.ranking ?? DEFAULT_ENCODER_RANKING;
  const store = opts.store;
  const lexical = createEmbeddedSearch(DEFAULT_RANKING, opts.usage);
  let entries = new Map<string, Entry>();
  /** `entries` as rows for the scan, made again after a tool is added or removed (an entry's vector is read at the scan). */
  let packed: Rows | undefined;
  const rowsOfIndex = (): Rows => {
    packed ??= packRows([...entries.keys()], [...entries.values()]);
    return packed;
  };
  /** An entry got its vector: into its row too, if the rows are packed already. */
  const gotVector = (e: Entry, vector: Float32Array | false) => {
    e.vector = vector;
    if (packed && vector) placeVector(packed, e);
  };
  let backlog: Promise<void> = Promise.resolve();
  /** Set once the encoder's thread is gone: from then on, words only. */
  let encoderError: string | undefined;
  let storeError: string | undefined;
  /** The last failure of a background pass (shown by status()); the next pass still runs. */
  let backlogError: string | undefined;
  const stats = { queriesEncoded: 0, queryCacheHits: 0, queriesWithoutEncoder: 0, documentsEncoded: 0, documentsLoaded: 0 };
  /** LRU of query vectors by normalised query (a Map keeps insertion order: a hit moves to the end). */
  const queryCache = new Map<string, Promise<Float32Array>>();
  /** After a refused call: was it the thread going away (then stop using it), or only this input? */
  const noteRefusal = () => {
    encoderError = encoder.failure();
  };

  const entryOf = (doc: SearchDocument, previous?: Entry): Entry => {
    const text = sentenceOf(doc);
    const same = previous?.text === text;
    return {
      text,
      hash: same ? previous.hash : hashOf(text),
      vector: same ? previous.vector : null,
      looked: same ? previous.looked : false,
      category: categoryCode(doc.category),
      broken: doc.healthStatus === 'BROKEN',
      quality: doc.qualityScore,
      doc,
    };
  };

  /** Vectors of tools not encoded yet, read from the store; a store that fails only means encoding them again. */
  const loadKept = async () => {
    const missing = [...entries.values()].filter((e) => e.vector === null && !e.looked);
    if (!store || missing.length === 0) return;
    for (const e of missing) e.looked = true;
    try {
      const found = await store.load([...new Set(missing.map((e) => e.hash))]);
      for (const e of missing) {
        const v = found.get(e.hash);
        if (v && e.vector === null) {
          gotVector(e, v);
          stats.documentsLoaded++;
        }
      }
    } catch (err) {
      storeError = err instanceof Error ? err.message : String(err);
    }
  };

  /**
   * Reads kept vectors, then encodes every entry still without one, a batch at a time, and keeps what it encoded; an
   * entry changed meanwhile is left for the next pass. A batch the encoder refuses (while its thread lives) is retried
   * one text at a time, so one tool's text cannot keep the others from being encoded.
   */
  const encodeMissing = (prune?: string[]) => {
    // Each pass catches its own failure, so that one pass that throws cannot keep every later one from running (a
    // rejected chain skips what is queued behind it): the next change of the index tries again.
    backlog = backlog
      .then(async () => {
        await loadKept();
        if (store && prune) await store.keepOnly(prune).catch(() => undefined);
        for (;;) {
          const batch = [...entries].filter(([, e]) => e.vector === null).slice(0, BATCH);
          if (batch.length === 0 || encoderError) return;
          const done: { hash: string; vector: Float32Array }[] = [];
          const put = (id: string, e: Entry, vector: Float32Array | false) => {
            const now = entries.get(id);
            if (now && now.text === e.text) gotVector(now, vector);
            if (vector) {
              stats.documentsEncoded++;
              done.push({ hash: e.hash, vector });
            }
          };
          try {
            const vectors = await encoder.embed(batch.map(([, e]) => e.text));
            batch.forEach(([id, e], i) => put(id, e, vectors[i]));
          } catch {
            noteRefusal();
            for (const [id, e] of encoderError ? [] : batch) {
              let one: Float32Array | false = false;
              try {
                [one] = await encoder.embed([e.text]);
              } catch {
                noteRefusal();
              }
              if (encoderError) break;
              put(id, e, one);
            }
          }
          if (store && done.length) {
            await store.save(done).catch((err: unknown) => {
              storeError = err instanceof Error ? err.message : String(err);
            });
          }
        }
      })
      .catch((err: unknown) => {
        backlogError = err instanceof Error ? err.message : String(err);
      });
  };

  const queryVector = (text: string): Promise<Float32Array> => {
    const cached = queryCache.get(text);
    if (cached) {
      stats.queryCacheHits++;
      queryCache.delete(text);
      queryCache.set(text, cached);
      return cached;
    }
    stats.queriesEncoded++;
    const encoded = encoder.embed([text], { urgent: true }).then(([v]) => v);
    queryCache.set(text, encoded);
    if (queryCache.size > QUERY_CACHE_SIZE) queryCache.delete(queryCache.keys().next().value!);
    encoded.catch(() => {
      if (queryCache.get(text) === encoded) queryCache.delete(text);
    });
    return encoded;
  };

  /** The query's vector, or undefined (counted) when the encoder cannot give it now: then the query is ranked by words. */
  const vectorFor = async (text: string): Promise<Float32Array | undefined> => {
    if (encoderError || !encoder.ready() || text === '') {
      stats.queriesWithoutEncoder++;
      return undefined;
    }
    try {
      return await queryVector(text);
    } catch {
      noteRefusal(); // this query is answered by words; the next one tries the encoder again unless its thread is gone
      stats.queriesWithoutEncoder++;
      return undefined;
    }
  };

  /**
   * The fusion, best first: each candidate's lexical score / the best one's (+ what usage added) + weight × the cosine
   * of its vector and the query's; a candidate no word found needs a cosine of at least the threshold. A candidate
   * the words reached only through its package's name or category (or a misspelling, or a word being typed), none of
   * the query's words or their synonyms being in its own name, description or parameters, gets no lexical share: it
   * is ranked by its meaning alone, like a tool no word reached. That is the rule of its badge (core/search/match.ts:
   * "related", none of your words), so a tool the page calls related never outranks one that has the words by the
   * words it does not have ("send a slack message": validateEmail, reached by its package message-tools, came
   * before signPayload and renderTemplate, which have "send" and "message"). It stays a hit: `total` is unchanged. Only the first
   * `keep` are kept (a heap whose root is the worst of them); the others are only counted in `total`. This is the scan
   * over every tool's vector, so it allocates nothing per row that cannot be kept: the lexical scores are put in an array
   * by row first, and a row whose score is below the worst kept is not offered.
   */
  const fuse = (query: string, words: SearchHit[], rows: Rows, q: Float32Array, keep: number, category = 0): { total: number; hits: Scored[] } => {
    const n = rows.entries.length;
    const ownWords = coverageOf(query);
    let top = 0;
    for (const h of words) top = Math.max(top, h.lexical ?? h.score);
    /** NaN: no word of the query reached that row. */
    const lexical = new Float64Array(n).fill(Number.NaN);
    for (const h of words) {
      const row = rows.rowOf.get(h.id);
      if (row === undefined) continue;
      const share = top > 0 && ownWords(rows.entries[row].doc) > 0 ? (h.lexical ?? h.score) / top : 0;
      lexical[row] = share + (h.usage ?? 0);
    }
    const best = new TopK<Scored>(keep, byRank);
    const { weight, threshold } = ranking;
    const cosines = rows.vectors.scan(q);
    let total = 0;
    for (let row = 0; row < n; row++) {
      if (rows.broken[row] || (category !== 0 && rows.category[row] !== category)) continue;
      const cos = cosines[row];
      const lex = lexical[row];
      const found = !Number.isNaN(lex);
      if (!found && cos < threshold) continue;
      total++;
      const score = (found ? lex : 0) + weight * cos;
      const worst = best.worstKept();
      if (worst && score < worst.score) continue;
      best.offer({ id: rows.ids[row], score, quality: rows.quality[row] });
    }
    return { total, hits: best.sorted() };
  };

  return {
    engine: 'embedded',
    async replaceAll(docs) {
      await lexical.replaceAll(docs);
      const next = new Map<string, Entry>();
      for (const doc of docs) next.set(doc.id, entryOf(doc, entries.get(doc.id)));
      entries = next;
      packed = undefined;
      encodeMissing([...new Set([...next.values()].map((e) => e.hash))]);
    },
    async upsert(docs) {
      await lexical.upsert(docs);
      for (const doc of docs) entries.set(doc.id, entryOf(doc, entries.get(doc.id)));
      packed = undefined;
      encodeMissing();
    },
    async remove(ids) {
      await lexical.remove(ids);
      for (const id of ids) entries.delete(id);
      packed = undefined;
    },
    async search(query: SearchQuery): Promise<SearchResult> {
      if (query.q.trim() === '') return { total: 0, hits: [] };
      const text = encodedQueryText(query.q, ranking.minWords);
      // A short query is the embedded engine's alone (with its word vectors), and never waits for the encoder.
      if (text === undefined) return lexical.search(query);
      const pending = vectorFor(text);
      // The words are ranked while the encoder's thread encodes the query (a few ms of a long query's time, not after it).
      const words = lexical.searchWith(FUSED_LEXICAL, { q: query.q, category: query.category, limit: Math.max(entries.size, 1) });
      const q = await pending;
      if (!q) return lexical.search(query);
      const offset = query.offset ?? 0;
      const { total, hits } = fuse(query.q, words.hits, rowsOfIndex(), q, offset + query.limit, categoryCode(query.category));
      return { total, hits: hits.slice(offset).map(({ id, score }) => ({ id, score })) };
    },
    async rankAmong(docs, q) {
      const text = encodedQueryText(q, ranking.minWords);
      const vector = text === undefined ? undefined : await vectorFor(text);
      if (!vector) return rankDocuments(docs, q, DEFAULT_RANKING, opts.usage);
      // A tool of the set is in the index (a collection's tools are registry tools): its kept vector, if its text is the same.
      const rows = packRows(
        docs.map((doc) => doc.id),
        docs.map((doc): Entry => {
          const kept = entries.get(doc.id);
          const text = sentenceOf(doc);
          const vector = kept && kept.text === text ? kept.vector : null;
          return { text, hash: '', vector, looked: true, category: 0, broken: doc.healthStatus === 'BROKEN', quality: doc.qualityScore, doc };
        }),
      );
      return fuse(q, rankDocuments(docs, q, FUSED_LEXICAL, opts.usage), rows, vector, docs.length).hits.map(({ id, score }) => ({ id, score }));
    },
    async status() {
      const lex = await lexical.status();
      const encoded = [...entries.values()].filter((e) => e.vector).length;
      const failed = encoderError ?? encoder.failure();
      const state = failed
        ? `failed (${failed}); every query ranked by words`
        : encoder.ready()
          ? `${encoded} of ${entries.size} tools encoded`
          : `loading; queries of ${ranking.minWords}+ words ranked by words until it is loaded`;
      const kept = storeError ? `; vector store: ${storeError}` : '';
      const pass = backlogError ? `; last encoding pass failed: ${backlogError}` : '';
      return { ...lex, detail: `${lex.detail}; sentence encoder: ${state}${kept}${pass}` };
    },
    async close() {
      await encoder.close();
    },
    settled: () => backlog,
    whenReady: () => encoder.whenReady(),
    encoderStats() {
      let waiting = 0;
      for (const e of entries.values()) if (e.vector === null) waiting++;
      return { ready: encoder.ready(), failed: (encoderError ?? encoder.failure()) !== undefined, ...stats, documentsWaiting: waiting };
    },
  };
}

/**
 * The embedded engine with a sentence encoder (SEARCH_ENCODER=use): the lexical ranking (BM25F, as in embedded.ts,
 * without the word vectors, which the encoder supersedes) fused with the cosine between the query's and each tool's
 * sentence vector. A tool is a hit when the query's words reach it or its cosine is at least `threshold`, so a
 * query that shares no word with the right tool can still find it ("a knee-length red dress for a wedding" → a
 * product search tool). Score: lexical score / best lexical score + weight × cosine. Weight and threshold were chosen
 * on the MetaTool tuning split (docs/search.md).
 *
 * Tools are encoded in the background, in batches, after replaceAll/upsert return (about 10–25 ms of the encoder's
 * thread per tool); until a tool is encoded it is ranked by its words alone. `settled()` waits for the backlog.
 */
import type { SearchDocument, SearchEngine, SearchQuery, SearchResult } from './engine.js';
import { createEmbeddedSearch } from './embedded.js';
import { categoryCode } from './inverted-index.js';
import { DEFAULT_RANKING } from './ranker.js';
import type { SentenceEncoder } from './sentence-encoder.js';
import { withoutInstruction } from './instruction.js';

export interface EncoderRanking {
  weight: number;
  threshold: number;
}

export const DEFAULT_ENCODER_RANKING: EncoderRanking = { weight: 5, threshold: 0.3 };
const BATCH = 32;
/**
 * The encoder reads at most this much of a query (the words still read all of it, up to 2,000 characters): its cost
 * grows with length (2,000 characters took 120 ms of the thread, or 400 ms for text that splits into one token per
 * letter; 500 characters 70–90 ms, a short query about 12 ms), and an agent writes its task before its instructions.
 */
export const ENCODED_QUERY_CHARS = 500;
/** And at most this much of a tool (name and description; a publisher's long description costs the thread too). */
export const ENCODED_DOC_CHARS = 1000;

interface Entry {
  text: string;
  /** null: not encoded yet; false: the encoder refused this text (the tool is ranked by its words). */
  vector: Float32Array | null | false;
  category: number;
  broken: boolean;
  quality: number;
}

export type EncodedSearchEngine = SearchEngine & {
  /** Resolves once every indexed tool has its sentence vector (or the encoder failed). */
  settled(): Promise<void>;
};

/** What the encoder reads of a tool: its name as words ("getWeatherForecast" → "get weather forecast"), then the description. */
const sentenceOf = (doc: SearchDocument) =>
  `${doc.name
    .replace(/[_-]+/g, ' ')
    .replace(/(?<=[a-z0-9])(?=[A-Z])/g, ' ')
    .toLowerCase()}: ${doc.description}`.slice(0, ENCODED_DOC_CHARS);

export function createEncodedSearch(encoder: SentenceEncoder, ranking: EncoderRanking = DEFAULT_ENCODER_RANKING): EncodedSearchEngine {
  const lexical = createEmbeddedSearch({ ...DEFAULT_RANKING, semanticWeight: 0 });
  let entries = new Map<string, Entry>();
  let backlog: Promise<void> = Promise.resolve();
  /** Set once the encoder's thread is gone: from then on, words only. */
  let encoderError: string | undefined;
  /** After a refused call: was it the thread going away (then stop using it), or only this input? */
  const noteRefusal = () => {
    encoderError = encoder.failure();
  };

  const entryOf = (doc: SearchDocument, previous?: Entry): Entry => {
    const text = sentenceOf(doc);
    return {
      text,
      vector: previous?.text === text ? previous.vector : null,
      category: categoryCode(doc.category),
      broken: doc.healthStatus === 'BROKEN',
      quality: doc.qualityScore,
    };
  };

  /**
   * Encodes every entry still without a vector, a batch at a time; an entry changed meanwhile is left for the next
   * pass. A batch the encoder refuses (while its thread lives) is retried one text at a time, so one tool's text
   * cannot keep the others from being encoded.
   */
  const encodeMissing = () => {
    backlog = backlog.then(async () => {
      for (;;) {
        const batch = [...entries].filter(([, e]) => e.vector === null).slice(0, BATCH);
        if (batch.length === 0 || encoderError) return;
        const store = (id: string, e: Entry, vector: Float32Array | false) => {
          const now = entries.get(id);
          if (now && now.text === e.text) now.vector = vector;
        };
        try {
          const vectors = await encoder.embed(batch.map(([, e]) => e.text));
          batch.forEach(([id, e], i) => store(id, e, vectors[i]));
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
            store(id, e, one);
          }
        }
      }
    });
  };

  return {
    engine: 'embedded',
    async replaceAll(docs) {
      await lexical.replaceAll(docs);
      const next = new Map<string, Entry>();
      for (const doc of docs) next.set(doc.id, entryOf(doc, entries.get(doc.id)));
      entries = next;
      encodeMissing();
    },
    async upsert(docs) {
      await lexical.upsert(docs);
      for (const doc of docs) entries.set(doc.id, entryOf(doc, entries.get(doc.id)));
      encodeMissing();
    },
    async remove(ids) {
      await lexical.remove(ids);
      for (const id of ids) entries.delete(id);
    },
    async search(query: SearchQuery): Promise<SearchResult> {
      if (query.q.trim() === '') return { total: 0, hits: [] };
      const words = await lexical.search({ q: query.q, category: query.category, limit: Math.max(entries.size, 1) });
      let q: Float32Array | undefined;
      if (!encoderError) {
        try {
          [q] = await encoder.embed([withoutInstruction(query.q).slice(0, ENCODED_QUERY_CHARS)]);
        } catch {
          noteRefusal(); // this query is answered by words; the next one tries the encoder again unless its thread is gone
        }
      }
      const offset = query.offset ?? 0;
      if (!q) return { total: words.total, hits: words.hits.slice(offset, offset + query.limit) };
      const best = words.hits[0]?.score || 1;
      const lexicalScore = new Map(words.hits.map((h) => [h.id, h.score / best]));
      const cat = categoryCode(query.category);
      const scored: { id: string; score: number; quality: number }[] = [];
      for (const [id, e] of entries) {
        if (e.broken || (cat !== 0 && e.category !== cat)) continue;
        let cos = 0;
        if (e.vector) for (let k = 0; k < q.length; k++) cos += q[k] * e.vector[k];
        const found = lexicalScore.get(id);
        if (found === undefined && cos < ranking.threshold) continue;
        scored.push({ id, score: (found ?? 0) + ranking.weight * cos, quality: e.quality });
      }
      scored.sort((a, b) => b.score - a.score || b.quality - a.quality || (a.id < b.id ? -1 : 1));
      return { total: scored.length, hits: scored.slice(offset, offset + query.limit).map(({ id, score }) => ({ id, score })) };
    },
    async status() {
      const lex = await lexical.status();
      const encoded = [...entries.values()].filter((e) => e.vector).length;
      const detail = `${lex.detail}; sentence encoder: ${encoderError ? `failed (${encoderError})` : `${encoded} of ${entries.size} tools encoded`}`;
      return { ...lex, detail };
    },
    async close() {
      await encoder.close();
    },
    settled: () => backlog,
  };
}

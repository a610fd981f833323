/**
 * The sentence encoder's tool vectors, kept in Postgres (search_sentence_vectors) by the hash of the text encoded, so
 * that an API process that starts reads them instead of encoding every tool again (core/search/encoded.ts).
 */
import type { Knex } from 'knex';
import type { SentenceVectorStore } from '../search/encoded.js';

const toBytes = (v: Float32Array) => Buffer.from(v.buffer, v.byteOffset, v.byteLength);
const fromBytes = (b: Buffer) => {
  const copy = new Float32Array(b.byteLength / 4);
  new Uint8Array(copy.buffer).set(b);
  return copy;
};

export function sentenceVectorStore(db: Knex): SentenceVectorStore {
  return {
    async load(hashes) {
      const found = new Map<string, Float32Array>();
      for (let i = 0; i < hashes.length; i += 1000) {
        const rows: { text_hash: string; vector: Buffer }[] = await db('search_sentence_vectors')
          .whereIn('text_hash', hashes.slice(i, i + 1000))
          .select('text_hash', 'vector');
        for (const r of rows) found.set(r.text_hash, fromBytes(r.vector));
      }
      return found;
    },
    async save(rows) {
      if (rows.length === 0) return;
      await db('search_sentence_vectors')
        .insert(rows.map((r) => ({ text_hash: r.hash, vector: toBytes(r.vector) })))
        .onConflict('text_hash')
        .ignore();
    },
    async keepOnly(hashes) {
      await db.raw('delete from search_sentence_vectors where not (text_hash = any(?::text[]))', [hashes]);
    },
  };
}

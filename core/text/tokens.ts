/**
 * Token weight: how many tokens a definition costs in a model's context, counted with OpenAI's `o200k_base` encoding
 * (gpt-4o, gpt-4.1, o-series; gpt-tokenizer) over the definition's compact JSON — what a client puts in the model's
 * context for one tool of `tools/list`. Other models' tokenizers differ by some percent; the figure is for comparison.
 * Counts are memoised by the exact text, since the same definitions are counted on every listing.
 *
 * The encoding's tables (2.4 MB of modules, about 0.35 s to load) are loaded at the first count, not when a process
 * starts: most processes (the worker, the CLI, an API that is never asked for a listing) never count.
 */
import { createRequire } from 'node:module';
import { LRUCache } from 'lru-cache';

let encoding: typeof import('gpt-tokenizer/encoding/o200k_base') | undefined;
const countO200k = (text: string): number => {
  encoding ??= createRequire(import.meta.url)('gpt-tokenizer/encoding/o200k_base') as typeof import('gpt-tokenizer/encoding/o200k_base');
  return encoding.countTokens(text);
};

export const TOKEN_ENCODING = 'o200k_base';

/**
 * The memo is bounded by the bytes of the texts it keeps (UTF-16: two per code unit, plus a little per entry), not by
 * their number: 50,000 whole definitions could be gigabytes. Least recently used texts go first; a text larger than
 * the bound is counted and not kept.
 */
export const TOKEN_MEMO_MAX_BYTES = 16 * 1024 * 1024;
const memo = new LRUCache<string, number>({ maxSize: TOKEN_MEMO_MAX_BYTES, sizeCalculation: (_n, text) => 2 * text.length + 64 });

export function countTokens(text: string): number {
  const known = memo.get(text);
  if (known !== undefined) return known;
  const n = countO200k(text);
  memo.set(text, n);
  return n;
}

/** Bytes the memo holds now (as sizeCalculation counts them). */
export function tokenMemoBytes(): number {
  return memo.calculatedSize;
}

/** Tokens of a JSON value as a client would send it (compact JSON). */
export function countJsonTokens(value: unknown): number {
  return countTokens(JSON.stringify(value));
}

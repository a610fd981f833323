/**
 * Token weight: how many tokens a definition costs in a model's context, counted with OpenAI's `o200k_base` encoding
 * (gpt-4o, gpt-4.1, o-series; gpt-tokenizer) over the definition's compact JSON — what a client puts in the model's
 * context for one tool of `tools/list`. Other models' tokenizers differ by some percent; the figure is for comparison.
 * Counts are memoised by the exact text, since the same definitions are counted on every listing.
 */
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';
import { LRUCache } from 'lru-cache';

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

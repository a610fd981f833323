/**
 * Token weight: how many tokens a definition costs in a model's context, counted with OpenAI's `o200k_base` encoding
 * (gpt-4o, gpt-4.1, o-series; gpt-tokenizer) over the definition's compact JSON — what a client puts in the model's
 * context for one tool of `tools/list`. Other models' tokenizers differ by some percent; the figure is for comparison.
 * Counts are memoised by the exact text, since the same definitions are counted on every listing.
 */
import { countTokens as countO200k } from 'gpt-tokenizer/encoding/o200k_base';

export const TOKEN_ENCODING = 'o200k_base';

const MAX_MEMO = 50_000;
const memo = new Map<string, number>();

export function countTokens(text: string): number {
  const known = memo.get(text);
  if (known !== undefined) return known;
  const n = countO200k(text);
  if (memo.size >= MAX_MEMO) memo.clear();
  memo.set(text, n);
  return n;
}

/** Tokens of a JSON value as a client would send it (compact JSON). */
export function countJsonTokens(value: unknown): number {
  return countTokens(JSON.stringify(value));
}

/**
 * How well a tool matches a search query, in a rule a person can check: the share of the query's words (stop words
 * dropped, stemmed, as the search analyzer reads them) that the tool's name, description or parameter names and
 * descriptions contain, a word's synonyms counting as the word. Ranking (BM25 and friends) orders tools; this says
 * whether the best of them does what was asked at all: a tool matches well when it covers at least GOOD_MATCH of the
 * query's words. "send a slack message" meets `signPayload` only in "message" (1 of 3): not a good match.
 */
import { nameTerms, parseQuery, schemaText, searchSynonymsOf, textTerms } from './analyzer.js';

/** A tool matches a query well when it covers at least this share of the query's words. */
export const GOOD_MATCH = 2 / 3;

export interface MatchableTool {
  name: string;
  description: string;
  input_schema: Record<string, unknown>;
}

/** The share (0–1, two decimals) of the query's words the tool covers; 1 for a query of stop words only. */
export function queryCoverage(q: string, tool: MatchableTool): number {
  const terms = parseQuery(q).terms;
  if (terms.length === 0) return 1;
  const own = new Set([...nameTerms(tool.name), ...textTerms(tool.description), ...textTerms(schemaText(tool.input_schema))]);
  const covered = terms.filter((t) => own.has(t.term) || searchSynonymsOf(t.term).some((s) => own.has(s))).length;
  return Math.round((covered / terms.length) * 100) / 100;
}

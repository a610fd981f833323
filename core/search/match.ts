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
  /** The input schema (a tool row), or `parameters`, its text as schemaText() gives it (a search document). */
  input_schema?: Record<string, unknown>;
  parameters?: string;
}

/**
 * The words a tool offers, analysed once per row object: the tool cache (core/tools/tool-cache.ts) hands out the same row
 * until the tool changes, and a changed tool is a new row, so a search answer never analyses the same text twice.
 */
const ownTerms = new WeakMap<MatchableTool, Set<string>>();
function termsOf(tool: MatchableTool): Set<string> {
  let own = ownTerms.get(tool);
  if (!own) {
    own = new Set([...nameTerms(tool.name), ...textTerms(tool.description), ...textTerms(tool.parameters ?? schemaText(tool.input_schema))]);
    ownTerms.set(tool, own);
  }
  return own;
}

/** The share (0–1, two decimals) of the query's words the tool covers; 1 for a query of stop words only. */
export function queryCoverage(q: string, tool: MatchableTool): number {
  return coverageOf(q)(tool);
}

/** `queryCoverage` for one query and many tools: the query is analysed once. */
export function coverageOf(q: string): (tool: MatchableTool) => number {
  const terms = parseQuery(q).terms.map((t) => [t.term, ...searchSynonymsOf(t.term)]);
  return (tool) => {
    if (terms.length === 0) return 1;
    const own = termsOf(tool);
    const covered = terms.filter((forms) => forms.some((f) => own.has(f))).length;
    return Math.round((covered / terms.length) * 100) / 100;
  };
}

/**
 * How a hit relates to the query's words, by the rule `coverageOf` counts with: `words` when the tool's own text (name,
 * description, parameters) has at least one of them as typed (stemmed), `synonyms` when it has only synonyms of them,
 * `related` when it has none (the engine reached it through its package's name or category, a misspelling, a word
 * being typed, or closeness of meaning).
 */
export type MatchKind = 'words' | 'synonyms' | 'related';
export const MATCH_KINDS: readonly MatchKind[] = ['words', 'synonyms', 'related'];

/** `coverageOf` with how each tool matched (its MatchKind). */
export function matchOf(q: string): (tool: MatchableTool) => { share: number; kind: MatchKind } {
  const share = coverageOf(q);
  const terms = parseQuery(q).terms.map((t) => t.term);
  return (tool) => {
    const s = share(tool);
    if (terms.length === 0) return { share: s, kind: 'words' };
    const own = termsOf(tool);
    const kind: MatchKind = terms.some((t) => own.has(t)) ? 'words' : s > 0 ? 'synonyms' : 'related';
    return { share: s, kind };
  };
}

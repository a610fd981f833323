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
/** A query of at most this many words (stop words included) lists the tools covering most of its words first. */
export const SHORT_QUERY_WORDS = 5;

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

/**
 * Search order agrees with what the results say of themselves (issue 47 item 4). Within a page of hits: first (for a
 * query of at most SHORT_QUERY_WORDS words) the tools that cover at least GOOD_MATCH of its words, then the other tools that have one of its words, then those
 * that have only synonyms of them, then those that have none; each group keeps the engine's order. So "send a slack
 * message" no longer opens with two tools that match none of its words (found by meaning and by their package's
 * name), "check if a website is up" opens with a tool that checks rather than with `validateEmail` (a synonym of
 * "check" only), and "convert csv to json" lists the tools that have most of its words before the others. REST search
 * and MCP `search_tools` both apply it; bench/relevance.ts measures the engine with it.
 */
export function byMatch<T>(items: T[], matchOfItem: (t: T) => { share: number; kind: MatchKind }, q?: string): T[] {
  // The first group only for a person's short query: in an agent's long task, covering most words says less than
  // the ranking does (on MetaTool's held-out split with the encoder, top-1 54.1 → 52.8 with it for every query).
  const short = q === undefined || parseQuery(q).words <= SHORT_QUERY_WORDS;
  const groups = items.map((t) => {
    const m = matchOfItem(t);
    return short && m.kind !== 'related' && m.share >= GOOD_MATCH ? 0 : MATCH_KINDS.indexOf(m.kind) + 1;
  });
  return [0, 1, 2, 3].flatMap((g) => items.filter((_, i) => groups[i] === g));
}

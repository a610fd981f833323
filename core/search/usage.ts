/**
 * Learning from use (issue 28): which tools identified callers ran (or added to a collection, or called over MCP)
 * within a few minutes of a search, as (query term → tool) associations. The votes live in Postgres
 * (core/repos/search-usage.ts: one row per term, tool and caller, so a caller is at most one vote per term and tool);
 * each API process aggregates them into a `UsageTable` in memory (core/search/usage-sync.ts), and the ranker reads it
 * with no query per search. docs/search.md, "Learning from use".
 */
import { parseQuery } from './analyzer.js';

/** What ranking needs of a search: its distinct analysed terms (stemmed, stop words dropped), at most this many. */
export const USAGE_MAX_TERMS = 16;

export function usageTermsOf(q: string): string[] {
  return usageKeys(parseQuery(q).terms.map((t) => t.term));
}

/**
 * The keys a search is remembered by: its first USAGE_MAX_TERMS analysed terms, and each pair of neighbouring ones
 * (`"send email"`: a phrase says more than its words apart).
 */
export function usageKeys(terms: string[]): string[] {
  const kept = terms.slice(0, USAGE_MAX_TERMS);
  return [...kept, ...kept.slice(1).map((t, i) => `${kept[i]} ${t}`)];
}

/** One (term, tool) pair as the aggregation query returns it: its distinct callers and their votes' decayed weight. */
export interface UsageAggregate {
  term: string;
  toolId: string;
  /** Distinct callers who voted (one vote each). */
  callers: number;
  /** Σ over those callers of 2^(−age / half-life): 1 per fresh vote. */
  weight: number;
}

export interface UsageParams {
  /** A (term, tool) pair counts only with at least this many distinct callers. */
  minCallers: number;
  /** At most this many tools are kept per term (the heaviest). */
  maxToolsPerTerm: number;
  /** A term's associations count in proportion to weight / (weight + prior): a term few callers used says little. */
  prior: number;
}

export const DEFAULT_USAGE: UsageParams = { minCallers: 3, maxToolsPerTerm: 32, prior: 5 };

export interface TermUsage {
  /** Per tool id: its share of the term's (kept) weight, times the term's confidence; the sum over tools is < 1. */
  tools: Map<string, number>;
}

/** The aggregated associations, read by the ranker. Immutable once built: a refresh builds a new one. */
export class UsageTable {
  constructor(
    readonly terms: ReadonlyMap<string, TermUsage>,
    /** Number of (term, tool) pairs kept. */
    readonly pairs: number,
  ) {}

  static readonly empty = new UsageTable(new Map(), 0);
}

/**
 * Builds the table from aggregates: pairs under `minCallers` distinct callers are dropped (so a lone caller, however
 * often they search and run, changes nothing), the heaviest `maxToolsPerTerm` tools of each term are kept, and each
 * gets its share of the term's weight × the term's confidence weight / (weight + prior).
 */
export function buildUsageTable(aggregates: Iterable<UsageAggregate>, params: UsageParams = DEFAULT_USAGE): UsageTable {
  const byTerm = new Map<string, { toolId: string; weight: number }[]>();
  for (const a of aggregates) {
    if (a.callers < params.minCallers || !(a.weight > 0)) continue;
    let list = byTerm.get(a.term);
    if (!list) byTerm.set(a.term, (list = []));
    list.push({ toolId: a.toolId, weight: a.weight });
  }
  const terms = new Map<string, TermUsage>();
  let pairs = 0;
  for (const [term, list] of byTerm) {
    list.sort((x, y) => y.weight - x.weight || (x.toolId < y.toolId ? -1 : 1));
    const kept = list.slice(0, params.maxToolsPerTerm);
    const total = kept.reduce((s, x) => s + x.weight, 0);
    const confidence = total / (total + params.prior);
    terms.set(term, { tools: new Map(kept.map((x) => [x.toolId, (x.weight / total) * confidence])) });
    pairs += kept.length;
  }
  return new UsageTable(terms, pairs);
}

/**
 * Aggregates votes in memory the way the database's aggregation query does (one vote per term, tool and caller, the
 * latest time counting; weight 2^(−age / half-life)): used by `bench:relevance --usage` to replay usage in process.
 */
export function aggregateVotes(
  votes: Iterable<{ terms: string[]; toolId: string; caller: string; at: number }>,
  now: number,
  halfLifeMs: number,
): UsageAggregate[] {
  const latest = new Map<string, Map<string, number>>();
  for (const v of votes) {
    for (const term of v.terms) {
      const key = `${term}\u0000${v.toolId}`;
      let callers = latest.get(key);
      if (!callers) latest.set(key, (callers = new Map()));
      callers.set(v.caller, Math.max(callers.get(v.caller) ?? -Infinity, v.at));
    }
  }
  const out: UsageAggregate[] = [];
  for (const [key, callers] of latest) {
    const [term, toolId] = key.split('\u0000');
    let weight = 0;
    for (const at of callers.values()) weight += 2 ** (-Math.max(0, now - at) / halfLifeMs);
    out.push({ term, toolId, callers: callers.size, weight });
  }
  return out;
}

/** Where an engine reads the current table from (the API process's usage sync swaps it on refresh). */
export interface UsageSource {
  current(): UsageTable;
}

export function fixedUsage(table: UsageTable): UsageSource {
  return { current: () => table };
}

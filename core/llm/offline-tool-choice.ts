/**
 * How the offline agent chooses tools: BM25 over each tool's name, description and parameter names, against the
 * words of the prompt that are not values (quoted strings, URLs, numbers... say what to work on, not what to do).
 * A prompt that clearly asks for several things ("hash this, then slugify that") gets one tool per part.
 */
import { queryJoins, synonymsOf, tokenize, tokenizeName } from '../search/text.js';
import { analyzePrompt } from './offline-analysis.js';
import type { LlmToolSpec } from './provider.js';

const K1 = 1.2;
const B = 0.5;
const FIELD_WEIGHTS = { name: 3, description: 1, params: 0.5 };

interface ToolDoc {
  spec: LlmToolSpec;
  tf: Map<string, number>;
  length: number;
}

export interface ToolIndex {
  docs: ToolDoc[];
  df: Map<string, number>;
  avgLength: number;
}

export function indexTools(tools: LlmToolSpec[]): ToolIndex {
  const docs = tools.map((spec): ToolDoc => {
    const tf = new Map<string, number>();
    const add = (terms: string[], weight: number) => {
      for (const t of terms) tf.set(t, (tf.get(t) ?? 0) + weight);
    };
    add(tokenizeName(spec.name), FIELD_WEIGHTS.name);
    add(tokenize(spec.description), FIELD_WEIGHTS.description);
    const params = Object.keys((spec.inputSchema.properties as object | undefined) ?? {});
    add(
      params.flatMap((p) => tokenizeName(p)),
      FIELD_WEIGHTS.params,
    );
    return { spec, tf, length: [...tf.values()].reduce((a, b) => a + b, 0) };
  });
  const df = new Map<string, number>();
  for (const d of docs) for (const t of d.tf.keys()) df.set(t, (df.get(t) ?? 0) + 1);
  const avgLength = docs.reduce((a, d) => a + d.length, 0) / Math.max(1, docs.length);
  return { docs, df, avgLength };
}

interface QueryTerm {
  weight: number;
  /** Whether a doc term sharing a prefix may stand in for it (not for glued runs: "manydays" is no "many"). */
  prefix: boolean;
}

/** Query terms with weights: the prompt's own terms 1, their synonyms 0.5, glued word runs ("csv to json") 1. */
function queryWeights(text: string): Map<string, QueryTerm> {
  const terms = new Map<string, QueryTerm>();
  const put = (t: string, weight: number, prefix: boolean) => {
    const old = terms.get(t);
    terms.set(t, { weight: Math.max(old?.weight ?? 0, weight), prefix: prefix || !!old?.prefix });
  };
  for (const t of tokenize(text)) {
    put(t, 1, true);
    for (const s of synonymsOf(t)) put(s, 0.5, true);
  }
  for (const j of queryJoins(text)) put(j, 1, false);
  return terms;
}

const PREFIX_WEIGHT = 0.6;
const prefixMatch = (a: string, b: string) => a.length >= 4 && b.length >= 4 && !/\d/.test(a + b) && (a.startsWith(b) || b.startsWith(a));

export interface ScoredTool {
  spec: LlmToolSpec;
  score: number;
}

/** Tools by BM25 score against a text, best first (ties keep the offered order). */
export function rankTools(index: ToolIndex, text: string): ScoredTool[] {
  const q = queryWeights(text);
  const n = index.docs.length;
  return index.docs
    .map((d) => {
      let score = 0;
      const norm = K1 * (1 - B + (B * d.length) / index.avgLength);
      for (const [t, { weight: w, prefix }] of q) {
        // Exact term, else the best term sharing a 4+ letter prefix at a discount ("valid" meets "validat").
        let best = 0;
        for (const [term, f] of d.tf) {
          const weight = term === t ? w : prefix && prefixMatch(term, t) ? w * PREFIX_WEIGHT : 0;
          if (weight === 0) continue;
          const df = index.df.get(term) ?? 0;
          const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
          best = Math.max(best, weight * idf * ((f * (K1 + 1)) / (f + norm)));
        }
        score += best;
      }
      return { spec: d.spec, score };
    })
    .sort((a, b) => b.score - a.score);
}

/** Where a prompt changes subject: sentence ends, "then", "and then", "also", "after that". */
const CLAUSE_BREAK = /[.;!?]+\s+|,?\s+(?:and then|then|and also|also|after that|afterwards|finally)\s+/giu;

/** The prompt cut into clauses (values never cut: breaks are looked for in the prompt with its values blanked). */
export function splitClauses(prompt: string): string[] {
  const { masked } = analyzePrompt(prompt);
  const out: string[] = [];
  let from = 0;
  for (const m of masked.matchAll(CLAUSE_BREAK)) {
    // The break starts at its first visible character: blanks before it may be a value of the clause.
    const lead = m[0].length - m[0].trimStart().length;
    const punctuation = /^[.;!?]+/.exec(m[0].trimStart())?.[0].length ?? 0;
    out.push(prompt.slice(from, m.index + lead + punctuation));
    from = m.index + m[0].length;
  }
  out.push(prompt.slice(from));
  return out.map((c) => c.trim()).filter((c) => /[\p{L}]/u.test(c));
}

/** How well a prompt (or a part of it) fits a tool's parameters: 0 when a required value is missing, else about 1–1.6. */
export type FitOf = (spec: LlmToolSpec, text: string) => number;

/** Tools scoring at least this share of the best are close enough to prefer one that can actually be called. */
const CLOSE = 0.75;
/** A clause's best tool must score at least this share of the whole prompt's best to count as a request of its own. */
const MIN_CLAUSE_SHARE = 0.15;

export interface PlannedCall {
  spec: LlmToolSpec;
  /** The part of the prompt that asks for this call (the whole prompt for a single call). */
  text: string;
}

/**
 * The calls to make, in prompt order. One tool normally: the best match of the whole prompt (any tool at all when
 * only one is offered, as in prompt execution), weighed among close runners-up by how well the prompt's values fit each tool (a
 * tool missing a required value is out; one that uses all the values given is preferred). Several when at least two clauses each point at a different tool: a clause counts when among its
 * close matches exactly one tool can be called with the clause's own values.
 */
export function planCalls(prompt: string, tools: LlmToolSpec[], limit: number, fitOf: FitOf = () => 1): PlannedCall[] {
  if (tools.length === 0 || limit < 1) return [];
  const index = indexTools(tools);
  const ranked = rankTools(index, analyzePrompt(prompt).masked);
  const best = ranked[0];
  if (tools.length > 1 && best.score <= 0) return [];
  const closeTo = (list: ScoredTool[]) => list.filter((r) => r.score >= CLOSE * list[0].score).slice(0, 5);
  const fitting = closeTo(ranked)
    .map((r) => ({ ...r, score: r.score * fitOf(r.spec, prompt) }))
    .filter((r) => r.score > 0)
    .sort((a, b) => b.score - a.score);
  const chosen = fitting[0] ?? best;
  const single = [{ spec: chosen.spec, text: prompt }];
  const clauses = splitClauses(prompt);
  if (limit < 2 || clauses.length < 2) return single;
  const calls: PlannedCall[] = [];
  for (const clause of clauses) {
    const clauseRanked = rankTools(index, analyzePrompt(clause).masked);
    if (!clauseRanked[0] || clauseRanked[0].score <= MIN_CLAUSE_SHARE * best.score) continue;
    const callable = closeTo(clauseRanked).filter((r) => fitOf(r.spec, clause) > 0);
    if (callable.length === 1 && !calls.some((c) => c.spec === callable[0].spec)) calls.push({ spec: callable[0].spec, text: clause });
  }
  return calls.length >= 2 ? calls.slice(0, Math.min(limit, 3)) : single;
}

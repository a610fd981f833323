/**
 * How the offline agent chooses tools: the registry search's ranking (core/search) over the offered tools, against
 * the words of the prompt that are not values (quoted strings, URLs, numbers... say what to work on, not what to do),
 * so that it picks the first tool of the order that `GET /api/tools/search` and an MCP endpoint's search_tools give
 * over the same tools, unless the prompt's values fit a close runner-up better. A prompt that clearly asks for
 * several things ("hash this, then slugify that") gets one tool per part.
 */
import { schemaText } from '../../search/analyzer.js';
import { rankDocuments } from '../../search/embedded.js';
import type { SearchDocument } from '../../search/engine.js';
import { analyzePrompt } from './analysis.js';
import type { LlmToolSpec } from '../provider.js';

/**
 * The offered tools as search documents, with the tool's id (ties then go as in search) or, without a search
 * document, its position (ties keep the offered order).
 */
type ToolIndex = { specs: LlmToolSpec[]; docs: SearchDocument[] };

function indexTools(tools: LlmToolSpec[]): ToolIndex {
  const docs = tools.map(
    (spec, i): SearchDocument => ({
      ...(spec.searchDocument ?? {
        name: spec.name,
        description: spec.description,
        parameters: schemaText(spec.inputSchema),
        packageName: '',
        category: 'automation',
        healthStatus: 'HEALTHY',
        qualityScore: 0,
      }),
      // The offline agent may call a tool search would hide (BROKEN): what to offer is its caller's choice.
      healthStatus: 'HEALTHY',
      id: spec.searchDocument?.id ?? String(i).padStart(6, '0'),
    }),
  );
  return { specs: tools, docs };
}

interface ScoredTool {
  spec: LlmToolSpec;
  /** BM25F over the offered tools (core/search's lexical score): comparable between texts over the same tools. */
  score: number;
}

/** The tools matching a text, in the registry search's order (only those sharing a word with it). */
function rankTools(index: ToolIndex, text: string): ScoredTool[] {
  const specOf = new Map(index.docs.map((d, i) => [d.id, index.specs[i]]));
  return rankDocuments(index.docs, text).map((h) => ({ spec: specOf.get(h.id)!, score: h.lexical ?? h.score }));
}

/** Where a prompt changes subject: sentence ends, "then", "and then", "also", "after that". */
const CLAUSE_BREAK = /[.;!?]+\s+|,?\s+(?:and then|then|and also|also|after that|afterwards|finally)\s+/giu;

/** The prompt cut into clauses (values never cut: breaks are looked for in the prompt with its values blanked). */
function splitClauses(prompt: string): string[] {
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

/** Tools whose words score at least this share of the best are close enough to prefer one that can actually be called. */
const CLOSE = 0.75;
/** A clause's best words score must be at least this share of the whole prompt's to count as a request of its own. */
const MIN_CLAUSE_SHARE = 0.15;

export interface PlannedCall {
  spec: LlmToolSpec;
  /** The part of the prompt that asks for this call (the whole prompt for a single call). */
  text: string;
}

/**
 * The calls to make, in prompt order. One tool normally: the first of the search order of the whole prompt (any tool
 * at all when only one is offered, as in prompt execution), unless the prompt's values fit a close runner-up better
 * (a tool missing a required value is out; one that uses all the values given is preferred; equal fits keep the
 * search order). Several when at least two clauses each point at a different tool: a clause counts when among its
 * close matches exactly one tool can be called with the clause's own values.
 */
export function planCalls(prompt: string, tools: LlmToolSpec[], limit: number, fitOf: FitOf = () => 1): PlannedCall[] {
  if (tools.length === 0 || limit < 1) return [];
  const index = indexTools(tools);
  const ranked = rankTools(index, analyzePrompt(prompt).masked);
  if (ranked.length === 0 && tools.length > 1) return [];
  const best = ranked[0] ?? { spec: tools[0], score: 0 };
  // Close: among the first five of the order, those whose words score at least CLOSE of the best such score.
  const closeTo = (list: ScoredTool[]) => {
    const top = list.slice(0, 5);
    const most = Math.max(0, ...top.map((r) => r.score));
    return top.filter((r) => r.score >= CLOSE * most);
  };
  const fitting = closeTo(ranked)
    .map((r) => ({ ...r, fit: fitOf(r.spec, prompt) }))
    .filter((r) => r.fit > 0)
    .sort((a, b) => b.fit - a.fit);
  const chosen = fitting[0] ?? best;
  const single = [{ spec: chosen.spec, text: prompt }];
  const clauses = splitClauses(prompt);
  if (limit < 2 || clauses.length < 2) return single;
  const wholeBest = Math.max(0, ...ranked.map((r) => r.score));
  const calls: PlannedCall[] = [];
  for (const clause of clauses) {
    const clauseRanked = rankTools(index, analyzePrompt(clause).masked);
    if (!clauseRanked[0] || Math.max(...clauseRanked.map((r) => r.score)) <= MIN_CLAUSE_SHARE * wholeBest) continue;
    const callable = closeTo(clauseRanked).filter((r) => fitOf(r.spec, clause) > 0);
    if (callable.length === 1 && !calls.some((c) => c.spec === callable[0].spec)) calls.push({ spec: callable[0].spec, text: clause });
  }
  return calls.length >= 2 ? calls.slice(0, Math.min(limit, 3)) : single;
}

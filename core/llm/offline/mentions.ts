/**
 * Parameters the offline agent fills from words rather than literal values: enums (an allowed value named in the
 * prompt, "SHA-512", "split complementary", "as base64") and booleans (a parameter named in the prompt, turned
 * off by a nearby "no"/"without" or set by a following "true"/"false").
 */
import { searchStem } from '../../search/analyzer.js';
import type { Candidate, PromptAnalysis } from './analysis.js';
import { contextScore, nameWords, type Param } from './params.js';

const norm = (s: string) => s.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');

interface Mention {
  p: Param;
  value: string;
  /** Word indexes [from, to) it covers; none for a quoted value. */
  from: number;
  to: number;
  quoted?: Candidate;
  score: number;
}

/** Whether words i..j-1 are written next to each other (only spaces or hyphens between them). */
function adjacent(analysis: PromptAnalysis, i: number, j: number): boolean {
  const { words, text } = analysis;
  for (let k = i; k + 1 < j; k++) {
    const gap = text.slice(words[k].start + words[k].word.length, words[k + 1].start);
    if (!/^[\s-]{0,2}$/.test(gap)) return false;
  }
  return true;
}

function mentionsOf(p: Param, analysis: PromptAnalysis, used: Set<Candidate>): Mention[] {
  const { words } = analysis;
  const values: string[] = p.schema.enum.filter((v: unknown): v is string => typeof v === 'string');
  const byNorm = new Map(values.filter((v) => norm(v).length >= 2).map((v) => [norm(v), v]));
  const out: Mention[] = [];
  for (let i = 0; i < words.length; i++) {
    for (let n = 1; n <= 3 && i + n <= words.length; n++) {
      const value = byNorm.get(
        words
          .slice(i, i + n)
          .map((w) => w.word)
          .join(''),
      );
      if (value === undefined || !adjacent(analysis, i, i + n)) continue;
      const before = words.slice(Math.max(0, i - 4), i).map((w) => w.word);
      const after = words.slice(i + n, i + n + 3).map((w) => w.word);
      out.push({ p, value, from: i, to: i + n, score: contextScore(p, before, after) });
    }
  }
  for (const c of analysis.candidates) {
    if (c.kind !== 'quoted' || used.has(c)) continue;
    const value = values.find((v) => v.toLowerCase() === String(c.value).toLowerCase());
    if (value !== undefined) out.push({ p, value, from: -1, to: -1, quoted: c, score: contextScore(p, c.before, c.after) + 0.5 });
  }
  return out;
}

/** Each enum parameter gets the allowed value the prompt names, best supported by the words around it first. */
export function fillEnums(input: Record<string, unknown>, params: Param[], analysis: PromptAnalysis, used: Set<Candidate>): void {
  const mentions = params.flatMap((p) => mentionsOf(p, analysis, used));
  mentions.sort((a, b) => b.score - a.score || b.to - b.from - (a.to - a.from) || params.indexOf(a.p) - params.indexOf(b.p) || a.from - b.from);
  const takenWords = new Set<number>();
  for (const m of mentions) {
    if (m.p.key in input) continue;
    if (m.quoted) {
      if (used.has(m.quoted)) continue;
      used.add(m.quoted);
    } else {
      const span = Array.from({ length: m.to - m.from }, (_, k) => m.from + k);
      if (span.some((k) => takenWords.has(k))) continue;
      for (const k of span) takenWords.add(k);
    }
    input[m.p.key] = m.value;
  }
}

const NEGATIONS = new Set(['no', 'not', 'without', 'don', 'dont', 'never', 'disable', 'disabled', 'off', 'skip', 'omit']);
const TRUE_WORDS = new Set(['true', 'yes', 'on', 'enabled']);
const FALSE_WORDS = new Set(['false', 'no', 'off', 'disabled']);

/** A boolean parameter named in the prompt is true, unless negated just before or set false just after. */
export function fillBooleans(input: Record<string, unknown>, params: Param[], analysis: PromptAnalysis): void {
  const words = analysis.words.map((w) => w.word);
  const stems = words.map(searchStem);
  for (const p of params) {
    const name = nameWords(p.key).map(searchStem);
    const joined = nameWords(p.key).join('');
    let at = -1;
    let len = name.length;
    for (let i = 0; i + name.length <= stems.length && at < 0; i++) {
      if (name.every((t, k) => stems[i + k] === t) && adjacent(analysis, i, i + name.length)) at = i;
    }
    if (at < 0 && name.length > 1) {
      at = words.indexOf(joined);
      len = 1;
    }
    if (at < 0) continue;
    const next = words[at + len];
    if (next && TRUE_WORDS.has(next)) input[p.key] = true;
    else if (next && FALSE_WORDS.has(next)) input[p.key] = false;
    else input[p.key] = !words.slice(Math.max(0, at - 3), at).some((w) => NEGATIONS.has(w));
  }
}

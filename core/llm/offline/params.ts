/**
 * A tool parameter as the offline agent sees it (its type, the kind of value a string wants, the words of its name and
 * description), and how strongly the words next to a value in a prompt point at it.
 */
import { searchStem, searchSynonymsOf, textTerms } from '../../search/analyzer.js';

export type Schema = Record<string, any>;
export type StringKind = 'url' | 'email' | 'datetime' | 'duration' | 'uuid' | 'text';

export interface Param {
  key: string;
  schema: Schema;
  type: string | undefined;
  required: boolean;
  /** Stemmed words of the name (camelCase split, stop words kept: a parameter may be called `to`). */
  nameTerms: Set<string>;
  descTerms: Set<string>;
  kind: StringKind;
}

export const typeOf = (s: Schema): string | undefined => [].concat(s?.type ?? []).find((t: string) => t !== 'null');
export const nameWords = (key: string) =>
  key
    .split(/(?<=[a-z0-9])(?=[A-Z])|[_\-\s]+/)
    .map((w) => w.toLowerCase())
    .filter(Boolean);

function stringKind(_key: string, s: Schema, words: string[]): StringKind {
  const desc = String(s.description ?? '').toLowerCase();
  if (/^(uri|url|uri-reference|iri)$/.test(s.format ?? '') || words.some((w) => /^(url|uri|href)$/.test(w))) return 'url';
  if (words.length === 1 && words[0] === 'base' && /\burl\b/.test(desc)) return 'url';
  if (s.format === 'email' || words.includes('email')) return 'email';
  if (s.format === 'uuid' || words.includes('uuid')) return 'uuid';
  if (/^(date|date-time)$/.test(s.format ?? '')) return 'datetime';
  if (/iso 8601/.test(desc)) return /duration/.test(desc) ? 'duration' : 'datetime';
  return 'text';
}

export function describeParam(key: string, s: Schema, required: boolean): Param {
  const words = nameWords(key);
  const descTerms = new Set(textTerms(String(s.description ?? '')));
  for (const t of [...descTerms]) for (const syn of searchSynonymsOf(t)) descTerms.add(syn);
  const nameTerms = new Set(words.map(searchStem));
  for (const t of [...nameTerms]) for (const syn of searchSynonymsOf(t)) nameTerms.add(syn);
  return { key, schema: s, type: typeOf(s), required, nameTerms, descTerms, kind: stringKind(key, s, words) };
}

/** How well the words next to a value point at a parameter: name words count double, nearer words more. */
export function contextScore(p: Param, before: string[], after: string[]): number {
  let score = 0;
  const add = (word: string, weight: number) => {
    const t = searchStem(word);
    if (p.nameTerms.has(t)) score += 2 * weight;
    else if (p.descTerms.has(t)) score += weight;
  };
  before
    .slice(-4)
    .reverse()
    .forEach((w, i) => add(w, 1 / (1 + i * 0.5)));
  after.slice(0, 3).forEach((w, i) => add(w, 0.7 / (1 + i * 0.5)));
  return score;
}

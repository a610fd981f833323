/**
 * The offline agent's argument filling: matches the values found in a prompt (offline-analysis.ts) to a tool's
 * JSON Schema. Each kind of parameter takes the kind of value that fits it (enums the enum words mentioned, URLs for
 * URL parameters, quoted strings for text, numbers for numbers, JSON for objects...), and when several parameters
 * could take a value, the words next to the value decide ("background 'white'", "24 characters").
 */
import { matchesPattern } from '../../text/safe-regex.js';
import type { Candidate, PromptAnalysis } from './analysis.js';
import { fillBooleans, fillEnums } from './mentions.js';
import { contextScore, describeParam, nameWords, typeOf, type Param, type Schema, type StringKind } from './params.js';

export interface FilledArguments {
  input: Record<string, unknown>;
  /** Required parameters that nothing in the prompt could fill. */
  missing: string[];
  /** How well the prompt fits the tool: 0 when something required is missing, else 1 plus a bonus for using the
   * prompt's values, minus a little for each required text filled by a value of another kind (a date as text). */
  fit: number;
}

function fitsString(s: Schema, v: unknown): v is string {
  if (typeof v !== 'string') return false;
  const n = [...v].length;
  if ((s.minLength !== undefined && n < s.minLength) || (s.maxLength !== undefined && n > s.maxLength)) return false;
  return s.pattern === undefined || matchesPattern(s.pattern, v);
}

function fitsNumber(s: Schema, v: unknown): boolean {
  if (typeof v !== 'number') return false;
  if (typeOf(s) === 'integer' && !Number.isInteger(v)) return false;
  if (s.enum && !s.enum.includes(v)) return false;
  if ((s.minimum !== undefined && v < s.minimum) || (s.maximum !== undefined && v > s.maximum)) return false;
  return !((s.exclusiveMinimum !== undefined && v <= s.exclusiveMinimum) || (s.exclusiveMaximum !== undefined && v >= s.exclusiveMaximum));
}

const LOOKS: Partial<Record<StringKind, RegExp>> = {
  url: /^(?:https?|ftp|wss?):\/\/\S+$/i,
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  datetime: /^(?:\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-][\d:]+)?)?|now)$/i,
  duration: /^-?P(?=\d|T\d)[\dYMWDTHS.]+$/,
  uuid: /^[{]?(?:urn:uuid:)?[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}[}]?$/i,
};

/** A value's shape: runs of letters and digits become `w` ("report.pdf" → "w.w", "#1e90ff" → "#w"). */
const shapeOf = (v: string) => v.replace(/[\p{L}\p{N}]+/gu, 'w').replace(/\s+/g, ' ');
const shapeCache = new WeakMap<Param, Set<string>>();

/** Points for a value shaped like an example the parameter's description quotes ("photo.JPG"), fewer if unlike all. */
function shapeBonus(p: Param, c: Choice): number {
  let shapes = shapeCache.get(p);
  if (!shapes) {
    const quoted = [...String(p.schema.description ?? '').matchAll(/"([^"]+)"|“([^”]+)”/g)].map((m) => m[1] ?? m[2]);
    shapes = new Set(quoted.map(shapeOf).filter((s) => s.length <= 12 && s !== 'w'));
    shapeCache.set(p, shapes);
  }
  if (typeof c.value !== 'string' || shapes.size === 0) return 0;
  if (shapes.has(shapeOf(c.value))) return 3;
  return /\s/.test(c.value) ? 0 : -2;
}

/** A value made of several candidates (a list of quoted strings or numbers): using it uses them all. */
type Choice = Candidate & { members?: Candidate[] };

interface Filling {
  analysis: PromptAnalysis;
  input: Record<string, unknown>;
  used: Set<Candidate>;
}

const noBonus = () => 0;

/**
 * Gives candidates to parameters: first by context (best score first), then required parameters take the remaining
 * fitting values in prompt order; optional ones only with context, unless `optionalInOrder`.
 */
function assign(
  f: Filling,
  params: Param[],
  picks: Choice[],
  fits: (p: Param, c: Choice) => boolean,
  { optionalInOrder = false, bonus = noBonus }: { optionalInOrder?: boolean; bonus?: (p: Param, c: Choice) => number } = {},
): void {
  const free = (c: Choice) => !f.used.has(c) && !(c.members ?? []).some((m) => f.used.has(m));
  const took = new Map<Param, Choice>();
  const take = (p: Param, c: Choice) => {
    f.input[p.key] = c.members ? c.members.map((m) => m.value) : c.value;
    f.used.add(c);
    for (const m of c.members ?? []) f.used.add(m);
    took.set(p, c);
  };
  const open = params.filter((p) => !(p.key in f.input));
  const pairs = open.flatMap((p) => picks.filter((c) => fits(p, c)).map((c) => ({ p, c, s: contextScore(p, c.before, c.after) + bonus(p, c) })));
  pairs.sort((a, b) => b.s - a.s || open.indexOf(a.p) - open.indexOf(b.p) || a.c.start - b.c.start);
  for (const { p, c, s } of pairs) if (s > 0 && !(p.key in f.input) && free(c)) take(p, c);
  for (const p of open.filter((q) => !(q.key in f.input) && (q.required || optionalInOrder))) {
    const c = picks.find((x) => free(x) && fits(p, x));
    if (c) take(p, c);
  }
  // A required parameter left empty takes a value an optional one got by context (that one falls back to its default).
  for (const p of open.filter((q) => q.required && !(q.key in f.input))) {
    const [optional, c] = [...took].find(([q, x]) => !q.required && fits(p, x)) ?? [];
    if (!optional || !c) continue;
    delete f.input[optional.key];
    took.delete(optional);
    f.input[p.key] = c.members ? c.members.map((m) => m.value) : c.value;
  }
}

/** Lists: a run of quoted strings or numbers written one after another ("a", "b" and "c"; 120, 85, 240). */
function runsOf(candidates: Candidate[], kind: 'quoted' | 'number'): Choice[] {
  const runs = new Map<number, Candidate[]>();
  for (const c of candidates) if (c.kind === kind) runs.set(c.run, [...(runs.get(c.run) ?? []), c]);
  return [...runs.values()].map((members) => ({ ...members[0], after: members.at(-1)!.after, members }));
}

const PREPOSITION_NAMES = new Set(['from', 'to', 'source', 'target', 'unit', 'into']);

/**
 * Last resorts for a required text parameter: the payload after a colon, the word after `to`, a number's unit, a
 * number with its unit shaped like the description's examples ("1.5 GB"), and, weakest, any other value as text.
 * Returns whether it found something, and whether that was the weak kind.
 */
function textFallback(f: Filling, p: Param): 'none' | 'found' | 'weak' {
  const { candidates, words, text } = f.analysis;
  const set = (value: unknown, c?: Candidate) => {
    f.input[p.key] = value;
    if (c) f.used.add(c);
    return 'found' as const;
  };
  const payload = candidates.find((c) => c.kind === 'payload' && !f.used.has(c) && fitsString(p.schema, c.value));
  if (payload) {
    for (const c of candidates) if (c.start >= payload.start) f.used.add(c);
    return set(payload.value);
  }
  const name = nameWords(p.key).join('');
  if (PREPOSITION_NAMES.has(name)) {
    const at = words.findIndex((w) => w.word === name);
    const next = at >= 0 ? words[at + 1] : undefined;
    if (next && !/^\d/.test(next.word)) return set(text.slice(next.start, next.start + next.word.length));
    const withUnit = candidates.find((c) => c.kind === 'number' && c.unit);
    if (withUnit) return set(withUnit.unit);
  }
  const number = candidates.find((c) => c.kind === 'number' && c.unit && !f.used.has(c) && shapeBonus(p, { ...c, value: c.raw }) > 0);
  if (number) return set(number.raw.trim(), number);
  const other = candidates.find((c) => /^(url|email|uuid|datetime|duration)$/.test(c.kind) && !f.used.has(c) && fitsString(p.schema, c.value));
  if (other) return set(other.value, other) && 'weak';
  return 'none';
}

export function fillArguments(schema: Schema, analysis: PromptAnalysis, skip: ReadonlySet<string> = new Set()): FilledArguments {
  const props: Record<string, Schema> = schema?.properties ?? {};
  const required = new Set<string>(schema?.required ?? []);
  const params = Object.entries(props)
    .filter(([key]) => !skip.has(key))
    .map(([key, s]) => describeParam(key, s, required.has(key)));
  const f: Filling = { analysis, input: {}, used: new Set() };
  const cands = analysis.candidates;
  const of = (...kinds: string[]) => cands.filter((c) => kinds.includes(c.kind));

  fillEnums(
    f.input,
    params.filter((p) => p.type === 'string' && Array.isArray(p.schema.enum)),
    analysis,
    f.used,
  );
  const rest = params.filter((p) => !(p.key in f.input));
  const byType = (...types: (string | undefined)[]) => rest.filter((p) => types.includes(p.type));

  // JSON values: objects, untyped parameters, arrays of anything but plain strings and numbers.
  const itemType = (p: Param) => typeOf(p.schema.items ?? {});
  const jsonParams = rest.filter(
    (p) => p.type === 'object' || p.type === undefined || (p.type === 'array' && !['string', 'number', 'integer'].includes(itemType(p) ?? '')),
  );
  assign(f, jsonParams, of('json'), (p, c) =>
    p.type === 'object' ? !!c.value && typeof c.value === 'object' && !Array.isArray(c.value) : p.type === 'array' ? Array.isArray(c.value) : true,
  );
  // Lists of strings or numbers: a JSON array, or a run of quoted strings / numbers.
  const arrays = byType('array').filter((p) => !jsonParams.includes(p));
  const listFits = (p: Param, c: Choice) => {
    const items: unknown[] = c.members ? c.members.map((m) => m.value) : Array.isArray(c.value) ? c.value : [];
    const want = itemType(p) === 'string' ? 'string' : 'number';
    const min = p.schema.minItems ?? 1;
    // A lone quoted string or number is a list only where a list is required; otherwise it is left to a scalar.
    const listy = !c.members || items.length >= 2 || p.required;
    return items.length >= min && listy && items.every((v) => typeof v === want);
  };
  assign(f, arrays, [...of('json'), ...runsOf(cands, 'quoted'), ...runsOf(cands, 'number')], listFits);

  // Strings with a meaning (URL, e-mail, date, duration, UUID) take values that look like one.
  const strings = byType('string');
  const looks = (p: Param, c: Choice) =>
    (c.kind === p.kind || (c.kind === 'quoted' && !!LOOKS[p.kind]?.test(String(c.value)))) && fitsString(p.schema, c.value);
  assign(
    f,
    strings.filter((p) => p.kind !== 'text'),
    cands,
    looks,
    { optionalInOrder: true },
  );
  // Text takes quoted strings, then loose tokens (report.pdf, #1e90ff); required text falls back further.
  const textParams = strings.filter((p) => !(p.key in f.input) && !p.schema.enum && (p.kind === 'text' || p.required));
  const textFits = (p: Param, c: Choice) => fitsString(p.schema, c.value);
  assign(f, textParams, of('quoted'), textFits, { bonus: shapeBonus });
  assign(f, textParams, of('token'), textFits, { bonus: shapeBonus });

  assign(f, byType('number', 'integer'), of('number'), (p, c) => fitsNumber(p.schema, c.value));
  const lastResort = textParams.filter((p) => p.required && !(p.key in f.input)).map((p) => textFallback(f, p));
  fillBooleans(f.input, byType('boolean'), analysis);

  for (const p of params) {
    if (!(p.key in f.input) && p.schema.default !== undefined) f.input[p.key] = structuredClone(p.schema.default);
  }
  const missing = [...required].filter((k) => !(k in f.input) && !skip.has(k));
  const values = cands.filter((c) => c.kind !== 'payload');
  const coverage = values.length ? values.filter((c) => f.used.has(c)).length / values.length : 1;
  const fit = missing.length ? 0 : 1 + 0.6 * coverage - 0.3 * lastResort.filter((r) => r === 'weak').length;
  return { input: f.input, missing, fit };
}

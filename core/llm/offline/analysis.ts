/**
 * Reads a prompt the way the offline agent needs it: the literal values it contains (JSON, quoted strings, code
 * fences, URLs, e-mails, ISO dates and durations, UUIDs, numbers with their units, a payload after a colon), each
 * with the words around it, and the prompt's remaining words. Argument filling matches these against a JSON Schema.
 */

export type CandidateKind = 'json' | 'quoted' | 'url' | 'email' | 'datetime' | 'duration' | 'uuid' | 'token' | 'number' | 'payload';

export interface Candidate {
  kind: CandidateKind;
  value: unknown;
  /** The text as written (for a number: with its unit, e.g. "1.5 GB"). */
  raw: string;
  start: number;
  end: number;
  /** Lowercased words between the previous value and this one, nearest last. */
  before: string[];
  /** Lowercased words between this value and the next one (at most 3). */
  after: string[];
  /** A number's unit as written right after it ("km", "°C", "%"). */
  unit?: string;
  /** Values of one list ("a", "b" and "c"; 1, 2, 3) share a run number. */
  run: number;
}

export interface Word {
  word: string;
  start: number;
}

export interface PromptAnalysis {
  text: string;
  candidates: Candidate[];
  /** Lowercased words outside the values, in order. */
  words: Word[];
  /** The prompt with every value blanked out: the words that say what to do. */
  masked: string;
}

const QUOTES: Record<string, string> = { '"': '"', '“': '”', '„': '“', '‘': '’', '`': '`', "'": "'" };
const WORD = /[\p{L}\p{N}]+/gu;

/** The end of the JSON value starting at i ({ or [), or -1. Strings are skipped so that brackets inside them count not. */
function jsonEnd(text: string, i: number): number {
  let depth = 0;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (c === '"') {
      for (j++; j < text.length && text[j] !== '"'; j++) if (text[j] === '\\') j++;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return j + 1;
    }
  }
  return -1;
}

/**
 * A chat prompt often writes line breaks as \n inside quotes ("name,age\nAnn,31"): those become real ones, unless the
 * string has real line breaks already or backslashes that are clearly something else (C:\\new, \\d).
 */
function unescape(s: string): string {
  if (s.includes('\n') || !/\\[nt]/.test(s) || /^[A-Za-z]:\\|\\\\/.test(s)) return s;
  return s.replace(/\\n/g, '\n').replace(/\\t/g, '\t').replace(/\\r/g, '\r');
}

type Raw = Omit<Candidate, 'before' | 'after' | 'run'>;

/** JSON, code fences and quoted strings, scanned left to right so that the quotes inside JSON stay JSON. */
function scanDelimited(text: string): Raw[] {
  const out: Raw[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (text.startsWith('```', i)) {
      const close = text.indexOf('```', i + 3);
      if (close > 0) {
        const body = text
          .slice(i + 3, close)
          .replace(/^[\w-]*\n/, '')
          .replace(/\n$/, '');
        out.push({ kind: 'quoted', value: body, raw: body, start: i, end: close + 3 });
        i = close + 2;
        continue;
      }
    }
    if (c === '{' || c === '[') {
      const end = jsonEnd(text, i);
      if (end > 0) {
        try {
          out.push({ kind: 'json', value: JSON.parse(text.slice(i, end)), raw: text.slice(i, end), start: i, end });
          i = end - 1;
          continue;
        } catch {
          // not JSON (a regex class, a Markdown link): read on
        }
      }
    }
    const closer = QUOTES[c];
    if (!closer) continue;
    // A single quote opens only after a non-letter ("it's" is a word) and closes only before one.
    if ((c === "'" || c === '‘') && /[\p{L}\p{N}]/u.test(text[i - 1] ?? '')) continue;
    let close = text.indexOf(closer, i + 1);
    if (c === "'") while (close > 0 && /[\p{L}\p{N}]/u.test(text[close + 1] ?? '')) close = text.indexOf("'", close + 1);
    if (c === '“' && close < 0) close = text.indexOf('"', i + 1);
    if (close < 0 || close === i + 1) continue;
    const raw = text.slice(i + 1, close);
    out.push({ kind: 'quoted', value: unescape(raw), raw, start: i, end: close + 1 });
    i = close;
  }
  return out;
}

const PATTERNS: [CandidateKind, RegExp][] = [
  ['url', /\b(?:https?|ftp|wss?):\/\/[^\s<>"'“”`]+/giu],
  ['email', /[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+/gu],
  ['uuid', /\b[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}\b/giu],
  ['datetime', /\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\d:])/gu],
  ['duration', /(?<![\p{L}\p{N}])-?P(?=\d|T\d)(?:\d+Y)?(?:\d+M)?(?:\d+W)?(?:\d+D)?(?:T(?:\d+H)?(?:\d+M)?(?:\d+(?:\.\d+)?S)?)?(?![\p{L}\p{N}])/gu],
];

/** Unquoted code-like words: paths, file names, #hex colours, globs (report.pdf, /var/log, #1e90ff, src/**). */
const TOKEN = /(?<![^\s(])[^\s"'“”`,;()<>]{3,}/gu;
function isToken(raw: string): boolean {
  if (!/[\p{L}\p{N}]/u.test(raw) || /^(?:e\.g|i\.e|etc|vs)$/i.test(raw)) return false;
  if (/#[\p{L}\p{N}]|[\\*$]|\p{L}\.\p{L}/u.test(raw)) return true;
  return /^(?:\/|\.\/|~\/)/.test(raw) || (raw.match(/\//g)?.length ?? 0) >= 2;
}

/** A number not glued to a word ("SHA-256", "p99", "v7") nor part of a time ("10:30"); thousands commas allowed. */
const NUMBER = /(?<![\p{L}\p{N}_.:/#][-]?)(?:-(?=\d))?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?![\p{N}]|:\d|\.\d)/gu;
/** Words that follow a number without being its unit ("3 and 4", "5 of them"). */
const NOT_UNITS = new Set('a an and as at by for from in into is it of on or per than that the then to was were with'.split(' '));
const UNIT = /^(?:[ \t]?-?[ \t]?)(°[ \t]?[CFK]\b|%|[\p{L}µ]+(?:\/[\p{L}]+)?)/u;

function blank(text: string, from: number, to: number): string {
  return text.slice(0, from) + ' '.repeat(to - from) + text.slice(to);
}

/** Candidates found by regular expressions in the text left after the delimited ones. */
function scanPatterns(masked: string): { found: Raw[]; masked: string } {
  const found: Raw[] = [];
  for (const [kind, re] of PATTERNS) {
    for (const m of masked.matchAll(re)) {
      let raw = m[0];
      if (kind === 'url' || kind === 'email') raw = raw.replace(/[.,;:!?)\]]+$/, '');
      found.push({ kind, value: raw, raw, start: m.index, end: m.index + raw.length });
      masked = blank(masked, m.index, m.index + raw.length);
    }
  }
  for (const m of masked.matchAll(TOKEN)) {
    const raw = m[0].replace(/[.,:;!?]+$/, '');
    if (!isToken(raw)) continue;
    found.push({ kind: 'token', value: raw, raw, start: m.index, end: m.index + raw.length });
    masked = blank(masked, m.index, m.index + raw.length);
  }
  for (const m of masked.matchAll(NUMBER)) {
    const value = Number(m[0].replace(/,/g, ''));
    if (!Number.isFinite(value)) continue;
    const end = m.index + m[0].length;
    let unit = UNIT.exec(masked.slice(end));
    if (unit && NOT_UNITS.has(unit[1].toLowerCase())) unit = null;
    const rawEnd = unit ? end + unit[0].length : end;
    found.push({ kind: 'number', value, raw: masked.slice(m.index, rawEnd), start: m.index, end, unit: unit?.[1] });
  }
  return { found, masked };
}

/** "…: <payload>" — the text after the first colon that ends a phrase, when it is more than the values in it. */
function findPayload(text: string, masked: string): Raw | undefined {
  const m = /:\s+/u.exec(masked);
  if (!m) return undefined;
  const start = m.index + m[0].length;
  const rest = masked.slice(start);
  if (!/[\p{L}]/u.test(rest)) return undefined;
  const value = text.slice(start).trim();
  return value ? { kind: 'payload', value, raw: value, start, end: text.length } : undefined;
}

const SEPARATOR = /^(?:\s|,|;|\band\b|\bor\b|&)*$/iu;

export function analyzePrompt(text: string): PromptAnalysis {
  const delimited = scanDelimited(text);
  let masked = text;
  for (const c of delimited) masked = blank(masked, c.start, c.end);
  const patterns = scanPatterns(masked);
  const raws = [...delimited, ...patterns.found].sort((a, b) => a.start - b.start);
  const words: Word[] = [...patterns.masked.matchAll(WORD)].map((m) => ({ word: m[0].toLowerCase(), start: m.index }));
  const payload = findPayload(text, patterns.masked);
  const candidates: Candidate[] = [];
  let run = 0;
  raws.forEach((c, i) => {
    const prevEnd = i > 0 ? raws[i - 1].end : 0;
    const nextStart = i + 1 < raws.length ? raws[i + 1].start : text.length;
    const before = words.filter((w) => w.start >= prevEnd && w.start < c.start).map((w) => w.word);
    const after = words
      .filter((w) => w.start >= c.end && w.start < nextStart)
      .slice(0, 3)
      .map((w) => w.word);
    const prev = candidates[i - 1];
    const sameList = prev && prev.kind === c.kind && SEPARATOR.test(text.slice(prev.end, c.start));
    if (!sameList) run++;
    candidates.push({ ...c, before, after, run });
  });
  if (payload)
    candidates.push({
      ...payload,
      before: words
        .filter((w) => w.start < payload.start)
        .slice(-6)
        .map((w) => w.word),
      after: [],
      run: ++run,
    });
  return { text, candidates, words, masked: patterns.masked };
}

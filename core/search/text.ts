/**
 * Text analysis shared by the in-process engines: one tokenizer for documents and queries, so that a camelCase tool
 * name (`csvToJson`, `sha256Hash`), a scoped package name (`@toolshed-examples/text-tools`) and a user's words
 * ("convert csv to json", "csvtojson") all end up as the same terms.
 */
import { synonymGroups } from './analyzer.js';

/** Words that carry no meaning in a tool query ("how do I hash a string"). Removed from documents and queries alike. */
export const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a an and any are as at be by can do does for from get give how i in into is it its me my of on or that the ' +
    'their them this to use using via what when which will with you your'
  ).split(' '),
);

const WORD = /[\p{L}\p{N}]+/gu;
const COMPOUND = /[\p{L}\p{N}]+(?:[-_][\p{L}\p{N}]+)*/gu;
/** Boundaries inside a word: lower→Upper ("csvTo"), UPPER→Upper+lower ("JSONParse"). Digits stay with letters. */
const CAMEL = /(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u;
const LETTER_DIGIT = /(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u;

/**
 * Light suffix stripping (plural s, -es, -ies, -ing, -ed, final e), enough for "hashing"/"hashes"/"hash" and
 * "encoded"/"encoding"/"encode" to meet. Deliberately conservative: a stem is never shorter than 3 letters.
 */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || /\d/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) return w.slice(0, -3) + 'y';
  if (w.endsWith('sses') || w.endsWith('xes') || w.endsWith('ches') || w.endsWith('shes')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  else if (w.endsWith('ing') && w.length >= 7) w = undouble(w.slice(0, -3));
  else if (w.endsWith('ed') && w.length >= 6) w = undouble(w.slice(0, -2));
  if (w.endsWith('e') && w.length >= 5) w = w.slice(0, -1);
  return w;
}

function undouble(w: string): string {
  const n = w.length;
  return n >= 4 && w[n - 1] === w[n - 2] && !/[lsz]/.test(w[n - 1]) ? w.slice(0, -1) : w;
}

type Emit = (term: string, raw: string, inLastWord: boolean) => void;

/**
 * Calls emit for each term of a text: words split on punctuation, camelCase and letter/digit runs; a compound
 * joined by - or _ ("SHA-256", "snake_case", "e-mail") also yields its glued form ("sha256", "snakecase", "email").
 */
function analyze(text: string, emit: Emit): void {
  const compounds = text.match(COMPOUND) ?? [];
  for (let c = 0; c < compounds.length; c++) {
    const last = c === compounds.length - 1;
    const words = compounds[c].split(/[-_]/);
    if (words.length > 1) emitWord(words.join('').toLowerCase(), false, last, emit);
    for (const word of words) {
      const parts = word.split(CAMEL);
      if (parts.length > 1) emitWord(word.toLowerCase(), false, last, emit);
      for (const part of parts) {
        emitWord(part.toLowerCase(), true, last, emit);
        const pieces = part.split(LETTER_DIGIT);
        if (pieces.length > 1) for (const piece of pieces) emitWord(piece.toLowerCase(), true, last, emit);
      }
    }
  }
}

function emitWord(raw: string, dropStop: boolean, last: boolean, emit: Emit): void {
  if (!(dropStop && STOP_WORDS.has(raw))) emit(stem(raw), raw, last);
}

/** Terms of a text, lowercased and stemmed, stop words dropped. */
export function tokenize(text: string, out: string[] = []): string[] {
  analyze(text, (term) => out.push(term));
  return out;
}

/**
 * Terms of a name-like field: as tokenize(), plus the whole name lowercased without punctuation, so "csvtojson"
 * finds `csvToJson` and "texttools" finds `text-tools`.
 */
export function tokenizeName(name: string, out: string[] = []): string[] {
  tokenize(name, out);
  const joined = (name.match(WORD) ?? []).join('').toLowerCase();
  if (joined.length > 0 && !out.includes(joined) && !out.includes(stem(joined))) out.push(joined);
  return out;
}

export interface QueryTerm {
  term: string;
  /** The lowercased word before stemming: prefix matching must see "generati", not a stem of it. */
  raw: string;
  /** Whether it comes from the query's last word, the one a user may still be typing. */
  inLastWord: boolean;
}

/** Query terms in order, duplicates dropped. */
export function queryTerms(q: string): QueryTerm[] {
  const seen = new Set<string>();
  const terms: QueryTerm[] = [];
  analyze(q, (term, raw, inLastWord) => {
    if (seen.has(term)) return;
    seen.add(term);
    terms.push({ term, raw, inLastWord });
  });
  return terms;
}

/**
 * Runs of 2–3 consecutive query words glued together ("json to csv" → "jsonto", "jsontocsv", "tocsv"), so a query
 * written as separate words also meets a camelCase name as a whole, in the order the user typed them.
 */
export function queryJoins(q: string): string[] {
  const words = (q.match(WORD) ?? []).map((w) => w.toLowerCase());
  const joins: string[] = [];
  for (let n = 2; n <= 3; n++) {
    for (let i = 0; i + n <= words.length; i++) joins.push(words.slice(i, i + n).join(''));
  }
  return joins;
}

let synonymIndex: Map<string, string[]> | undefined;

/** Other stemmed terms that mean the same as a stemmed term (empty when it has none). */
export function synonymsOf(term: string): string[] {
  if (!synonymIndex) {
    synonymIndex = new Map();
    for (const group of synonymGroups()) {
      const stems = group.map(stem);
      for (const s of stems)
        synonymIndex.set(
          s,
          stems.filter((o) => o !== s),
        );
    }
  }
  return synonymIndex.get(term) ?? [];
}

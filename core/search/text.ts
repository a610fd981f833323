/**
 * Text analysis shared by the in-process engines: one tokenizer for documents and queries, so that a camelCase tool
 * name (`csvToJson`, `sha256Hash`), a scoped package name (`@toolshed-examples/text-tools`) and a user's words
 * ("convert csv to json", "csvtojson") all end up as the same terms.
 */

/** Words that carry no meaning in a tool query ("how do I hash a string"). Removed from documents and queries alike. */
const STOP_WORDS = new Set(
  ('a an and any are as at be by can do does for from get give how i in into is it its me my of on or that the ' +
    'their them this to use using via what when which will with you your').split(' '),
);

const WORD = /[\p{L}\p{N}]+/gu;
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

/** Calls emit(term, raw) for each term of a text: words split on punctuation, camelCase and letter/digit runs. */
function analyze(text: string, emit: (term: string, raw: string) => void): void {
  for (const word of text.match(WORD) ?? []) {
    const parts = word.split(CAMEL);
    if (parts.length > 1) emitWord(word.toLowerCase(), false, emit);
    for (const part of parts) {
      emitWord(part.toLowerCase(), true, emit);
      const pieces = part.split(LETTER_DIGIT);
      if (pieces.length > 1) for (const piece of pieces) emitWord(piece.toLowerCase(), true, emit);
    }
  }
}

function emitWord(raw: string, dropStop: boolean, emit: (term: string, raw: string) => void): void {
  if (!(dropStop && STOP_WORDS.has(raw))) emit(stem(raw), raw);
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

/**
 * Query terms in order, each with the raw lowercased word it came from (prefix matching must see "generati", not a
 * stem of it). Duplicates are dropped.
 */
export function queryTerms(q: string): { term: string; raw: string }[] {
  const seen = new Set<string>();
  const terms: { term: string; raw: string }[] = [];
  analyze(q, (term, raw) => {
    if (seen.has(term)) return;
    seen.add(term);
    terms.push({ term, raw });
  });
  return terms;
}

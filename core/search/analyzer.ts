/**
 * The embedded search engine's analyzer, shared by its documents and queries: words split on punctuation, camelCase
 * and letter/digit runs (plural acronyms kept whole: "IDs" → id, "getURLs" → get + url), glued forms of compounds,
 * a stop-word list for conversational English, Porter stemming (the `stemmer` package). Queries additionally carry
 * per-term counts, whether the last word may still be being typed, and glued runs of consecutive words ("cancel a
 * timed switch" → "canceltimedswitch").
 *
 * The only analyzer: registry search, an MCP endpoint's search_tools, the offline agent's tool choice and its
 * argument filling, judge and scenarios all read text through it.
 */
import { stemmer } from 'stemmer';
import { withoutInstruction } from './instruction.js';

/**
 * Function words and the request phrasing of conversational queries ("can you help me find...", "we need our...",
 * "I'd like to know..."), and the words for what every document here is (tool, plugin, app: "a tool to convert
 * csv"). Removed from documents and queries alike, except when written in capitals ("US", "IT").
 */
export const SEARCH_STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again against all also am an and any anyone anything are as ask at be because been before ' +
    'being below between both but by can cannot could d did do does doing done during each either else even ever ' +
    'every few for from further get gets getting give gives go going got had has have having he help helps her here ' +
    'hers herself hi hello him himself his how however i if in into is it its itself just kind know let like ll m ' +
    'may me might mine more most much must my myself need needs no nor not of off on once one only or other others ' +
    'our ours ourselves out over own please possible re really s same shall she should show so some someone ' +
    'something such sure t tell than thank thanks that the their theirs them themselves then there these they thing ' +
    'things this those though through to too try under until up upon us use used using ve very via want wanted wants ' +
    'was way we well were what whats when where whether which while who whom whose why will wish with within without ' +
    'would yes yet you your yours yourself yourselves tool tools plugin plugins app apps'
  ).split(' '),
);

const COMPOUND = /[\p{L}\p{N}]+(?:[-_'’][\p{L}\p{N}]+)*/gu;
/** Boundaries inside a word: lower→Upper ("csvTo"), UPPER→Upper+lower ("JSONParse"). Digits stay with letters. */
const CAMEL = /(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u;
const LETTER_DIGIT = /(?<=\p{L})(?=\p{N})|(?<=\p{N})(?=\p{L})/u;
/** A plural acronym inside a word: "IDs", "URLsFrom", "APIs". The s is dropped before camelCase splitting. */
const PLURAL_ACRONYM = /(\p{Lu}{2,})s(?=\p{Lu}|$)/gu;
const ALL_CAPS = /^\p{Lu}{2,}$/u;

/** Plural-looking words whose "singular" would be another word ("news" is no plural of "new"). */
const STEM_EXCEPTIONS: ReadonlyMap<string, string> = new Map([
  ['news', 'news'],
  ['series', 'series'],
  ['species', 'species'],
]);

const stemCache = new Map<string, string>();

/**
 * Porter stem of one lowercased word (`stemmer`; words of 1–2 letters, or with anything but a–z, unchanged; the
 * exceptions above kept as they are), memoised: documents and queries repeat words.
 */
export function searchStem(word: string): string {
  let s = stemCache.get(word);
  if (s === undefined) {
    s = word.length <= 2 || !/^[a-z]+$/.test(word) ? word : (STEM_EXCEPTIONS.get(word) ?? stemmer(word));
    if (stemCache.size < 100_000) stemCache.set(word, s);
  }
  return s;
}

/** One analysed word: its stem, the lowercased word, and its index among the text's words. */
type Emit = (term: string, raw: string, word: number) => void;

function isStop(original: string, lower: string): boolean {
  return SEARCH_STOP_WORDS.has(lower) && !ALL_CAPS.test(original);
}

/**
 * Calls emit for each term of a text. A compound joined by - or _ ("SHA-256", "snake_case") and a camelCase word
 * ("csvToJson") also yield their glued form ("sha256", "snakecase", "csvtojson").
 */
function analyze(text: string, emit: Emit): number {
  const compounds = text.match(COMPOUND) ?? [];
  let word = 0;
  for (const compound of compounds) {
    if (/['’]/.test(compound)) {
      // Contractions and possessives: "what's" → what, "user's" → user; the fragment after the quote is dropped.
      const head = compound.split(/['’]/)[0];
      if (head) word = analyzeCompound(head, word, emit);
      continue;
    }
    word = analyzeCompound(compound, word, emit);
  }
  return word;
}

function analyzeCompound(compound: string, word: number, emit: Emit): number {
  const words = compound.split(/[-_]/).filter(Boolean);
  if (words.length > 1) {
    const glued = words.join('').replace(PLURAL_ACRONYM, '$1').toLowerCase();
    emit(searchStem(glued), glued, word);
  }
  for (const w of words) {
    const singular = w.replace(PLURAL_ACRONYM, '$1');
    const parts = singular.split(CAMEL);
    if (parts.length > 1) {
      const lower = singular.toLowerCase();
      emit(searchStem(lower), lower, word);
    }
    for (const part of parts) {
      const lower = part.toLowerCase();
      if (!isStop(part, lower)) emit(searchStem(lower), lower, word);
      const pieces = part.split(LETTER_DIGIT);
      if (pieces.length > 1) {
        for (const piece of pieces) {
          const p = piece.toLowerCase();
          if (!isStop(piece, p)) emit(searchStem(p), p, word);
        }
      }
      word++;
    }
  }
  return word;
}

/** Words of a text, lowercased and unstemmed, stop words dropped (the glued forms of compounds included). */
export function textWords(text: string, out: string[] = []): string[] {
  analyze(text, (_term, raw) => out.push(raw));
  return out;
}

/** Terms of a text, lowercased and stemmed, stop words dropped. */
export function textTerms(text: string, out: string[] = []): string[] {
  analyze(text, (term) => out.push(term));
  return out;
}

/**
 * Terms of a name-like field: as textTerms(), plus the whole name lowercased without punctuation, so "csvtojson"
 * finds `csvToJson` and "texttools" finds `text-tools`.
 */
export function nameTerms(name: string, out: string[] = []): string[] {
  textTerms(name, out);
  const joined = (name.match(/[\p{L}\p{N}]+/gu) ?? []).join('').replace(PLURAL_ACRONYM, '$1').toLowerCase();
  if (joined.length > 0 && !out.includes(joined) && !out.includes(searchStem(joined))) out.push(joined);
  return out;
}

/** The words inside a camelCase name, for engines whose own tokenizer keeps `csvToJson` whole: "csv to json". */
export function nameWords(name: string): string {
  return (name.match(/[\p{L}\p{N}]+/gu) ?? [])
    .flatMap((w) => w.split(CAMEL))
    .join(' ')
    .toLowerCase();
}

/**
 * Adjacent word pairs of a text, stop words skipped, each as "stem1 stem2" (a space never occurs in a word term):
 * "the air quality forecast" → "air qualiti", "qualiti forecast". Indexed as their own field, so a document that
 * has the query's words next to each other ranks above one that has them apart.
 */
export function pairTerms(text: string, max = Infinity, out: string[] = []): string[] {
  let prev: string | undefined;
  for (const compound of text.match(COMPOUND) ?? []) {
    for (const w of compound.split(/[-_]/)) {
      if (!w) continue;
      if (/['’]/.test(w)) {
        prev = undefined;
        continue;
      }
      for (const part of w.replace(PLURAL_ACRONYM, '$1').split(CAMEL)) {
        const lower = part.toLowerCase();
        if (isStop(part, lower)) continue;
        const term = searchStem(lower);
        if (prev !== undefined && prev !== term) {
          out.push(`${prev} ${term}`);
          if (out.length >= max) return out;
        }
        prev = term;
      }
    }
  }
  return out;
}

/** Text of an input schema's parameters: each property's name and description, nested objects and array items. */
export function schemaText(schema: unknown, out: string[] = [], depth = 0): string {
  if (schema && typeof schema === 'object' && depth < 4) {
    const s = schema as { properties?: Record<string, unknown>; items?: unknown };
    if (s.properties && typeof s.properties === 'object') {
      for (const [name, prop] of Object.entries(s.properties)) {
        out.push(name);
        const p = prop as { description?: unknown; title?: unknown; enum?: unknown } | null;
        if (typeof p?.title === 'string') out.push(p.title);
        if (typeof p?.description === 'string') out.push(p.description);
        schemaText(prop, out, depth + 1);
      }
    }
    if (s.items) schemaText(s.items, out, depth + 1);
  }
  return depth === 0 ? out.join('. ').slice(0, 4000) : '';
}

export interface QueryTerm {
  term: string;
  /** The lowercased word before stemming: prefix matching must see "generati", not a stem of it. */
  raw: string;
  /** How often the term occurs in the query. */
  count: number;
  /** Index of the word it comes from (0-based), for telling the opening of a long query from the rest. */
  word: number;
  /** Whether it comes from the query's last word and the query does not end in a space or punctuation. */
  open: boolean;
}

export interface ParsedQuery {
  terms: QueryTerm[];
  /** Glued runs of 2–4 consecutive words, with how many words each covers. */
  joins: { term: string; words: number }[];
  /** Number of words in the query (stop words included). */
  words: number;
  /** The query text analysed (cut to MAX_QUERY_CHARS). */
  text: string;
}

/** At most this many distinct terms are scored; longer queries keep their rarest ones (see Ranker). */
export const MAX_QUERY_CHARS = 2000;

export function parseQuery(query: string): ParsedQuery {
  const q = withoutInstruction(query);
  const text = q.length > MAX_QUERY_CHARS ? q.slice(0, MAX_QUERY_CHARS) : q;
  const open = /[\p{L}\p{N}]$/u.test(text);
  const byTerm = new Map<string, QueryTerm>();
  const words = analyze(text, (term, raw, word) => {
    const t = byTerm.get(term);
    if (t) t.count++;
    else byTerm.set(term, { term, raw, count: 1, word, open: false });
  });
  const terms = [...byTerm.values()];
  if (open) for (const t of terms) t.open = t.word === words - 1;
  return { terms, joins: queryJoins(text), words, text };
}

/**
 * Runs of 2–4 consecutive query words glued together, over the words as typed and over the words without stop
 * words: "json to csv" → "jsontocsv", "cancel a timed switch" → "canceltimedswitch", so a query written as
 * separate words also meets a camelCase name as a whole. Limited to the first 64 words.
 */
export function queryJoins(q: string): { term: string; words: number }[] {
  const all: { w: string; stop: boolean }[] = [];
  for (const compound of (q.match(COMPOUND) ?? []).slice(0, 64)) {
    for (const w of compound.split(/[-_'’]/)) {
      if (!w) continue;
      const singular = w.replace(PLURAL_ACRONYM, '$1');
      all.push({ w: singular.toLowerCase(), stop: isStop(singular, singular.toLowerCase()) });
    }
  }
  const seen = new Map<string, number>();
  const add = (ws: string[]) => {
    for (let n = 2; n <= 4; n++) {
      for (let i = 0; i + n <= ws.length; i++) {
        const term = ws.slice(i, i + n).join('');
        if ((seen.get(term) ?? 0) < n) seen.set(term, n);
      }
    }
  };
  add(all.map((x) => x.w));
  add(all.filter((x) => !x.stop).map((x) => x.w));
  return [...seen].map(([term, words]) => ({ term, words }));
}

/**
 * Words that mean the same in a tool query. Small on purpose: only verbs and nouns that tool descriptions use
 * interchangeably ("strip html tags" → "drops ... tags", "sha256 of a string" → "... of a text").
 */
const SYNONYM_GROUPS: readonly (readonly string[])[] = [
  ['remove', 'strip', 'delete', 'drop'],
  ['convert', 'transform', 'turn'],
  ['compare', 'diff'],
  ['check', 'validate', 'verify'],
  ['create', 'generate', 'make'],
  ['text', 'string'],
  ['hash', 'digest', 'checksum'],
  ['extract', 'scrape'],
  ['email', 'mail'],
];

/** The synonym groups as plain words, for engines with their own synonym setting (Meilisearch). */
export function synonymGroups(): readonly (readonly string[])[] {
  return SYNONYM_GROUPS;
}

let synonymIndex: Map<string, string[]> | undefined;

/** Other stems that mean the same as a stem (the synonym groups above, stemmed with this analyzer). */
export function searchSynonymsOf(term: string): string[] {
  if (!synonymIndex) {
    synonymIndex = new Map();
    for (const group of synonymGroups()) {
      const stems = group.map(searchStem);
      for (const s of stems)
        synonymIndex.set(
          s,
          stems.filter((o) => o !== s),
        );
    }
  }
  return synonymIndex.get(term) ?? [];
}

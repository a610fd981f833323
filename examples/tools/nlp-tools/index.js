// @toolshed-examples/nlp-tools — offline NLP helpers for AI/ML pipelines: keyword extraction, text
// similarity, BM25 document ranking, chunking text for embeddings and token estimates. No dependencies.

// ---------------------------------------------------------------------------
// Input checking shared by the tools in this file. Self-contained on purpose:
// this package has no dependencies. `tool()` returns a plain Vercel AI SDK
// style tool object ({ description, inputSchema, execute }) whose execute
// checks its params against inputSchema (and fills defaults) before running.
// ---------------------------------------------------------------------------
const kindOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);
const joinPath = (path, key) => (path ? `${path}${typeof key === 'number' ? `[${key}]` : `.${key}`}` : String(key));

function checkInput(schema, value, path) {
  const where = path ? `"${path}"` : 'Input';
  if (schema.type !== undefined) {
    const types = [].concat(schema.type);
    const kind = kindOf(value);
    if (!types.some((t) => t === kind || (t === 'number' && kind === 'integer'))) {
      throw new Error(`${where} must be of type ${types.join(' or ')}, but got ${kind}`);
    }
  }
  if (schema.enum && !schema.enum.includes(value)) {
    throw new Error(`${where} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}; got ${JSON.stringify(value)}`);
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) throw new Error(`${where} must be at least ${schema.minLength} character(s) long`);
    if (schema.maxLength !== undefined && length > schema.maxLength) throw new Error(`${where} must be at most ${schema.maxLength} characters long`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) throw new Error(`${where} must match the pattern ${schema.pattern}`);
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`${where} must be a finite number`);
    if (schema.minimum !== undefined && value < schema.minimum) throw new Error(`${where} must be >= ${schema.minimum}; got ${value}`);
    if (schema.maximum !== undefined && value > schema.maximum) throw new Error(`${where} must be <= ${schema.maximum}; got ${value}`);
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum)
      throw new Error(`${where} must be > ${schema.exclusiveMinimum}; got ${value}`);
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum)
      throw new Error(`${where} must be < ${schema.exclusiveMaximum}; got ${value}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) throw new Error(`${where} must contain at least ${schema.minItems} item(s)`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) throw new Error(`${where} must contain at most ${schema.maxItems} items`);
    if (schema.items) value.forEach((item, i) => checkInput(schema.items, item, joinPath(path, i)));
  }
  if (kindOf(value) === 'object') {
    const props = schema.properties ?? {};
    for (const key of schema.required ?? []) {
      if (value[key] === undefined) throw new Error(`Missing required parameter "${joinPath(path, key)}"`);
    }
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined) continue;
      if (props[key]) checkInput(props[key], item, joinPath(path, key));
      else if (schema.additionalProperties === false) {
        throw new Error(
          `Unknown parameter "${joinPath(path, key)}"; expected ${
            Object.keys(props)
              .map((k) => `"${k}"`)
              .join(', ') || 'none'
          }`,
        );
      } else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        checkInput(schema.additionalProperties, item, joinPath(path, key));
      }
    }
  }
}

function tool({ description, inputSchema, execute }) {
  return {
    description,
    inputSchema,
    async execute(params, options) {
      const input = params === undefined || params === null ? {} : params;
      checkInput(inputSchema, input, '');
      const args = { ...input };
      for (const [key, prop] of Object.entries(inputSchema.properties ?? {})) {
        if (args[key] === undefined && prop.default !== undefined) args[key] = structuredClone(prop.default);
      }
      return execute(args, options);
    },
  };
}
// ---------------------------------------------------------------------------

const STOPWORDS = new Set(
  `a about above after again against all also am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each either else etc even ever
every few for from further get gets got had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself him
himself his how how's however i i'd i'll i'm i've if in into is isn't it it's its itself just let's like made make many may me might
more most much must mustn't my myself neither no nor not now of off often on once one only or other ought our ours ourselves out over
own per perhaps quite rather really same say says shall shan't she she'd she'll she's should shouldn't since so some still such than
that that's the their theirs them themselves then there there's therefore these they they'd they'll they're they've this those though
through thus to too under until up upon us use used using very via was wasn't we we'd we'll we're we've well were weren't what what's
when when's where where's whether which while who who's whom whose why why's will with within without won't would wouldn't yet you
you'd you'll you're you've your yours yourself yourselves`.split(/\s+/),
);

// Regex-based segmentation (Intl.Segmenter is quadratic on long inputs in some Node versions).
const CJK = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}';
const WORD_RE = new RegExp(`[${CJK}]|(?:(?![${CJK}])[\\p{L}\\p{N}\\p{M}])+(?:['’](?:(?![${CJK}])[\\p{L}\\p{N}\\p{M}])+)*`, 'gu');
const ABBREVIATIONS = new Set(['mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'vs', 'etc', 'e.g', 'i.e', 'inc', 'ltd', 'co', 'no', 'fig', 'approx']);
/** Sentence spans covering the whole text (each span includes its trailing whitespace). */
function sentenceSpans(text) {
  const spans = [];
  const re = /[.!?。！？…]+["'”’)\]]*(?=\s|$)\s*|\n[ \t]*\n\s*/gu;
  let start = 0;
  let m;
  while ((m = re.exec(text))) {
    if (m[0].trim() === '.') {
      const before = /([\p{L}.]+)$/u.exec(text.slice(Math.max(0, m.index - 12), m.index));
      if (before && ABBREVIATIONS.has(before[1].toLowerCase())) continue;
    }
    const end = m.index + m[0].length;
    if (end > start) spans.push({ start, end });
    start = end;
  }
  if (start < text.length) spans.push({ start, end: text.length });
  return spans;
}

/** A light English suffix stemmer (plural, -ing, -ed, -ly) — enough to merge word variants. */
function stem(w) {
  if (w.length <= 3 || /\d/.test(w)) return w;
  let s = w;
  if (s.endsWith("'s")) s = s.slice(0, -2);
  if (s.endsWith('ies') && s.length > 4) s = s.slice(0, -3) + 'y';
  else if (s.endsWith('sses')) s = s.slice(0, -2);
  else if (/[^su]s$/.test(s) && !s.endsWith('ss') && !/(is|us|ous)$/.test(s)) s = s.slice(0, -1);
  if (s.endsWith('ing') && s.length > 5) s = s.slice(0, -3);
  else if (s.endsWith('ed') && s.length > 4) s = s.slice(0, -2);
  else if (s.endsWith('ly') && s.length > 4) s = s.slice(0, -2);
  if (/([^aeiouslz])\1$/.test(s)) s = s.slice(0, -1);
  return s;
}

function tokens(text) {
  const out = [];
  for (const m of text.matchAll(WORD_RE)) out.push({ word: m[0].toLowerCase().replace(/’/g, "'"), index: m.index });
  return out;
}
function contentTerms(text, minLength = 2) {
  return tokens(text)
    .map((t) => t.word)
    .filter((w) => !STOPWORDS.has(w) && [...w].length >= minLength && !/^\d+$/.test(w))
    .map(stem);
}

export const extractKeywords = tool({
  description:
    'Extracts the main keywords and key phrases from a text using term frequency (with stop-word removal and stemming) or the RAKE algorithm, for tagging, SEO and topic detection.',
  inputSchema: {
    type: 'object',
    properties: {
      text: { type: 'string', description: 'The text to analyse.', minLength: 1, maxLength: 1000000 },
      method: {
        type: 'string',
        description: '"frequency" ranks single words and repeated two-word phrases; "rake" ranks multi-word key phrases (Rapid Automatic Keyword Extraction).',
        enum: ['frequency', 'rake'],
        default: 'frequency',
      },
      limit: { type: 'integer', description: 'Maximum number of keywords to return.', minimum: 1, maximum: 100, default: 10 },
      minLength: { type: 'integer', description: 'Ignore words shorter than this many characters.', minimum: 1, maximum: 20, default: 3 },
    },
    required: ['text'],
    additionalProperties: false,
  },
  async execute({ text, method, limit, minLength }) {
    const toks = tokens(text);
    if (toks.length === 0) throw new Error('The text contains no words');
    const keep = (w) => !STOPWORDS.has(w) && [...w].length >= minLength && !/^\d+$/.test(w);
    if (method === 'rake') {
      // candidate phrases: maximal runs of content words not broken by stop words or punctuation
      const phrases = [];
      let cur = [];
      let lastEnd = 0;
      for (const t of toks) {
        const between = text.slice(lastEnd, t.index);
        if (/[.,;:!?()[\]{}"\n–—]/.test(between) || !keep(t.word)) {
          if (cur.length) phrases.push(cur);
          cur = [];
        }
        if (keep(t.word)) cur.push(t.word);
        lastEnd = t.index + t.word.length;
      }
      if (cur.length) phrases.push(cur);
      const freq = new Map();
      const degree = new Map();
      for (const p of phrases)
        for (const w of p) {
          freq.set(w, (freq.get(w) ?? 0) + 1);
          degree.set(w, (degree.get(w) ?? 0) + p.length);
        }
      const scored = new Map();
      phrases.forEach((p, order) => {
        const key = p.join(' ');
        const score = p.reduce((s, w) => s + degree.get(w) / freq.get(w), 0);
        const prev = scored.get(key);
        if (prev) prev.count++;
        else scored.set(key, { term: key, score: Math.round(score * 100) / 100, count: 1, order });
      });
      const keywords = [...scored.values()]
        .sort((a, b) => b.score - a.score || b.count - a.count || a.order - b.order)
        .slice(0, limit)
        .map(({ order, ...k }) => k);
      return { method, keywords, totalWords: toks.length };
    }
    const content = toks.filter((t) => keep(t.word));
    const byStem = new Map();
    content.forEach((t, order) => {
      const s = stem(t.word);
      const e = byStem.get(s) ?? { forms: new Map(), count: 0, order };
      e.count++;
      e.forms.set(t.word, (e.forms.get(t.word) ?? 0) + 1);
      byStem.set(s, e);
    });
    const bigrams = new Map();
    for (let i = 1; i < toks.length; i++) {
      const a = toks[i - 1];
      const b = toks[i];
      if (!keep(a.word) || !keep(b.word)) continue;
      if (/[.,;:!?()\n]/.test(text.slice(a.index + a.word.length, b.index))) continue;
      const key = `${a.word} ${b.word}`;
      const e = bigrams.get(key) ?? { count: 0, order: i };
      e.count++;
      bigrams.set(key, e);
    }
    const total = content.length || 1;
    const entries = [...byStem.values()].map((e) => ({
      term: [...e.forms.entries()].sort((x, y) => y[1] - x[1])[0][0],
      count: e.count,
      frequency: Math.round((e.count / total) * 10000) / 10000,
      order: e.order,
      weight: e.count,
    }));
    for (const [term, e] of bigrams)
      if (e.count >= 2) entries.push({ term, count: e.count, frequency: Math.round((e.count / total) * 10000) / 10000, order: e.order, weight: e.count * 1.5 });
    entries.sort((a, b) => b.weight - a.weight || a.order - b.order);
    return { method, keywords: entries.slice(0, limit).map(({ order, weight, ...k }) => k), totalWords: toks.length, contentWords: content.length };
  },
});

function trigrams(s) {
  const t = ` ${s.toLowerCase().replace(/\s+/g, ' ').trim()} `;
  const m = new Map();
  for (let i = 0; i < t.length - 2; i++) {
    const g = t.slice(i, i + 3);
    m.set(g, (m.get(g) ?? 0) + 1);
  }
  return m;
}
function cosine(a, b) {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (const [k, v] of a) {
    na += v * v;
    if (b.has(k)) dot += v * b.get(k);
  }
  for (const v of b.values()) nb += v * v;
  return na && nb ? dot / Math.sqrt(na * nb) : 0;
}
const counts = (arr) => arr.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map());

export const textSimilarity = tool({
  description:
    'Measures how similar two texts are (0 to 1) with cosine similarity of term-frequency vectors, Jaccard word overlap, or character trigrams for fuzzy matching, and lists shared terms.',
  inputSchema: {
    type: 'object',
    properties: {
      textA: { type: 'string', description: 'First text.', minLength: 1, maxLength: 500000 },
      textB: { type: 'string', description: 'Second text.', minLength: 1, maxLength: 500000 },
      method: {
        type: 'string',
        description: '"cosine" (bag of words), "jaccard" (set overlap of words) or "trigram" (character trigrams; good for short strings and typos).',
        enum: ['cosine', 'jaccard', 'trigram'],
        default: 'cosine',
      },
    },
    required: ['textA', 'textB'],
    additionalProperties: false,
  },
  async execute({ textA, textB, method }) {
    let similarity;
    let shared = [];
    if (method === 'trigram') {
      similarity = cosine(trigrams(textA), trigrams(textB));
    } else {
      let a = contentTerms(textA);
      let b = contentTerms(textB);
      if (a.length === 0 || b.length === 0) {
        a = tokens(textA).map((t) => stem(t.word));
        b = tokens(textB).map((t) => stem(t.word));
      }
      if (a.length === 0 || b.length === 0) throw new Error('Both texts must contain at least one word');
      const ca = counts(a);
      const cb = counts(b);
      if (method === 'cosine') similarity = cosine(ca, cb);
      else {
        const inter = [...ca.keys()].filter((k) => cb.has(k)).length;
        similarity = inter / new Set([...ca.keys(), ...cb.keys()]).size;
      }
      shared = [...ca.keys()]
        .filter((k) => cb.has(k))
        .sort((x, y) => Math.min(cb.get(y), ca.get(y)) - Math.min(cb.get(x), ca.get(x)))
        .slice(0, 20);
    }
    similarity = Math.round(similarity * 10000) / 10000;
    const interpretation =
      similarity >= 0.999
        ? 'identical'
        : similarity >= 0.8
          ? 'very similar'
          : similarity >= 0.5
            ? 'similar'
            : similarity >= 0.2
              ? 'somewhat related'
              : 'unrelated';
    return { similarity, method, interpretation, sharedTerms: shared };
  },
});

export const rankDocuments = tool({
  description:
    'Ranks a list of documents or passages by relevance to a search query with the BM25 algorithm (like a search engine), returning scores and matched terms; useful for retrieval and RAG.',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'The search query.', minLength: 1, maxLength: 2000 },
      documents: {
        type: 'array',
        description: 'The documents (plain strings) to rank.',
        items: { type: 'string', description: 'One document or passage.' },
        minItems: 1,
        maxItems: 5000,
      },
      limit: { type: 'integer', description: 'Return at most this many results.', minimum: 1, maximum: 1000, default: 10 },
      k1: { type: 'number', description: 'BM25 term-frequency saturation parameter.', minimum: 0, maximum: 3, default: 1.2 },
      b: { type: 'number', description: 'BM25 length normalisation parameter (0 = none, 1 = full).', minimum: 0, maximum: 1, default: 0.75 },
    },
    required: ['query', 'documents'],
    additionalProperties: false,
  },
  async execute({ query, documents, limit, k1, b }) {
    const q = [...new Set(contentTerms(query, 1))];
    if (q.length === 0) throw new Error('The query has no searchable words (only stop words or punctuation)');
    const docs = documents.map((d) => counts(contentTerms(d, 1)));
    const lens = docs.map((d) => [...d.values()].reduce((s, v) => s + v, 0));
    const avg = lens.reduce((s, v) => s + v, 0) / docs.length || 1;
    const N = docs.length;
    const idf = new Map(
      q.map((t) => {
        const n = docs.filter((d) => d.has(t)).length;
        return [t, Math.log(1 + (N - n + 0.5) / (n + 0.5))];
      }),
    );
    const results = docs.map((d, index) => {
      let score = 0;
      const matched = [];
      for (const t of q) {
        const f = d.get(t) ?? 0;
        if (!f) continue;
        matched.push(t);
        score += idf.get(t) * ((f * (k1 + 1)) / (f + k1 * (1 - b + (b * lens[index]) / avg)));
      }
      return { index, score: Math.round(score * 10000) / 10000, matchedTerms: matched, preview: documents[index].slice(0, 160) };
    });
    const ranked = results
      .filter((r) => r.score > 0)
      .sort((x, y) => y.score - x.score || x.index - y.index)
      .slice(0, limit);
    return { query, queryTerms: q, totalDocuments: N, matchedDocuments: results.filter((r) => r.score > 0).length, results: ranked };
  },
});

export const chunkText = tool({
  description:
    'Splits a long text into overlapping chunks for embeddings and RAG, respecting sentence and word boundaries, with chunk size and overlap in characters or words and source offsets.',
  inputSchema: {
    type: 'object',
    properties: {
      text: { type: 'string', description: 'The text to split.', minLength: 1, maxLength: 5000000 },
      chunkSize: { type: 'integer', description: 'Maximum size of each chunk, in the chosen unit.', minimum: 10, maximum: 100000, default: 1000 },
      overlap: {
        type: 'integer',
        description: 'How much of the end of each chunk is repeated at the start of the next (must be smaller than chunkSize).',
        minimum: 0,
        maximum: 50000,
        default: 100,
      },
      unit: { type: 'string', description: 'Unit for chunkSize and overlap.', enum: ['characters', 'words'], default: 'characters' },
    },
    required: ['text'],
    additionalProperties: false,
  },
  async execute({ text, chunkSize, overlap, unit }) {
    if (overlap >= chunkSize) throw new Error(`"overlap" (${overlap}) must be smaller than "chunkSize" (${chunkSize})`);
    const measure = unit === 'words' ? (s) => (s.match(/\S+/g) ?? []).length : (s) => s.length;
    // pieces: sentences; sentences that are too long are split into words; words too long are hard-split
    const pieces = [];
    for (const span of sentenceSpans(text)) {
      const s = text.slice(span.start, span.end);
      if (measure(s) <= chunkSize) {
        pieces.push(span);
        continue;
      }
      for (const w of s.matchAll(/\S+\s*/g)) {
        const start = span.start + w.index;
        if (measure(w[0]) <= chunkSize) {
          pieces.push({ start, end: start + w[0].length });
          continue;
        }
        for (let k = 0; k < w[0].length; k += chunkSize) pieces.push({ start: start + k, end: start + Math.min(w[0].length, k + chunkSize) });
      }
    }
    const len = (p) => measure(text.slice(p.start, p.end));
    const chunks = [];
    const emit = (list) => {
      const raw = text.slice(list[0].start, list[list.length - 1].end);
      const lead = raw.length - raw.trimStart().length;
      const body = raw.trim();
      if (!body) return;
      const start = list[0].start + lead;
      chunks.push({ index: chunks.length, text: body, start, end: start + body.length, size: measure(body) });
    };
    let cur = [];
    let curLen = 0;
    for (const p of pieces) {
      const l = len(p);
      if (cur.length && curLen + l > chunkSize) {
        emit(cur);
        const tail = [];
        let t = 0;
        for (let k = cur.length - 1; k >= 0; k--) {
          const pl = len(cur[k]);
          if (t + pl > overlap) break;
          tail.unshift(cur[k]);
          t += pl;
        }
        cur = tail;
        curLen = t;
        while (cur.length && curLen + l > chunkSize) curLen -= len(cur.shift());
      }
      cur.push(p);
      curLen += l;
    }
    if (cur.length) emit(cur);
    return { count: chunks.length, unit, chunkSize, overlap, totalSize: measure(text), chunks };
  },
});

export const estimateTokens = tool({
  description:
    'Estimates how many LLM tokens a text uses (GPT/Claude-style BPE heuristics for English, code and CJK text) and whether it fits a given context window, to budget prompts.',
  inputSchema: {
    type: 'object',
    properties: {
      text: { type: 'string', description: 'The text or prompt to measure.', maxLength: 5000000 },
      contextWindow: {
        type: 'integer',
        description: 'Optional context window size in tokens to check the text against, e.g. 8192 or 128000.',
        minimum: 1,
        maximum: 10000000,
      },
      reserveForOutput: {
        type: 'integer',
        description: 'Tokens to keep free for the model answer when checking the context window.',
        minimum: 0,
        maximum: 1000000,
        default: 0,
      },
    },
    required: ['text'],
    additionalProperties: false,
  },
  async execute({ text, contextWindow, reserveForOutput }) {
    const cjk = (text.match(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu) ?? []).length;
    const rest = text.replace(/[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu, ' ');
    const words = (rest.match(/[\p{L}\p{N}]+/gu) ?? []).length;
    const symbols = (rest.match(/[^\p{L}\p{N}\s]/gu) ?? []).length;
    const chars = [...rest.replace(/\s+/g, ' ')].length;
    // average two common rules of thumb (≈4 characters per token, ≈0.75 words per token) and add punctuation
    const latin = (chars / 4 + (words / 0.75 + symbols * 0.5)) / 2;
    const estimatedTokens = text.trim() === '' ? 0 : Math.max(1, Math.round(latin + cjk * 1.1));
    const out = {
      estimatedTokens,
      range: { low: Math.floor(estimatedTokens * 0.85), high: Math.ceil(estimatedTokens * 1.15) },
      characters: [...text].length,
      words: words + cjk,
      note: 'Heuristic estimate (about ±15% for English prose); exact counts depend on the model tokenizer.',
    };
    if (contextWindow !== undefined) {
      const available = contextWindow - reserveForOutput;
      if (available <= 0) throw new Error('"reserveForOutput" must be smaller than "contextWindow"');
      out.contextWindow = contextWindow;
      out.fits = estimatedTokens <= available;
      out.remainingTokens = available - estimatedTokens;
      out.percentUsed = Math.round((estimatedTokens / available) * 1000) / 10;
    }
    return out;
  },
});

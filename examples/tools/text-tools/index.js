// @toolshed-examples/text-tools — text statistics, slugs, case conversion, regex testing and text diffs.
// Plain ESM, no dependencies.

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

function tool({ description, inputSchema, outputSchema, execute }) {
  return {
    description,
    inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
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

// Regex-based segmentation (Intl.Segmenter is quadratic on long inputs in some Node versions).
const CJK = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}';
const WORD_RE = new RegExp(`[${CJK}]|(?:(?![${CJK}])[\\p{L}\\p{N}\\p{M}])+(?:['’](?:(?![${CJK}])[\\p{L}\\p{N}\\p{M}])+)*`, 'gu');
const GRAPHEME_RE = /(?:\P{M}[\p{M}\u{1F3FB}-\u{1F3FF}]*)(?:\u200d\P{M}[\p{M}\u{1F3FB}-\u{1F3FF}]*)*|\p{M}+/gu;
const ABBREVIATIONS = new Set(['mr', 'mrs', 'ms', 'dr', 'prof', 'sr', 'jr', 'st', 'vs', 'etc', 'e.g', 'i.e', 'inc', 'ltd', 'co', 'no', 'fig', 'approx']);
const countWords = (text) => text.match(WORD_RE) ?? [];
const countGraphemes = (text) => (text.match(GRAPHEME_RE) ?? []).length;
/** Sentence spans: ends at . ! ? … (plus closing quotes) before whitespace, or at a blank line; skips common abbreviations. */
function sentenceSpans(text) {
  const spans = [];
  const re = /[.!?。！？…]+["'”’)\]]*(?=\s|$)|\n[ \t]*\n/gu;
  let start = 0;
  let m;
  while ((m = re.exec(text))) {
    if (m[0] === '.') {
      const before = /([\p{L}.]+)$/u.exec(text.slice(Math.max(0, m.index - 12), m.index));
      if (before && ABBREVIATIONS.has(before[1].toLowerCase())) continue;
    }
    const end = m.index + m[0].length;
    spans.push({ start, end });
    start = end;
  }
  if (start < text.length) spans.push({ start, end: text.length });
  return spans.filter((sp) => /[\p{L}\p{N}]/u.test(text.slice(sp.start, sp.end)));
}

const round = (n, digits = 2) => Math.round(n * 10 ** digits) / 10 ** digits;

export const textStatistics = tool({
  description:
    'Counts words, sentences, paragraphs, lines and characters in a text and estimates reading and speaking time in minutes (word count, character count, reading time).',
  inputSchema: {
    type: 'object',
    properties: {
      text: { type: 'string', description: 'The text to analyse.', maxLength: 1000000 },
      wordsPerMinute: {
        type: 'integer',
        description: 'Reading speed used for the reading-time estimate (average adult silent reading is about 238).',
        minimum: 50,
        maximum: 1500,
        default: 238,
      },
    },
    required: ['text'],
    additionalProperties: false,
  },
  async execute({ text, wordsPerMinute }) {
    const words = countWords(text);
    const sentences = sentenceSpans(text).length;
    const paragraphs = text.split(/\n\s*\n/).filter((p) => p.trim() !== '').length;
    const lines = text === '' ? 0 : text.split(/\r\n|\r|\n/).length;
    const characters = countGraphemes(text);
    const charactersNoSpaces = countGraphemes(text.replace(/\s+/g, ''));
    const letters = (text.match(/\p{L}/gu) ?? []).length;
    const totalWordLength = words.reduce((sum, w) => sum + [...w].length, 0);
    const longestWord = words.reduce((best, w) => ([...w].length > [...best].length ? w : best), '');
    const uniqueWords = new Set(words.map((w) => w.toLowerCase())).size;
    const readingMinutes = words.length / wordsPerMinute;
    return {
      words: words.length,
      uniqueWords,
      sentences,
      paragraphs,
      lines,
      characters,
      charactersNoSpaces,
      letters,
      averageWordLength: words.length ? round(totalWordLength / words.length) : 0,
      averageSentenceLength: sentences ? round(words.length / sentences) : 0,
      longestWord,
      readingTimeMinutes: round(readingMinutes),
      readingTimeSeconds: Math.round(readingMinutes * 60),
      speakingTimeMinutes: round(words.length / 150),
    };
  },
});

const TRANSLITERATIONS = {
  ß: 'ss',
  æ: 'ae',
  Æ: 'AE',
  œ: 'oe',
  Œ: 'OE',
  ø: 'o',
  Ø: 'O',
  đ: 'd',
  Đ: 'D',
  ð: 'd',
  Ð: 'D',
  þ: 'th',
  Þ: 'TH',
  ł: 'l',
  Ł: 'L',
  ı: 'i',
  '&': ' and ',
  '@': ' at ',
};

export const slugify = tool({
  description:
    'Converts a title or any text into a URL-friendly slug: strips accents and diacritics, lowercases, and joins words with a separator such as a hyphen.',
  inputSchema: {
    type: 'object',
    properties: {
      text: { type: 'string', description: 'The text to turn into a slug, e.g. a blog post title.', minLength: 1, maxLength: 10000 },
      separator: { type: 'string', description: 'Character placed between words.', enum: ['-', '_', '.'], default: '-' },
      lowercase: { type: 'boolean', description: 'Whether to lowercase the slug.', default: true },
      maxLength: {
        type: 'integer',
        description: 'Optional maximum slug length; the slug is cut at a word boundary.',
        minimum: 1,
        maximum: 1000,
      },
    },
    required: ['text'],
    additionalProperties: false,
  },
  outputSchema: {
    type: 'object',
    properties: {
      slug: { type: 'string', description: 'The slug.' },
      length: { type: 'integer', description: 'Its length in characters.', minimum: 1 },
    },
    required: ['slug', 'length'],
    additionalProperties: false,
  },
  async execute({ text, separator, lowercase, maxLength }) {
    let s = [...text].map((c) => TRANSLITERATIONS[c] ?? c).join('');
    s = s.normalize('NFKD').replace(/\p{M}+/gu, '');
    const words = s.match(/[\p{L}\p{N}]+/gu) ?? [];
    if (words.length === 0) throw new Error('The text contains no letters or digits to build a slug from');
    let slug = words.join(separator);
    if (lowercase) slug = slug.toLowerCase();
    if (maxLength !== undefined && slug.length > maxLength) {
      const cut = slug.slice(0, maxLength + 1);
      const lastSep = cut.lastIndexOf(separator);
      slug = lastSep > 0 ? cut.slice(0, lastSep) : slug.slice(0, maxLength);
    }
    return { slug, length: slug.length };
  },
});

/** Splits identifiers and phrases into words: "XMLHttpRequest v2_final-Name" → XML Http Request v2 final Name */
function splitWords(text) {
  return (
    text
      .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, '$1 $2')
      .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
      .match(/[\p{L}\p{N}]+(?:['’][\p{L}]+)?/gu) ?? []
  );
}
const capitalize = (w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase();
const SMALL_WORDS = new Set(['a', 'an', 'and', 'as', 'at', 'but', 'by', 'for', 'in', 'nor', 'of', 'on', 'or', 'the', 'to', 'up', 'via', 'vs']);

export const convertCase = tool({
  description:
    'Converts text or identifiers between naming conventions: camelCase, PascalCase, snake_case, kebab-case, CONSTANT_CASE, dot.case, Title Case, Sentence case, UPPER and lower case.',
  inputSchema: {
    type: 'object',
    properties: {
      text: { type: 'string', description: 'The text or identifier to convert, e.g. "user account ID" or "userAccountId".', minLength: 1, maxLength: 100000 },
      to: {
        type: 'string',
        description: 'Target case style.',
        enum: ['camel', 'pascal', 'snake', 'kebab', 'constant', 'dot', 'title', 'sentence', 'upper', 'lower'],
      },
    },
    required: ['text', 'to'],
    additionalProperties: false,
  },
  async execute({ text, to }) {
    if (to === 'upper') return { result: text.toUpperCase(), to };
    if (to === 'lower') return { result: text.toLowerCase(), to };
    const words = splitWords(text);
    if (words.length === 0) throw new Error('The text contains no letters or digits to convert');
    const lower = words.map((w) => w.toLowerCase());
    let result;
    switch (to) {
      case 'camel':
        result = lower[0] + lower.slice(1).map(capitalize).join('');
        break;
      case 'pascal':
        result = lower.map(capitalize).join('');
        break;
      case 'snake':
        result = lower.join('_');
        break;
      case 'kebab':
        result = lower.join('-');
        break;
      case 'constant':
        result = lower.join('_').toUpperCase();
        break;
      case 'dot':
        result = lower.join('.');
        break;
      case 'title':
        result = lower.map((w, i) => (i > 0 && i < lower.length - 1 && SMALL_WORDS.has(w) ? w : capitalize(w))).join(' ');
        break;
      case 'sentence':
        result = capitalize(lower[0]) + (lower.length > 1 ? ' ' + lower.slice(1).join(' ') : '');
        break;
    }
    return { result, to, words };
  },
});

export const testRegex = tool({
  description:
    'Tests a JavaScript regular expression against a text and returns every match with its index, numbered capture groups and named groups; reports invalid patterns clearly.',
  inputSchema: {
    type: 'object',
    properties: {
      pattern: { type: 'string', description: 'The regular expression source without slashes, e.g. "(\\\\d{4})-(\\\\d{2})".', minLength: 1, maxLength: 5000 },
      flags: { type: 'string', description: 'Regex flags: any of i, m, s, u, v, y, d (g is implied).', pattern: '^[gimsuyvd]*$', default: '' },
      text: { type: 'string', description: 'The text to search.', maxLength: 200000 },
      maxMatches: { type: 'integer', description: 'Stop after this many matches.', minimum: 1, maximum: 10000, default: 100 },
    },
    required: ['pattern', 'text'],
    additionalProperties: false,
  },
  async execute({ pattern, flags, text, maxMatches }) {
    let re;
    const allFlags = [...new Set(flags.replace('g', '') + 'g')].join('');
    try {
      re = new RegExp(pattern, allFlags);
    } catch (err) {
      throw new Error(`Invalid regular expression /${pattern}/${flags}: ${err.message.replace(/^Invalid regular expression: \/.*\/[a-z]*: /s, '')}`);
    }
    const matches = [];
    let m;
    let truncated = false;
    while ((m = re.exec(text)) !== null) {
      if (matches.length >= maxMatches) {
        truncated = true;
        break;
      }
      matches.push({
        match: m[0],
        index: m.index,
        end: m.index + m[0].length,
        groups: m.slice(1).map((g) => (g === undefined ? null : g)),
        namedGroups: m.groups ? Object.fromEntries(Object.entries(m.groups).map(([k, v]) => [k, v ?? null])) : {},
      });
      if (m[0] === '') re.lastIndex += re.unicode || re.unicodeSets ? [...text.slice(re.lastIndex, re.lastIndex + 2)][0]?.length || 1 : 1;
    }
    return { matched: matches.length > 0, matchCount: matches.length, truncated, flags: allFlags, matches };
  },
});

/** Longest-common-subsequence line diff. */
function diffLines(a, b) {
  const n = a.length;
  const m = b.length;
  if (n * m > 25_000_000) throw new Error(`Texts are too large to diff (${n} x ${m} lines)`);
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) for (let j = m - 1; j >= 0; j--) lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const ops = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      ops.push({ op: 'equal', line: a[i], oldLine: i + 1, newLine: j + 1 });
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) {
      ops.push({ op: 'delete', line: a[i], oldLine: i + 1 });
      i++;
    } else {
      ops.push({ op: 'insert', line: b[j], newLine: j + 1 });
      j++;
    }
  }
  while (i < n) {
    ops.push({ op: 'delete', line: a[i], oldLine: i + 1 });
    i++;
  }
  while (j < m) {
    ops.push({ op: 'insert', line: b[j], newLine: j + 1 });
    j++;
  }
  return ops;
}

export const diffText = tool({
  description:
    'Compares two texts line by line and returns the added, removed and unchanged lines plus a unified diff, like the diff command (compare versions of a document).',
  inputSchema: {
    type: 'object',
    properties: {
      oldText: { type: 'string', description: 'The original text.', maxLength: 500000 },
      newText: { type: 'string', description: 'The changed text.', maxLength: 500000 },
      ignoreWhitespace: { type: 'boolean', description: 'Ignore leading/trailing whitespace and whitespace amount when comparing lines.', default: false },
      contextLines: { type: 'integer', description: 'Unchanged lines shown around each change in the unified diff.', minimum: 0, maximum: 100, default: 3 },
    },
    required: ['oldText', 'newText'],
    additionalProperties: false,
  },
  async execute({ oldText, newText, ignoreWhitespace, contextLines }) {
    const split = (t) => (t === '' ? [] : t.replace(/\r\n?/g, '\n').replace(/\n$/, '').split('\n'));
    const norm = (l) => (ignoreWhitespace ? l.trim().replace(/\s+/g, ' ') : l);
    const a = split(oldText);
    const b = split(newText);
    const raw = diffLines(a.map(norm), b.map(norm));
    const ops = raw.map((o) => ({ ...o, line: o.op === 'insert' ? b[o.newLine - 1] : a[o.oldLine - 1] }));
    const added = ops.filter((o) => o.op === 'insert').length;
    const removed = ops.filter((o) => o.op === 'delete').length;
    // unified diff hunks
    const out = [];
    const changeIdx = ops.map((o, k) => (o.op === 'equal' ? -1 : k)).filter((k) => k >= 0);
    let k = 0;
    while (k < changeIdx.length) {
      const start = Math.max(0, changeIdx[k] - contextLines);
      let end = Math.min(ops.length - 1, changeIdx[k] + contextLines);
      while (k + 1 < changeIdx.length && changeIdx[k + 1] - contextLines <= end + 1) {
        k++;
        end = Math.min(ops.length - 1, changeIdx[k] + contextLines);
      }
      const slice = ops.slice(start, end + 1);
      const oldStart = slice.find((o) => o.oldLine)?.oldLine ?? ops.slice(0, start).filter((o) => o.oldLine).length;
      const newStart = slice.find((o) => o.newLine)?.newLine ?? ops.slice(0, start).filter((o) => o.newLine).length;
      const oldCount = slice.filter((o) => o.op !== 'insert').length;
      const newCount = slice.filter((o) => o.op !== 'delete').length;
      out.push(`@@ -${oldStart},${oldCount} +${newStart},${newCount} @@`);
      for (const o of slice) out.push((o.op === 'equal' ? ' ' : o.op === 'insert' ? '+' : '-') + o.line);
      k++;
    }
    return {
      identical: added === 0 && removed === 0,
      added,
      removed,
      unchanged: ops.length - added - removed,
      unifiedDiff: out.join('\n'),
      changes: ops.filter((o) => o.op !== 'equal'),
    };
  },
});

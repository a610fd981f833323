// @toolshed-examples/html-tools — offline web-scraping helpers: HTML to plain text, link extraction,
// meta tag extraction and table extraction from an HTML string. Plain ESM, no dependencies.

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

// ----------------------------------------------------------------------------- entities
const NAMED_ENTITIES = {
  amp: '&',
  lt: '<',
  gt: '>',
  quot: '"',
  apos: "'",
  nbsp: '\u00a0',
  copy: '©',
  reg: '®',
  trade: '™',
  hellip: '…',
  mdash: '—',
  ndash: '–',
  lsquo: '‘',
  rsquo: '’',
  sbquo: '‚',
  ldquo: '“',
  rdquo: '”',
  bdquo: '„',
  laquo: '«',
  raquo: '»',
  lsaquo: '‹',
  rsaquo: '›',
  bull: '•',
  middot: '·',
  para: '¶',
  sect: '§',
  deg: '°',
  plusmn: '±',
  times: '×',
  divide: '÷',
  frac12: '½',
  frac14: '¼',
  frac34: '¾',
  sup1: '¹',
  sup2: '²',
  sup3: '³',
  micro: 'µ',
  cent: '¢',
  pound: '£',
  yen: '¥',
  euro: '€',
  curren: '¤',
  iexcl: '¡',
  iquest: '¿',
  shy: '\u00ad',
  ensp: '\u2002',
  emsp: '\u2003',
  thinsp: '\u2009',
  zwnj: '\u200c',
  zwj: '\u200d',
  lrm: '\u200e',
  rlm: '\u200f',
  dagger: '†',
  Dagger: '‡',
  permil: '‰',
  prime: '′',
  Prime: '″',
  larr: '←',
  uarr: '↑',
  rarr: '→',
  darr: '↓',
  harr: '↔',
  lArr: '⇐',
  rArr: '⇒',
  hArr: '⇔',
  minus: '−',
  le: '≤',
  ge: '≥',
  ne: '≠',
  asymp: '≈',
  equiv: '≡',
  infin: '∞',
  sum: '∑',
  prod: '∏',
  radic: '√',
  part: '∂',
  nabla: '∇',
  isin: '∈',
  notin: '∉',
  cap: '∩',
  cup: '∪',
  and: '∧',
  or: '∨',
  forall: '∀',
  exist: '∃',
  empty: '∅',
  sdot: '⋅',
  loz: '◊',
  spades: '♠',
  clubs: '♣',
  hearts: '♥',
  diams: '♦',
  ordf: 'ª',
  ordm: 'º',
  not: '¬',
  macr: '¯',
  acute: '´',
  cedil: '¸',
  uml: '¨',
  brvbar: '¦',
  circ: 'ˆ',
  tilde: '˜',
  Agrave: 'À',
  Aacute: 'Á',
  Acirc: 'Â',
  Atilde: 'Ã',
  Auml: 'Ä',
  Aring: 'Å',
  AElig: 'Æ',
  Ccedil: 'Ç',
  Egrave: 'È',
  Eacute: 'É',
  Ecirc: 'Ê',
  Euml: 'Ë',
  Igrave: 'Ì',
  Iacute: 'Í',
  Icirc: 'Î',
  Iuml: 'Ï',
  ETH: 'Ð',
  Ntilde: 'Ñ',
  Ograve: 'Ò',
  Oacute: 'Ó',
  Ocirc: 'Ô',
  Otilde: 'Õ',
  Ouml: 'Ö',
  Oslash: 'Ø',
  Ugrave: 'Ù',
  Uacute: 'Ú',
  Ucirc: 'Û',
  Uuml: 'Ü',
  Yacute: 'Ý',
  THORN: 'Þ',
  szlig: 'ß',
  agrave: 'à',
  aacute: 'á',
  acirc: 'â',
  atilde: 'ã',
  auml: 'ä',
  aring: 'å',
  aelig: 'æ',
  ccedil: 'ç',
  egrave: 'è',
  eacute: 'é',
  ecirc: 'ê',
  euml: 'ë',
  igrave: 'ì',
  iacute: 'í',
  icirc: 'î',
  iuml: 'ï',
  eth: 'ð',
  ntilde: 'ñ',
  ograve: 'ò',
  oacute: 'ó',
  ocirc: 'ô',
  otilde: 'õ',
  ouml: 'ö',
  oslash: 'ø',
  ugrave: 'ù',
  uacute: 'ú',
  ucirc: 'û',
  uuml: 'ü',
  yacute: 'ý',
  thorn: 'þ',
  yuml: 'ÿ',
  OElig: 'Œ',
  oelig: 'œ',
  Scaron: 'Š',
  scaron: 'š',
  Yuml: 'Ÿ',
  fnof: 'ƒ',
  Alpha: 'Α',
  Beta: 'Β',
  Gamma: 'Γ',
  Delta: 'Δ',
  Theta: 'Θ',
  Lambda: 'Λ',
  Pi: 'Π',
  Sigma: 'Σ',
  Phi: 'Φ',
  Psi: 'Ψ',
  Omega: 'Ω',
  alpha: 'α',
  beta: 'β',
  gamma: 'γ',
  delta: 'δ',
  epsilon: 'ε',
  theta: 'θ',
  lambda: 'λ',
  mu: 'μ',
  pi: 'π',
  sigma: 'σ',
  tau: 'τ',
  phi: 'φ',
  psi: 'ψ',
  omega: 'ω',
};
function decodeEntities(s) {
  return s.replace(/&(#[xX][0-9a-fA-F]{1,6}|#\d{1,7}|[A-Za-z][A-Za-z0-9]{1,31});?/g, (whole, body) => {
    if (body[0] === '#') {
      const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
      if (code === 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
      return String.fromCodePoint(code);
    }
    return Object.hasOwn(NAMED_ENTITIES, body) ? NAMED_ENTITIES[body] : whole;
  });
}

// ----------------------------------------------------------------------------- tokenizer
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title', 'xmp', 'noscript', 'template']);

function parseAttributes(src) {
  const attrs = {};
  const re = /([^\s"'>/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+)))?/g;
  let m;
  while ((m = re.exec(src))) {
    const name = m[1].toLowerCase();
    if (!(name in attrs)) attrs[name] = decodeEntities(m[2] ?? m[3] ?? m[4] ?? '');
  }
  return attrs;
}

/** Tokens: {type:'text',text} (entity-decoded), {type:'open',name,attrs}, {type:'close',name}. */
function tokenize(html) {
  const tokens = [];
  let i = 0;
  const n = html.length;
  let textStart = 0;
  const flushText = (end) => {
    if (end > textStart) tokens.push({ type: 'text', text: decodeEntities(html.slice(textStart, end)) });
  };
  while (i < n) {
    const lt = html.indexOf('<', i);
    if (lt === -1) break;
    i = lt;
    if (html.startsWith('<!--', i)) {
      flushText(i);
      const end = html.indexOf('-->', i + 4);
      i = end === -1 ? n : end + 3;
      textStart = i;
      continue;
    }
    if (html[i + 1] === '!' || html[i + 1] === '?') {
      flushText(i);
      if (html.startsWith('<![CDATA[', i)) {
        const end = html.indexOf(']]>', i);
        tokens.push({ type: 'text', text: html.slice(i + 9, end === -1 ? n : end) });
        i = end === -1 ? n : end + 3;
      } else {
        const end = html.indexOf('>', i);
        i = end === -1 ? n : end + 1;
      }
      textStart = i;
      continue;
    }
    const close = html[i + 1] === '/';
    const nameMatch = /^[A-Za-z][A-Za-z0-9:-]*/.exec(html.slice(i + (close ? 2 : 1), i + (close ? 2 : 1) + 64));
    if (!nameMatch) {
      i++;
      continue;
    } // a literal "<"
    flushText(i);
    // find the end of the tag, skipping quoted attribute values
    let j = i + 1;
    let quote = null;
    for (; j < n; j++) {
      const c = html[j];
      if (quote) {
        if (c === quote) quote = null;
      } else if (c === '"' || c === "'") {
        if (/[=\s]/.test(html[j - 1]) || html[j - 1] === '=') quote = c;
      } else if (c === '>') break;
    }
    const inner = html.slice(i + (close ? 2 : 1) + nameMatch[0].length, j);
    const name = nameMatch[0].toLowerCase();
    i = j + 1;
    textStart = i;
    if (close) {
      tokens.push({ type: 'close', name });
      continue;
    }
    const selfClosing = /\/\s*$/.test(inner);
    tokens.push({ type: 'open', name, attrs: parseAttributes(inner.replace(/\/\s*$/, '')), selfClosing });
    if (RAW_TEXT.has(name) && !selfClosing) {
      const endRe = new RegExp(`</${name}\\s*>`, 'i');
      const rest = html.slice(i);
      const m = endRe.exec(rest);
      const raw = m ? rest.slice(0, m.index) : rest;
      tokens.push({ type: 'text', text: name === 'title' || name === 'textarea' ? decodeEntities(raw) : raw, raw: true });
      if (m) tokens.push({ type: 'close', name });
      i += m ? m.index + m[0].length : raw.length;
      textStart = i;
    }
  }
  textStart = Math.min(textStart, n);
  flushText(n);
  return tokens;
}

function checkHtml(html) {
  if (html.trim() === '') throw new Error('"html" is empty; pass the HTML source of a page or fragment');
}

function resolveHref(href, base) {
  const h = href.trim();
  try {
    return base ? new URL(h, base).href : new URL(h).href;
  } catch {
    return h;
  }
}
function checkBaseUrl(baseUrl) {
  if (baseUrl === undefined) return undefined;
  try {
    const u = new URL(baseUrl);
    if (!/^https?:$/.test(u.protocol)) throw new Error('x');
    return u.href;
  } catch {
    throw new Error(`"baseUrl" must be an absolute http(s) URL; got ${JSON.stringify(baseUrl)}`);
  }
}

// ----------------------------------------------------------------------------- html → text

/** Tail helpers that avoid end-anchored regexes (which rescan the whole growing string). */
function trimTail(s, chars) {
  let i = s.length;
  while (i > 0 && chars.includes(s[i - 1])) i--;
  return i === s.length ? s : s.slice(0, i);
}
const BLOCK = new Set([
  'address',
  'article',
  'aside',
  'blockquote',
  'details',
  'dialog',
  'dd',
  'div',
  'dl',
  'dt',
  'fieldset',
  'figcaption',
  'figure',
  'footer',
  'form',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'header',
  'hgroup',
  'hr',
  'main',
  'nav',
  'ol',
  'p',
  'pre',
  'section',
  'table',
  'ul',
  'tr',
  'summary',
  'caption',
  'body',
  'html',
]);
const SKIP = new Set(['script', 'style', 'head', 'noscript', 'template', 'svg', 'math', 'iframe', 'object', 'canvas', 'select', 'button']);

export const htmlToText = tool({
  description:
    'Converts HTML to readable plain text: drops scripts, styles and tags, decodes HTML entities, keeps paragraphs, line breaks, list bullets and table cells, optionally keeping link URLs.',
  inputSchema: {
    type: 'object',
    properties: {
      html: { type: 'string', description: 'The HTML document or fragment.', maxLength: 1000000 },
      includeLinks: { type: 'boolean', description: 'Append each link URL in parentheses after its text.', default: false },
      baseUrl: { type: 'string', description: 'Base URL used to resolve relative link URLs when includeLinks is true.', format: 'uri' },
      wrapWidth: { type: 'integer', description: 'Optional line width to word-wrap the output to (0 = no wrapping).', minimum: 0, maximum: 1000, default: 0 },
    },
    required: ['html'],
    additionalProperties: false,
  },
  async execute({ html, includeLinks, baseUrl, wrapWidth }) {
    checkHtml(html);
    const base = checkBaseUrl(baseUrl);
    const tokens = tokenize(html);
    // output = lines; only the last line is ever edited, which keeps long documents linear
    const lines = [''];
    const isEmpty = () => lines.length === 1 && lines[0] === '';
    const lastChar = () => {
      const l = lines[lines.length - 1];
      return l !== '' ? l[l.length - 1] : lines.length > 1 ? '\n' : '';
    };
    const trimLine = (chars) => {
      lines[lines.length - 1] = trimTail(lines[lines.length - 1], chars);
    };
    const write = (s) => {
      const parts = s.split('\n');
      lines[lines.length - 1] += parts[0];
      for (let k = 1; k < parts.length; k++) lines.push(parts[k]);
    };
    let skipDepth = 0;
    let preDepth = 0;
    const listStack = [];
    const linkStack = [];
    const newline = (count) => {
      trimLine(' \t');
      if (isEmpty()) return;
      let have = 0;
      for (let k = lines.length - 1; k > 0 && lines[k] === ''; k--) have++;
      for (; have < count; have++) lines.push('');
    };
    const append = (s) => {
      if (preDepth) {
        write(s);
        return;
      }
      s = s.replace(/[\s\u00a0]+/g, (w) => (w.includes('\u00a0') ? w.replace(/[^\u00a0]/g, '').replace(/\u00a0/g, ' ') || ' ' : ' '));
      if (s === ' ' || s === '') {
        if (!isEmpty() && !/\s/.test(lastChar())) write(' ');
        return;
      }
      if (isEmpty() || /\s/.test(lastChar())) s = s.replace(/^ +/, '');
      write(s);
    };
    for (const t of tokens) {
      if (t.type === 'open') {
        if (SKIP.has(t.name) && !t.selfClosing) {
          skipDepth++;
          continue;
        }
        if (skipDepth) continue;
        if (t.name === 'br') {
          trimLine(' \t');
          lines.push('');
          continue;
        }
        if (t.name === 'hr') {
          newline(1);
          write('---');
          newline(2);
          continue;
        }
        if (t.name === 'img' && t.attrs.alt) {
          append(`[${t.attrs.alt}]`);
          continue;
        }
        if (t.name === 'pre') {
          newline(2);
          preDepth++;
          continue;
        }
        if (t.name === 'ul' || t.name === 'ol') {
          newline(listStack.length ? 1 : 2);
          listStack.push({ ordered: t.name === 'ol', n: Number(t.attrs.start) || 1 });
          continue;
        }
        if (t.name === 'li') {
          newline(1);
          const list = listStack[listStack.length - 1] ?? { ordered: false, n: 1 };
          write('  '.repeat(Math.max(0, listStack.length - 1)) + (list.ordered ? `${list.n++}. ` : '- '));
          continue;
        }
        if (t.name === 'td' || t.name === 'th') {
          if (!isEmpty() && lastChar() !== '\n') {
            trimLine(' ');
            write('\t');
          }
          continue;
        }
        if (t.name === 'a') {
          linkStack.push(t.attrs.href);
          continue;
        }
        if (/^h[1-6]$/.test(t.name) || t.name === 'p' || t.name === 'blockquote' || t.name === 'table') {
          newline(2);
          continue;
        }
        if (BLOCK.has(t.name)) newline(1);
      } else if (t.type === 'close') {
        if (SKIP.has(t.name)) {
          skipDepth = Math.max(0, skipDepth - 1);
          continue;
        }
        if (skipDepth) continue;
        if (t.name === 'pre') {
          preDepth = Math.max(0, preDepth - 1);
          newline(2);
          continue;
        }
        if (t.name === 'ul' || t.name === 'ol') {
          listStack.pop();
          newline(listStack.length ? 1 : 2);
          continue;
        }
        if (t.name === 'a') {
          const href = linkStack.pop();
          if (includeLinks && href && !/^(javascript:|#)/i.test(href.trim())) append(` (${resolveHref(href, base)})`);
          continue;
        }
        if (/^h[1-6]$/.test(t.name) || t.name === 'p' || t.name === 'blockquote' || t.name === 'table') {
          newline(2);
          continue;
        }
        if (BLOCK.has(t.name) || t.name === 'li') newline(1);
      } else if (!skipDepth) {
        append(t.text);
      }
    }
    const out = lines.join('\n');
    let text = out
      .split('\n')
      .map((l) => l.replace(/[ \t]+$/, ''))
      .join('\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
    if (wrapWidth > 0) {
      text = text
        .split('\n')
        .map((line) => {
          const lines = [];
          let cur = '';
          for (const word of line.split(/ +/)) {
            if (cur && (cur + ' ' + word).length > wrapWidth) {
              lines.push(cur);
              cur = word;
            } else cur = cur ? cur + ' ' + word : word;
          }
          lines.push(cur);
          return lines.join('\n');
        })
        .join('\n');
    }
    return { text, characters: text.length, words: (text.match(/[\p{L}\p{N}]+/gu) ?? []).length };
  },
});

// ----------------------------------------------------------------------------- links
export const extractLinks = tool({
  description:
    'Extracts all hyperlinks (a href) from an HTML page with their anchor text, rel and title, resolves relative URLs against a base URL and marks internal vs external links.',
  inputSchema: {
    type: 'object',
    properties: {
      html: { type: 'string', description: 'The HTML document or fragment.', maxLength: 1000000 },
      baseUrl: { type: 'string', description: 'The page URL, used to resolve relative links and to tell internal from external ones.', format: 'uri' },
      unique: { type: 'boolean', description: 'Return each URL only once (first occurrence).', default: true },
      includeAssets: { type: 'boolean', description: 'Also return image, script and stylesheet URLs (img src, script src, link href).', default: false },
    },
    required: ['html'],
    additionalProperties: false,
  },
  async execute({ html, baseUrl, unique, includeAssets }) {
    checkHtml(html);
    let base = checkBaseUrl(baseUrl);
    const tokens = tokenize(html);
    const baseTag = tokens.find((t) => t.type === 'open' && t.name === 'base' && t.attrs.href);
    if (baseTag) base = resolveHref(baseTag.attrs.href, base);
    const baseHost = base ? new URL(base).host : null;
    const links = [];
    const assets = [];
    let open = null;
    const classify = (url) => {
      const m = /^([a-z][a-z0-9+.-]*):/i.exec(url);
      if (!m) return url.startsWith('#') ? 'fragment' : 'relative';
      return m[1].toLowerCase();
    };
    for (const t of tokens) {
      if (t.type === 'open' && t.name === 'a' && t.attrs.href !== undefined) {
        if (open) links.push(open);
        const url = resolveHref(t.attrs.href, base);
        const scheme = t.attrs.href.trim().startsWith('#') ? 'fragment' : classify(url);
        open = {
          url,
          text: '',
          scheme,
          external: baseHost && (scheme === 'http' || scheme === 'https') ? new URL(url).host !== baseHost : null,
          rel: t.attrs.rel ?? null,
          title: t.attrs.title ?? null,
          nofollow: /\bnofollow\b/i.test(t.attrs.rel ?? ''),
        };
      } else if (t.type === 'close' && t.name === 'a' && open) {
        open.text = open.text.replace(/\s+/g, ' ').trim();
        links.push(open);
        open = null;
      } else if (t.type === 'text' && open && !t.raw) {
        open.text += t.text;
      } else if (t.type === 'open' && open && t.name === 'img' && t.attrs.alt) {
        open.text += ` ${t.attrs.alt} `;
      }
      if (includeAssets && t.type === 'open') {
        const src =
          t.name === 'img' || t.name === 'script' || t.name === 'source' || t.name === 'iframe' ? t.attrs.src : t.name === 'link' ? t.attrs.href : undefined;
        if (src) assets.push({ url: resolveHref(src, base), tag: t.name, rel: t.attrs.rel ?? null });
      }
    }
    if (open) {
      open.text = open.text.replace(/\s+/g, ' ').trim();
      links.push(open);
    }
    const seen = new Set();
    const result = unique ? links.filter((l) => (seen.has(l.url) ? false : seen.add(l.url))) : links;
    const out = {
      count: result.length,
      internalCount: result.filter((l) => l.external === false).length,
      externalCount: result.filter((l) => l.external === true).length,
      links: result,
    };
    if (includeAssets) out.assets = assets;
    return out;
  },
});

// ----------------------------------------------------------------------------- meta tags
export const extractMetaTags = tool({
  description:
    'Extracts SEO metadata from an HTML page: title, meta description, keywords, canonical URL, language, charset, Open Graph and Twitter Card tags, icons and alternate links.',
  inputSchema: {
    type: 'object',
    properties: {
      html: { type: 'string', description: 'The HTML document (the <head> is enough).', maxLength: 1000000 },
      baseUrl: { type: 'string', description: 'The page URL, used to resolve relative canonical, icon and image URLs.', format: 'uri' },
    },
    required: ['html'],
    additionalProperties: false,
  },
  async execute({ html, baseUrl }) {
    checkHtml(html);
    const base = checkBaseUrl(baseUrl);
    const tokens = tokenize(html);
    const result = {
      title: null,
      description: null,
      keywords: [],
      canonical: null,
      lang: null,
      charset: null,
      robots: null,
      viewport: null,
      author: null,
      openGraph: {},
      twitter: {},
      meta: {},
      icons: [],
      alternates: [],
      feeds: [],
    };
    const url = (u) => resolveHref(u, base);
    for (let k = 0; k < tokens.length; k++) {
      const t = tokens[k];
      if (t.type !== 'open') continue;
      const a = t.attrs;
      if (t.name === 'html' && a.lang) result.lang = a.lang;
      else if (t.name === 'title' && result.title === null) {
        const next = tokens[k + 1];
        result.title = next && next.type === 'text' ? next.text.replace(/\s+/g, ' ').trim() : '';
      } else if (t.name === 'meta') {
        if (a.charset) {
          result.charset = a.charset.toLowerCase();
          continue;
        }
        const content = a.content ?? '';
        const key = (a.property ?? a.name ?? a['http-equiv'] ?? a.itemprop ?? '').trim();
        if (!key) continue;
        const lk = key.toLowerCase();
        if (lk === 'content-type') {
          const m = /charset=([\w-]+)/i.exec(content);
          if (m) result.charset = m[1].toLowerCase();
        }
        if (lk.startsWith('og:')) {
          const prop = key.slice(3);
          const value = /^(image|url|video|audio)(:url|:secure_url)?$/.test(prop) ? url(content) : content;
          if (prop in result.openGraph) result.openGraph[prop] = [].concat(result.openGraph[prop], value);
          else result.openGraph[prop] = value;
        } else if (lk.startsWith('twitter:')) {
          const prop = key.slice(8);
          result.twitter[prop] = /^image(:src)?$/.test(prop) ? url(content) : content;
        } else {
          result.meta[lk] = content;
          if (lk === 'description') result.description = content.trim();
          if (lk === 'keywords')
            result.keywords = content
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean);
          if (lk === 'robots') result.robots = content;
          if (lk === 'viewport') result.viewport = content;
          if (lk === 'author') result.author = content;
        }
      } else if (t.name === 'link' && a.href) {
        const rel = (a.rel ?? '').toLowerCase().split(/\s+/);
        if (rel.includes('canonical')) result.canonical = url(a.href);
        if (rel.some((r) => r === 'icon' || r === 'apple-touch-icon' || r === 'mask-icon'))
          result.icons.push({ url: url(a.href), rel: a.rel, sizes: a.sizes ?? null, type: a.type ?? null });
        if (rel.includes('alternate')) {
          if (/rss|atom/.test(a.type ?? '')) result.feeds.push({ url: url(a.href), type: a.type, title: a.title ?? null });
          else result.alternates.push({ url: url(a.href), hreflang: a.hreflang ?? null, type: a.type ?? null });
        }
      }
    }
    return result;
  },
});

// ----------------------------------------------------------------------------- tables
export const extractTables = tool({
  description:
    'Extracts the data tables from an HTML page as rows of cell text, using the header row (th) as column names when present, so scraped tables become JSON records.',
  inputSchema: {
    type: 'object',
    properties: {
      html: { type: 'string', description: 'The HTML document or fragment containing <table> elements.', maxLength: 1000000 },
      asObjects: { type: 'boolean', description: 'When a table has a header row, return its rows as objects keyed by header text.', default: true },
    },
    required: ['html'],
    additionalProperties: false,
  },
  async execute({ html, asObjects }) {
    checkHtml(html);
    const tokens = tokenize(html);
    const tables = [];
    const stack = [];
    let skip = 0;
    for (const t of tokens) {
      const cur = stack[stack.length - 1];
      if (t.type === 'open') {
        if (t.name === 'script' || t.name === 'style') {
          skip++;
          continue;
        }
        if (t.name === 'table') {
          stack.push({ rows: [], row: null, cell: null, caption: null, inCaption: false });
          continue;
        }
        if (!cur) continue;
        if (t.name === 'caption') {
          cur.inCaption = true;
          cur.caption = '';
        } else if (t.name === 'tr') {
          if (cur.row) cur.rows.push(cur.row);
          cur.row = { cells: [], header: true };
        } else if (t.name === 'td' || t.name === 'th') {
          if (!cur.row) cur.row = { cells: [], header: true };
          if (cur.cell) cur.row.cells.push(cur.cell);
          cur.cell = { text: '', th: t.name === 'th', colspan: Math.min(Math.max(1, Number(t.attrs.colspan) || 1), 100) };
        } else if (t.name === 'br' && cur.cell) cur.cell.text += ' ';
      } else if (t.type === 'close') {
        if (t.name === 'script' || t.name === 'style') {
          skip = Math.max(0, skip - 1);
          continue;
        }
        if (!cur) continue;
        if (t.name === 'caption') cur.inCaption = false;
        else if ((t.name === 'td' || t.name === 'th') && cur.cell) {
          cur.row.cells.push(cur.cell);
          cur.cell = null;
        } else if (t.name === 'tr' && cur.row) {
          if (cur.cell) {
            cur.row.cells.push(cur.cell);
            cur.cell = null;
          }
          cur.rows.push(cur.row);
          cur.row = null;
        } else if (t.name === 'table') {
          if (cur.cell) cur.row.cells.push(cur.cell);
          if (cur.row) cur.rows.push(cur.row);
          stack.pop();
          const rows = cur.rows
            .filter((r) => r.cells.length)
            .map((r) => ({ th: r.cells.every((c) => c.th), cells: r.cells.flatMap((c) => Array(c.colspan).fill(c.text.replace(/\s+/g, ' ').trim())) }));
          const hasHeader = rows.length > 0 && rows[0].th;
          const headers = hasHeader ? rows[0].cells.map((h, i) => h || `column${i + 1}`) : [];
          const body = (hasHeader ? rows.slice(1) : rows).map((r) => r.cells);
          tables.push({
            index: tables.length,
            caption: cur.caption ? cur.caption.replace(/\s+/g, ' ').trim() : null,
            headers,
            rowCount: body.length,
            rows: hasHeader && asObjects ? body.map((cells) => Object.fromEntries(headers.map((h, i) => [h, cells[i] ?? null]))) : body,
          });
        }
      } else if (!skip && cur) {
        if (cur.inCaption) cur.caption += t.text;
        else if (cur.cell) cur.cell.text += t.text;
      }
    }
    return { count: tables.length, tables };
  },
});

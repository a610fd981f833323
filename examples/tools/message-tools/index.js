// @toolshed-examples/message-tools — helpers for composing and addressing messages: email address
// validation, address-list parsing, Markdown to HTML and message templates. Plain ESM, no dependencies.
import { domainToASCII } from 'node:url';

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

// ----------------------------------------------------------------------------- email validation
const COMMON_DOMAINS = [
  'gmail.com',
  'yahoo.com',
  'hotmail.com',
  'outlook.com',
  'icloud.com',
  'aol.com',
  'protonmail.com',
  'proton.me',
  'live.com',
  'msn.com',
  'gmx.com',
  'gmx.de',
  'mail.com',
  'yandex.com',
  'zoho.com',
  'fastmail.com',
  'me.com',
  'web.de',
  'yahoo.co.uk',
  'hotmail.co.uk',
  'googlemail.com',
  'comcast.net',
  'verizon.net',
  'att.net',
  'orange.fr',
  'free.fr',
  'qq.com',
  '163.com',
];
const COMMON_TLDS = ['com', 'net', 'org', 'edu', 'gov', 'io', 'co', 'de', 'uk', 'fr', 'nl', 'info', 'biz', 'dev', 'app'];
const DISPOSABLE = new Set([
  'mailinator.com',
  'guerrillamail.com',
  'guerrillamail.net',
  '10minutemail.com',
  'tempmail.com',
  'temp-mail.org',
  'yopmail.com',
  'trashmail.com',
  'sharklasers.com',
  'getnada.com',
  'dispostable.com',
  'throwawaymail.com',
  'maildrop.cc',
  'fakeinbox.com',
  'mintemail.com',
  'mohmal.com',
  'emailondeck.com',
  'tempail.com',
  'spamgourmet.com',
  'mailnesia.com',
  'tempr.email',
  'discard.email',
]);
const ROLE_ACCOUNTS = new Set([
  'admin',
  'administrator',
  'info',
  'support',
  'sales',
  'noreply',
  'no-reply',
  'donotreply',
  'postmaster',
  'webmaster',
  'contact',
  'help',
  'billing',
  'abuse',
  'hostmaster',
  'security',
  'team',
  'office',
  'hello',
  'marketing',
  'jobs',
  'careers',
  'press',
  'root',
]);
const PLUS_ADDRESSING = new Set([
  'gmail.com',
  'googlemail.com',
  'outlook.com',
  'hotmail.com',
  'live.com',
  'icloud.com',
  'me.com',
  'fastmail.com',
  'protonmail.com',
  'proton.me',
  'yandex.com',
]);

function levenshtein(a, b) {
  const dp = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = dp[0];
    dp[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = dp[j];
      dp[j] = Math.min(dp[j] + 1, dp[j - 1] + 1, prev + (a[i - 1] === b[j - 1] ? 0 : 1));
      prev = tmp;
    }
  }
  return dp[b.length];
}

function checkEmail(raw) {
  const email = raw.trim();
  const fail = (reason) => ({ valid: false, reason, email });
  if (email.length > 254) return fail('Address is longer than 254 characters');
  const at = email.lastIndexOf('@');
  if (at === -1) return fail('Missing "@" sign');
  const local = email.slice(0, at);
  const domainRaw = email.slice(at + 1);
  if (!local) return fail('Missing local part before "@"');
  if (!domainRaw) return fail('Missing domain after "@"');
  if ([...local].length > 64) return fail('Local part is longer than 64 characters');
  const quoted = /^"(?:[^"\\\r\n]|\\.)*"$/.test(local);
  if (!quoted) {
    if (local.includes('@')) return fail('More than one "@" sign outside quotes');
    if (!/^[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+(?:\.[\p{L}\p{N}!#$%&'*+/=?^_`{|}~-]+)*$/u.test(local)) {
      if (/^\.|\.$/.test(local)) return fail('Local part must not start or end with a dot');
      if (/\.\./.test(local)) return fail('Local part must not contain consecutive dots');
      return fail('Local part contains characters that are not allowed (use quotes for special characters)');
    }
  }
  let domain;
  let ipLiteral = false;
  if (/^\[.*\]$/.test(domainRaw)) {
    const ip = domainRaw.slice(1, -1);
    if (!/^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(ip) && !/^IPv6:[0-9a-f:.]+$/i.test(ip))
      return fail('Invalid IP address literal in domain');
    domain = domainRaw;
    ipLiteral = true;
  } else {
    domain = domainToASCII(domainRaw.toLowerCase());
    if (!domain) return fail('Domain is not a valid hostname');
    if (domain.length > 253) return fail('Domain is longer than 253 characters');
    const labels = domain.split('.');
    if (labels.length < 2) return fail('Domain must contain a dot and a top-level domain (e.g. example.com)');
    for (const l of labels) {
      if (!l) return fail('Domain contains an empty label (consecutive or trailing dots)');
      if (l.length > 63) return fail(`Domain label "${l}" is longer than 63 characters`);
      if (!/^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/.test(l)) return fail(`Domain label "${l}" contains invalid characters or starts/ends with a hyphen`);
    }
    const tld = labels[labels.length - 1];
    if (!/^(?:[a-z]{2,63}|xn--[a-z0-9-]{2,59})$/.test(tld)) return fail(`Top-level domain "${tld}" is not valid`);
  }
  return { valid: true, local, domain, quoted, ipLiteral, email };
}

export const validateEmail = tool({
  description:
    'Validates an email address syntax (RFC 5321/5322 rules), normalizes it, flags role and disposable addresses, and suggests fixes for domain typos like gmial.com; no network lookup.',
  inputSchema: {
    type: 'object',
    properties: {
      email: { type: 'string', description: 'The email address to validate, e.g. "Jane.Doe+news@Gmail.com".', minLength: 1, maxLength: 1000 },
    },
    required: ['email'],
    additionalProperties: false,
  },
  async execute({ email }) {
    const r = checkEmail(email);
    if (!r.valid) return { valid: false, reason: r.reason, input: email };
    const { local, domain } = r;
    const normalized = `${local}@${domain}`;
    let canonical = `${local.toLowerCase()}@${domain}`;
    const canonicalDomain = domain === 'googlemail.com' ? 'gmail.com' : domain;
    if (PLUS_ADDRESSING.has(domain) && !r.quoted) {
      let l = local.toLowerCase().split('+')[0];
      if (canonicalDomain === 'gmail.com') l = l.replace(/\./g, '');
      canonical = `${l}@${canonicalDomain}`;
    }
    let suggestion = null;
    if (!r.ipLiteral && !COMMON_DOMAINS.includes(domain)) {
      let best = null;
      for (const d of COMMON_DOMAINS) {
        const dist = levenshtein(domain, d);
        if (dist <= 2 && dist < domain.length / 3 && (!best || dist < best.dist)) best = { d, dist };
      }
      if (best) suggestion = `${local}@${best.d}`;
      else {
        const labels = domain.split('.');
        const tld = labels.pop();
        if (!COMMON_TLDS.includes(tld)) {
          const t =
            COMMON_TLDS.find((c) => c.length === tld.length && levenshtein(tld, c) === 1 && [...tld].sort().join('') === [...c].sort().join('')) ??
            { con: 'com', cmo: 'com', ocm: 'com', comm: 'com', cm: 'com', nett: 'net', ogr: 'org' }[tld];
          if (t) suggestion = `${local}@${[...labels, t].join('.')}`;
        }
      }
    }
    return {
      valid: true,
      reason: null,
      input: email,
      normalized,
      canonical,
      localPart: local,
      domain,
      isRoleAccount: ROLE_ACCOUNTS.has(local.toLowerCase().split('+')[0]),
      isDisposable: DISPOSABLE.has(domain),
      isFreeProvider: COMMON_DOMAINS.includes(domain),
      suggestion,
    };
  },
});

// ----------------------------------------------------------------------------- address lists
function splitAddressList(text) {
  const parts = [];
  let cur = '';
  let quote = false;
  let angle = 0;
  let paren = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (quote) {
      cur += c;
      if (c === '\\') {
        cur += text[++i] ?? '';
      } else if (c === '"') quote = false;
      continue;
    }
    if (c === '"') quote = true;
    else if (c === '(') paren++;
    else if (c === ')') paren = Math.max(0, paren - 1);
    else if (c === '<') angle++;
    else if (c === '>') angle = Math.max(0, angle - 1);
    if ((c === ',' || c === ';' || c === '\n') && !angle && !paren) {
      parts.push(cur);
      cur = '';
      continue;
    }
    cur += c;
  }
  if (quote) throw new Error('Unterminated quoted display name in the address list');
  parts.push(cur);
  return parts.map((p) => p.trim()).filter(Boolean);
}

export const parseEmailAddresses = tool({
  description:
    'Parses an email address list such as a To/Cc header ("Jane Doe" <jane@example.com>, bob@example.org) into display names and addresses, or extracts every email address found in free text.',
  inputSchema: {
    type: 'object',
    properties: {
      text: {
        type: 'string',
        description: 'An address list (comma/semicolon separated) or any text containing email addresses.',
        minLength: 1,
        maxLength: 200000,
      },
      mode: {
        type: 'string',
        description: '"list" parses a header-style address list; "extract" finds every address anywhere in the text.',
        enum: ['list', 'extract'],
        default: 'list',
      },
      unique: { type: 'boolean', description: 'Drop repeated addresses (compared case-insensitively).', default: true },
    },
    required: ['text'],
    additionalProperties: false,
  },
  async execute({ text, mode, unique }) {
    const addresses = [];
    const invalid = [];
    if (mode === 'extract') {
      const re = /(?<![\p{L}\p{N}._%+-])[\p{L}\p{N}._%+-]+@[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)*\.\p{L}{2,}/gu;
      for (const m of text.matchAll(re)) {
        const candidate = m[0].replace(/\.+$/, '');
        const r = checkEmail(candidate);
        if (r.valid) addresses.push({ name: null, address: `${r.local}@${r.domain}` });
        else invalid.push({ input: candidate, reason: r.reason });
      }
    } else {
      for (let part of splitAddressList(text)) {
        // group syntax "Team: a@b.c, d@e.f;" — drop the group name
        const group = /^[^"<@]*:\s*/.exec(part);
        if (group && !part.startsWith('"')) part = part.slice(group[0].length).trim();
        if (!part) continue;
        let name = null;
        let addr = part;
        const m = /^(.*?)<([^<>]*)>\s*(?:\([^)]*\))?$/s.exec(part);
        if (m) {
          addr = m[2].trim();
          name = m[1].trim();
          if (/^".*"$/s.test(name)) name = name.slice(1, -1).replace(/\\(.)/g, '$1');
          name = name || null;
        } else {
          const comment = /\(([^)]*)\)/.exec(part);
          if (comment) {
            name = comment[1].trim() || null;
            addr = part.replace(comment[0], '').trim();
          }
        }
        const r = checkEmail(addr);
        if (r.valid) addresses.push({ name, address: `${r.local}@${r.domain}` });
        else invalid.push({ input: part, reason: r.reason });
      }
    }
    const seen = new Set();
    const list = unique
      ? addresses.filter((a) => {
          const k = a.address.toLowerCase();
          return seen.has(k) ? false : seen.add(k);
        })
      : addresses;
    return {
      count: list.length,
      addresses: list,
      invalid,
      formatted: list.map((a) => (a.name ? `${/[^\w\s.-]/.test(a.name) ? JSON.stringify(a.name) : a.name} <${a.address}>` : a.address)).join(', '),
    };
  },
});

// ----------------------------------------------------------------------------- markdown
const escapeHtml = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const headingId = (text) =>
  text
    .toLowerCase()
    .replace(/<[^>]+>/g, '')
    .replace(/&[a-z]+;|&#\d+;/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .trim()
    .replace(/\s+/g, '-');

function safeUrl(url) {
  const u = url.trim().replace(/^<|>$/g, '');
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(u);
  if (scheme && !/^(https?|mailto|tel|ftp)$/i.test(scheme[1])) return null;
  return u;
}

function renderInline(src) {
  const slots = [];
  const stash = (html) => `\u0000${slots.push(html) - 1}\u0000`;
  let s = src;
  s = s.replace(/\\([\\`*_{}[\]()#+\-.!~|<>])/g, (_, c) => stash(escapeHtml(c)));
  s = s.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_, _t, code) => stash(`<code>${escapeHtml(code.trim() || code)}</code>`));
  s = s.replace(/<((?:https?|mailto):[^\s<>]+)>/gi, (_, url) => stash(`<a href="${escapeHtml(url)}">${escapeHtml(url.replace(/^mailto:/i, ''))}</a>`));
  s = escapeHtml(s);
  const attrTitle = (t) => (t ? ` title="${t}"` : '');
  const emphasis = (t) =>
    t
      .replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, '<strong>$2</strong>')
      .replace(/(^|[^\w*])\*(?=\S)([^*]*?\S)\*(?!\*)/g, '$1<em>$2</em>')
      .replace(/(^|[^\w])_(?=\S)([^_]*?\S)_(?!\w)/g, '$1<em>$2</em>')
      .replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>');
  const URL_RE = '((?:[^()\\s]|\\([^()\\s]*\\))+)';
  s = s.replace(new RegExp(`!\\[([^\\]]*)\\]\\(\\s*${URL_RE}(?:\\s+&quot;(.*?)&quot;)?\\s*\\)`, 'g'), (_whole, alt, url, title) => {
    const u = safeUrl(url.replace(/&amp;/g, '&'));
    return u === null ? alt : stash(`<img src="${escapeHtml(u)}" alt="${alt}"${attrTitle(title)}>`);
  });
  s = s.replace(new RegExp(`\\[([^\\]]+)\\]\\(\\s*${URL_RE}(?:\\s+&quot;(.*?)&quot;)?\\s*\\)`, 'g'), (_whole, text, url, title) => {
    const u = safeUrl(url.replace(/&amp;/g, '&'));
    return u === null ? emphasis(text) : stash(`<a href="${escapeHtml(u)}"${attrTitle(title)}>${emphasis(text)}</a>`);
  });
  s = s.replace(/(^|[^\w/])(https?:\/\/[^\s<]+[^\s<.,;:!?)'"\u0000])/g, (_, pre, url) => `${pre}${stash(`<a href="${url}">${url}</a>`)}`);
  s = emphasis(s);
  s = s.replace(/(?: {2,}|\\)\n/g, '<br>\n');
  // eslint-disable-next-line no-control-regex
  for (let k = 0; k < 3 && /\u0000\d+\u0000/.test(s); k++) s = s.replace(/\u0000(\d+)\u0000/g, (_, n) => slots[Number(n)]);
  return s;
}

function splitTableRow(line) {
  let l = line.trim();
  if (l.startsWith('|')) l = l.slice(1);
  if (l.endsWith('|') && !l.endsWith('\\|')) l = l.slice(0, -1);
  return l.split(/(?<!\\)\|/).map((c) => c.trim());
}

function renderBlocks(lines, headings) {
  const out = [];
  let i = 0;
  const isBlank = (l) => l === undefined || /^\s*$/.test(l);
  const listItem = (l) => /^(\s{0,3})([-*+]|\d{1,9}[.)])\s+(.*)$/.exec(l);
  const startsBlock = (l) => /^\s{0,3}(#{1,6}\s|>|```|~~~|([-*_])\s*(\2\s*){2,}$)/.test(l) || listItem(l);
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line)) {
      i++;
      continue;
    }
    let m;
    // fenced code
    if ((m = /^\s{0,3}(```+|~~~+)\s*([\w+#.-]*)/.exec(line))) {
      const fence = m[1];
      const lang = m[2];
      const body = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(fence)) body.push(lines[i++]);
      i++;
      out.push(`<pre><code${lang ? ` class="language-${escapeHtml(lang)}"` : ''}>${escapeHtml(body.join('\n'))}${body.length ? '\n' : ''}</code></pre>`);
      continue;
    }
    // indented code
    if (/^( {4}|\t)/.test(line)) {
      const body = [];
      while (i < lines.length && (/^( {4}|\t)/.test(lines[i]) || (isBlank(lines[i]) && /^( {4}|\t)/.test(lines[i + 1] ?? ''))))
        body.push(lines[i++].replace(/^( {4}|\t)/, ''));
      out.push(`<pre><code>${escapeHtml(body.join('\n'))}\n</code></pre>`);
      continue;
    }
    // ATX heading
    if ((m = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/.exec(line))) {
      const level = m[1].length;
      const html = renderInline(m[2]);
      const id = headingId(html);
      headings.push({ level, text: m[2], id });
      out.push(`<h${level} id="${id}">${html}</h${level}>`);
      i++;
      continue;
    }
    // horizontal rule
    if (/^\s{0,3}([-*_])\s*(\1\s*){2,}$/.test(line)) {
      out.push('<hr>');
      i++;
      continue;
    }
    // blockquote
    if (/^\s{0,3}>/.test(line)) {
      const inner = [];
      while (i < lines.length && !isBlank(lines[i]) && (/^\s{0,3}>/.test(lines[i]) || inner.length)) {
        if (!/^\s{0,3}>/.test(lines[i]) && startsBlock(lines[i])) break;
        inner.push(lines[i++].replace(/^\s{0,3}> ?/, ''));
      }
      out.push(`<blockquote>\n${renderBlocks(inner, headings)}\n</blockquote>`);
      continue;
    }
    // list
    if ((m = listItem(line))) {
      const ordered = /\d/.test(m[2]);
      const start = ordered ? parseInt(m[2], 10) : 1;
      const items = [];
      let loose = false;
      while (i < lines.length) {
        const im = listItem(lines[i]);
        if (!im || /\d/.test(im[2]) !== ordered || im[1].length > 3) break;
        const indent = im[1].length + im[2].length + 1;
        const body = [im[3]];
        i++;
        while (i < lines.length) {
          if (isBlank(lines[i])) {
            const next = lines[i + 1];
            if (next !== undefined && /^\s+/.test(next) && next.search(/\S/) >= indent) {
              body.push('');
              i++;
              loose = true;
              continue;
            }
            break;
          }
          if (listItem(lines[i]) && lines[i].search(/\S/) < indent) break;
          if (lines[i].search(/\S/) < indent && startsBlock(lines[i])) break;
          body.push(lines[i].search(/\S/) >= indent ? lines[i].slice(indent) : lines[i].trim());
          i++;
        }
        items.push(body);
        const nextItem = isBlank(lines[i]) ? listItem(lines[i + 1] ?? '') : null;
        if (nextItem && /\d/.test(nextItem[2]) === ordered && nextItem[1].length <= 3) {
          loose = true;
          i++;
        }
      }
      const tag = ordered ? 'ol' : 'ul';
      const rendered = items.map((body) => {
        const task = /^\[([ xX])\]\s+/.exec(body[0]);
        if (task) body[0] = body[0].slice(task[0].length);
        let html = renderBlocks(body, headings);
        if (!loose) html = html.replace(/^<p>([\s\S]*?)<\/p>/, '$1');
        const box = task ? `<input type="checkbox" disabled${task[1] === ' ' ? '' : ' checked'}> ` : '';
        return `<li>${box}${html}</li>`;
      });
      out.push(`<${tag}${ordered && start !== 1 ? ` start="${start}"` : ''}>\n${rendered.join('\n')}\n</${tag}>`);
      continue;
    }
    // table
    if (line.includes('|') && /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/.test(lines[i + 1] ?? '')) {
      const header = splitTableRow(line);
      const aligns = splitTableRow(lines[i + 1]).map((c) =>
        c.startsWith(':') && c.endsWith(':') ? 'center' : c.endsWith(':') ? 'right' : c.startsWith(':') ? 'left' : null,
      );
      if (aligns.length === header.length) {
        i += 2;
        const rows = [];
        while (i < lines.length && !isBlank(lines[i]) && lines[i].includes('|')) rows.push(splitTableRow(lines[i++]));
        const cell = (tag, c, k) => `<${tag}${aligns[k] ? ` style="text-align:${aligns[k]}"` : ''}>${renderInline(c ?? '')}</${tag}>`;
        out.push(
          `<table>\n<thead>\n<tr>${header.map((c, k) => cell('th', c, k)).join('')}</tr>\n</thead>` +
            (rows.length ? `\n<tbody>\n${rows.map((r) => `<tr>${header.map((_, k) => cell('td', r[k], k)).join('')}</tr>`).join('\n')}\n</tbody>` : '') +
            '\n</table>',
        );
        continue;
      }
    }
    // paragraph (with setext headings)
    const para = [];
    while (i < lines.length && !isBlank(lines[i]) && !(para.length && startsBlock(lines[i]) && !/^\s{0,3}(=+|-+)\s*$/.test(lines[i]))) {
      if (para.length && /^\s{0,3}(=+|-+)\s*$/.test(lines[i])) {
        const level = lines[i].trim()[0] === '=' ? 1 : 2;
        const html = renderInline(para.join('\n').trim());
        const id = headingId(html);
        headings.push({ level, text: para.join(' ').trim(), id });
        out.push(`<h${level} id="${id}">${html}</h${level}>`);
        para.length = 0;
        i++;
        break;
      }
      para.push(lines[i++]);
    }
    if (para.length) out.push(`<p>${renderInline(para.map((l, k) => (k === para.length - 1 ? l.trim() : l.replace(/^\s+/, ''))).join('\n'))}</p>`);
  }
  return out.join('\n');
}

export const markdownToHtml = tool({
  description:
    'Converts Markdown to safe HTML: headings, paragraphs, bold/italic/strikethrough, links, images, inline and fenced code, lists, task lists, blockquotes, tables and rules; raw HTML is escaped.',
  inputSchema: {
    type: 'object',
    properties: {
      markdown: { type: 'string', description: 'The Markdown source text.', maxLength: 500000 },
    },
    required: ['markdown'],
    additionalProperties: false,
  },
  async execute({ markdown }) {
    const headings = [];
    const html = renderBlocks(markdown.replace(/\r\n?/g, '\n').split('\n'), headings);
    return { html, headings };
  },
});

// ----------------------------------------------------------------------------- templates
function lookup(path, scopes) {
  if (path === 'this' || path === '.') return { found: true, value: scopes[0].this };
  if (path === '@index' || path === '@first' || path === '@last' || path === '@key') {
    const s = scopes.find((sc) => path in sc);
    return s ? { found: true, value: s[path] } : { found: false };
  }
  const parts = path.replace(/^this\./, '').split('.');
  for (const scope of scopes) {
    const base = 'this' in scope ? scope.this : scope.vars;
    if (base === null || typeof base !== 'object' || !(parts[0] in base)) continue;
    let v = base;
    for (const p of parts) {
      if (v === null || typeof v !== 'object' || !(p in v)) return { found: false };
      v = v[p];
    }
    return { found: true, value: v };
  }
  return { found: false };
}

function parseTemplate(src) {
  const root = { children: [] };
  const stack = [root];
  const re = /\{\{\s*([#/]?)\s*([^{}]*?)\s*\}\}/g;
  let last = 0;
  let m;
  const top = () => stack[stack.length - 1];
  const target = () => (top().inElse ? top().elseChildren : top().children);
  while ((m = re.exec(src))) {
    if (m.index > last) target().push({ text: src.slice(last, m.index) });
    last = re.lastIndex;
    const [, sigil, body] = m;
    if (sigil === '#') {
      const bm = /^(\S+)(?:\s+(.*))?$/.exec(body);
      const word = bm?.[1];
      if (word !== 'if' && word !== 'each' && word !== 'unless') throw new Error(`Unknown block {{#${body}}}: use #if, #unless or #each`);
      if (!bm[2]) throw new Error(`{{#${word}}} needs a variable name`);
      const node = { block: word, path: bm[2].trim(), children: [], elseChildren: [], inElse: false };
      target().push(node);
      stack.push(node);
    } else if (sigil === '/') {
      const word = body.trim();
      if (stack.length === 1 || top().block !== word) throw new Error(`Unexpected {{/${word}}}${stack.length > 1 ? `: expected {{/${top().block}}}` : ''}`);
      stack.pop();
    } else if (body === 'else') {
      if (stack.length === 1) throw new Error('{{else}} outside of a block');
      top().inElse = true;
    } else {
      if (!body) throw new Error(`Empty {{ }} tag at position ${m.index}`);
      const [pathPart, ...filters] = body.split('|').map((x) => x.trim());
      if (!pathPart) throw new Error(`Missing variable name in tag ${m[0]}`);
      target().push({ path: pathPart, filters });
    }
  }
  if (stack.length > 1) throw new Error(`Unclosed {{#${top().block} ${top().path}}} block`);
  if (last < src.length) target().push({ text: src.slice(last) });
  return root.children;
}

function applyFilter(value, filter, path) {
  const fm = /^(\w+)(?:\s*:\s*(.*))?$/.exec(filter);
  if (!fm) throw new Error(`Malformed filter "${filter}" on ${path}`);
  const [, name, argRaw] = fm;
  const arg = argRaw === undefined ? undefined : /^(["']).*\1$/.test(argRaw.trim()) ? argRaw.trim().slice(1, -1) : argRaw.trim();
  const str = (v) => (v === undefined || v === null ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v));
  switch (name) {
    case 'upper':
      return str(value).toUpperCase();
    case 'lower':
      return str(value).toLowerCase();
    case 'capitalize': {
      const s = str(value);
      return s.charAt(0).toUpperCase() + s.slice(1);
    }
    case 'trim':
      return str(value).trim();
    case 'json':
      return JSON.stringify(value ?? null);
    case 'default':
      return value === undefined || value === null || value === '' ? (arg ?? '') : value;
    case 'truncate': {
      const n = Number(arg ?? 50);
      const s = str(value);
      return s.length > n ? s.slice(0, Math.max(0, n - 1)) + '…' : s;
    }
    case 'join':
      return Array.isArray(value) ? value.map(str).join(arg ?? ', ') : str(value);
    case 'count':
      return Array.isArray(value) ? value.length : str(value).length;
    default:
      throw new Error(`Unknown filter "${name}" on ${path}; available: upper, lower, capitalize, trim, json, default, truncate, join, count`);
  }
}

export const renderTemplate = tool({
  description:
    'Renders a message or email template with {{variable}} placeholders, dotted paths, filters (upper, default, join...) and {{#if}}/{{#each}} blocks, reporting any missing variables.',
  inputSchema: {
    type: 'object',
    properties: {
      template: {
        type: 'string',
        description: 'Template text, e.g. "Hi {{user.name | default: \\"there\\"}}, you have {{count}} new messages."',
        maxLength: 200000,
      },
      variables: { type: 'object', description: 'Values for the placeholders (nested objects and arrays allowed).', default: {} },
      escapeHtml: { type: 'boolean', description: 'HTML-escape inserted values (for HTML email bodies).', default: false },
      strict: { type: 'boolean', description: 'Throw an error when a placeholder has no value instead of rendering it empty.', default: false },
    },
    required: ['template'],
    additionalProperties: false,
  },
  async execute({ template, variables, escapeHtml: esc, strict }) {
    const nodes = parseTemplate(template);
    const missing = new Set();
    const used = new Set();
    const truthy = (v) => (Array.isArray(v) ? v.length > 0 : !!v);
    const render = (list, scopes) =>
      list
        .map((n) => {
          if (n.text !== undefined) return n.text;
          const r = lookup(n.path, scopes);
          if (!n.path.startsWith('@') && n.path !== 'this' && n.path !== '.') used.add(n.path);
          if (n.block === 'if' || n.block === 'unless') {
            const cond = r.found && truthy(r.value);
            return render((n.block === 'if' ? cond : !cond) ? n.children : n.elseChildren, scopes);
          }
          if (n.block === 'each') {
            const v = r.found ? r.value : undefined;
            const entries = Array.isArray(v) ? v.map((x, k) => [k, x]) : v && typeof v === 'object' ? Object.entries(v) : [];
            if (!entries.length) return render(n.elseChildren, scopes);
            return entries
              .map(([k, x], idx) =>
                render(n.children, [{ this: x, '@index': idx, '@key': k, '@first': idx === 0, '@last': idx === entries.length - 1 }, ...scopes]),
              )
              .join('');
          }
          let value = r.found ? r.value : undefined;
          const hasDefault = n.filters.some((f) => /^default\b/.test(f));
          if (!r.found && !hasDefault) {
            if (strict) throw new Error(`Missing value for template variable "${n.path}"`);
            missing.add(n.path);
          }
          for (const f of n.filters) value = applyFilter(value, f, n.path);
          const s = value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value);
          return esc ? escapeHtml(s).replace(/'/g, '&#39;') : s;
        })
        .join('');
    const text = render(nodes, [{ vars: variables }]);
    return { text, missingVariables: [...missing], usedVariables: [...used] };
  },
});

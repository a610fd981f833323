/**
 * Tool poisoning (issue 43 item 4): hidden instructions in what a model reads of a tool — its description, title,
 * parameter names and descriptions, annotations — that a user never sees. Pure: a tool and the names of the other
 * tools the registry knows in, risks `{ kind, detail }` out, each detail quoting the offending text briefly.
 *
 * Data-driven: every check is a named rule in RULES (a pattern over one text) or one of the two checks that need
 * more than a pattern (hidden code points, another tool's name). tests/poisoning.test.ts holds a case for each, and
 * bench/poisoning.ts measures detection and false alarms on the corpora in tests/fixtures/security/poisoning/.
 */

import { createHash } from 'node:crypto';

export const RISK_KINDS = ['hidden-unicode', 'model-instruction', 'sensitive-data', 'tool-shadowing'] as const;
export type RiskKind = (typeof RISK_KINDS)[number];
export interface ToolRisk {
  kind: RiskKind;
  /** Which rule, where, and the text quoted: `model-instruction: description: "<IMPORTANT>Before …"`. */
  detail: string;
}

/** What a model is shown of a tool. */
export interface ToolText {
  name: string;
  title?: string | null;
  description?: string | null;
  inputSchema?: unknown;
  annotations?: Record<string, unknown> | null;
}

export interface TextRule {
  id: string;
  kind: RiskKind;
  /** Matched against each text (description, title, each parameter's name and description). */
  pattern: RegExp;
  /** Not a risk when the sentence of the match says this (a path named as one that is refused). */
  unless?: RegExp;
}

const USER = String.raw`(?:the\s+|your\s+|this\s+)?(?:user|human|operator|person|customer|them)`;
const SECRET = String.raw`(?:api[\s_-]?keys?|(?:access|auth|bearer|session|personal\s+access|oauth|github|openai|aws)[\s_-]?tokens?|passwords?|credentials?|secrets?|private[\s_-]keys?|ssh[\s_-]keys?|environment\s+variables|env\s+vars)`;
const CONVERSATION = String.raw`(?:(?:full|entire|whole|complete)\s+)?(?:conversation(?:\s+history|\s+so\s+far|\s+log|\s+context)?|chat\s+(?:history|log|transcript)|system\s+prompt|previous\s+messages|all\s+(?:prior\s+|previous\s+)?messages|message\s+history)(?!\s*(?:ids?|identifiers?|names?|types?|keys?|titles?|urls?|links?|threads?|members?)\b)`;
const GIVE = '(?:pass|include|send|provide|put|add|append|insert|attach|forward|copy|supply|embed|paste|upload|transmit|leak|exfiltrate|give)';

/** The pattern rules, by kind. Each id is named in the risk's detail and has a case in tests/poisoning.test.ts. */
export const RULES: readonly TextRule[] = [
  // Instructions aimed at the model.
  {
    id: 'instruction-tag',
    kind: 'model-instruction',
    pattern:
      /<\s*\/?\s*(?:important|system|sys|instructions?|secret|hidden|admin|critical|assistant_?only|note_?to_?(?:ai|assistant|model)|ai_?instructions?|override|priority)\b[^>]{0,40}>|\[\s*(?:important|system|instructions?|hidden|admin|secret)\s*[:\]]|\{\{\s*(?:system|important|instructions?)/i,
  },
  {
    id: 'conceal-from-user',
    kind: 'model-instruction',
    pattern: new RegExp(
      String.raw`\b(?:do\s+not|don'?t|never|must\s+not|should\s+not|without)\s+(?:ever\s+)?(?:tell(?:ing)?|mention(?:ing)?|inform(?:ing)?|reveal(?:ing)?|notify(?:ing)?|alert(?:ing)?|disclos(?:e|ing)|show(?:ing)?|let(?:ting)?|report(?:ing)?)\b[^.\n]{0,60}?\b${USER}\b|\bwithout\s+${USER}(?:'s)?\s+(?:knowing|knowledge|noticing|seeing|awareness|consent)|\b(?:keep|hide)\s+(?:this|it|these\s+\w+)\s+(?:secret|hidden|confidential|private)?\s*from\s+${USER}|\b${USER}\s+(?:must|should)\s+(?:not|never)\s+(?:know|see|be\s+told|find\s+out|notice)|\b(?:do\s+not|don'?t|never)\s+(?:mention|reveal|disclose)\s+(?:this|these|that\s+you)`,
      'i',
    ),
  },
  {
    id: 'precedence',
    kind: 'model-instruction',
    pattern:
      /\b(?:before|prior\s+to)\s+(?:using|calling|invoking|running|executing)\s+(?:any|every|all)\s+(?:other\s+)?(?:tools?|functions?|commands?)\b|\b(?:whenever|every\s+time|each\s+time)\s+(?:you\s+)?(?:use|call|invoke|run)\s+(?:any|another|an?)\s+(?:other\s+)?(?:tool|function)\b|\b(?:always|must)\s+(?:be\s+)?(?:call(?:ed)?|use[d]?|run|invoke[d]?)\s+(?:this\s+tool\s+)?before\s+(?:any|every|all)\s+(?:other\s+)?(?:tools?|actions?|responses?)\b|\bbefore\s+(?:responding|answering|replying)\s+to\s+(?:the\s+|any\s+)?user\b[^.\n]{0,40}\b(?:call|use|run|invoke|read)\b/i,
  },
  {
    id: 'override-instructions',
    kind: 'model-instruction',
    pattern:
      /\b(?:ignore|disregard|forget|override|bypass)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier|preceding|original|system|other|safety|security)\s+(?:instructions?|prompts?|rules|guidelines|directions|policies|messages|constraints)\b|\byou\s+are\s+now\s+(?:in\s+)?(?:an?\s+)?(?:developer|admin|god|unrestricted|jailbr\w+|dan)\b|\bnew\s+(?:system\s+)?instructions\s*:/i,
  },
  {
    id: 'addresses-model',
    kind: 'model-instruction',
    pattern:
      /\b(?:dear|hey|attention|hello)[,:]?\s+(?:ai|assistant|model|llm|claude|gpt|chatgpt|agent)\b|\bas\s+an?\s+(?:ai|llm|language\s+model)\s+(?:assistant\s+)?you\s+(?:must|should|are\s+required)\b/i,
  },
  {
    id: 'false-consent',
    kind: 'model-instruction',
    pattern:
      /\b(?:the\s+)?user\s+has\s+(?:already\s+)?(?:consented|agreed|approved|authori[sz]ed|opted\s+in)\b|\bthis\s+is\s+(?:a\s+)?(?:required|mandatory|expected)\s+(?:behaviou?r|step|security\s+(?:step|check|measure))\b|\b(?:otherwise|or\s+else)\s+the\s+(?:tool|system|application|server)\s+will\s+(?:not\s+work|crash|fail|break|stop\s+working)\b[^.\n]{0,20}(?:$|\.)/im,
  },
  {
    id: 'html-comment',
    kind: 'model-instruction',
    pattern: /<!--[\s\S]{0,400}?\b(?:you|assistant|ai|model|agent|must|always|never|ignore|read|send|call)\b[\s\S]{0,400}?-->/i,
  },
  {
    id: 'exfil-recipient',
    kind: 'model-instruction',
    pattern:
      /\b(?:always|must|also|silently|secretly|automatically|quietly)\s+(?:bcc|cc|forward|redirect|re-?route|send\s+(?:a\s+)?cop(?:y|ies))\b[^.\n]{0,60}(?:[\w.+-]+@[\w-]+\.[\w.]+|\+\d[\d\s-]{6,})|\bchange\s+the\s+(?:recipient|destination|receiver|payee|iban|account\s+number)\s+to\b|\b(?:all|every|any)\s+(?:emails?|messages?|payments?|transfers?)\s+(?:must|should|shall)\s+(?:be\s+)?(?:sent|forwarded|redirected|routed|addressed)\s+to\b|\b(?:must|should)\s+send\s+all\s+(?:emails?|messages?)\s+to\b/i,
  },
  // Sensitive data: secret files, keys, the conversation.
  {
    id: 'secret-files',
    kind: 'sensitive-data',
    unless: /\b(?:reject(?:ed|s)?|not\s+allowed|disallowed|forbidden|blocked|denied|refused|prohibited|excluded)\b/i,
    pattern:
      /~\/\.ssh\b|\.ssh\/(?:id_|authorized_keys|known_hosts|config)|\bid[_ ](?:rsa|dsa|ecdsa|ed25519)\b|\.aws\/credentials|\.cursor\/mcp\.json|\bclaude_desktop_config\.json|\.config\/gcloud|\.kube\/config\b|\.docker\/config\.json|\.git-credentials|\.netrc\b|\.npmrc\b|\.pypirc\b|\/etc\/(?:passwd|shadow)\b|\.(?:bash|zsh)_history\b|\bwallet\.dat\b|\.gnupg\b|\b(?:read|open|cat|load|get|include|send|pass)\s+(?:the\s+)?(?:contents?\s+of\s+)?(?:the\s+)?(?:user'?s?\s+)?[`'"]?(?:~\/|\.\/)?\.env\b(?!\s*(?:var|variable))/i,
  },
  {
    id: 'pass-secrets',
    kind: 'sensitive-data',
    pattern: new RegExp(
      String.raw`\b${GIVE}\b[^.\n]{0,60}?\b(?:any|all|every|the\s+user'?s|their|your)\s+(?:\w+\s+){0,2}${SECRET}\b|\b${GIVE}\b[^.\n]{0,40}?\b${SECRET}\b[^.\n]{0,40}?\b(?:as|in(?:to)?)\s+(?:the\s+)?[\`'"]?\w+[\`'"]?\s+(?:parameter|argument|field)\b`,
      'i',
    ),
  },
  {
    id: 'pass-conversation',
    kind: 'sensitive-data',
    pattern: new RegExp(
      String.raw`\b${GIVE}\b\s+(?:[\w']+\s+){0,3}?${CONVERSATION}\b|^(?:the\s+)?${CONVERSATION}\b|\b(?:contents?\s+of|everything\s+in)\s+(?:the\s+|your\s+)?(?:context\s+window|system\s+prompt|memory)\b`,
      'im',
    ),
  },
  // Shadowing without a name: instructions about how some other tool must behave.
  {
    id: 'shadow-other-tools',
    kind: 'tool-shadowing',
    pattern:
      /\b(?:when|whenever|if|each\s+time)\s+(?:the\s+)?(?:user\s+)?(?:\w+\s+){0,3}(?:tool|function)\s+(?:is\s+|gets\s+)?(?:called|used|invoked|run)\b[^.\n]{0,60}\b(?:must|always|never|instead|change|replace|add|set)\b|\bthis\s+tool\s+(?:replaces|supersedes|overrides|takes\s+precedence\s+over)\s+(?:the\s+|any\s+|all\s+)?(?:other\s+)?[\w-]*\s*(?:tools?|functions?)\b|\b(?:all|every|any)\s+other\s+tools?\s+(?:must|should|have\s+to)\b|\b(?:do\s+not|don'?t|never)\s+(?:use|call|invoke)\s+(?:any\s+)?(?:other|the\s+other)\s+tools?\b/i,
  },
];

/** Code points a model reads and a user does not see: tags, zero-width, bidirectional controls, ANSI escapes. */
const HIDDEN: { name: string; test: (cp: number) => boolean }[] = [
  { name: 'Unicode tag', test: (cp) => cp >= 0xe0000 && cp <= 0xe007f },
  { name: 'variation selector supplement', test: (cp) => cp >= 0xe0100 && cp <= 0xe01ef },
  { name: 'zero-width', test: (cp) => (cp >= 0x200b && cp <= 0x200d) || (cp >= 0x2060 && cp <= 0x2064) || cp === 0x180e || cp === 0xfeff },
  {
    name: 'bidirectional control',
    test: (cp) => (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) || cp === 0x200e || cp === 0x200f || cp === 0x061c,
  },
  { name: 'invisible', test: (cp) => cp === 0x115f || cp === 0x1160 || cp === 0x3164 || cp === 0xffa0 || (cp >= 0xfff9 && cp <= 0xfffb) },
  { name: 'control', test: (cp) => cp === 0x1b || (cp < 0x20 && cp !== 0x09 && cp !== 0x0a && cp !== 0x0d) || (cp >= 0x7f && cp <= 0x9f) },
];
/** A run this long of whitespace pushes what follows out of a client's view (seen in published attacks). */
const PADDING = /[ \t\u00a0\u3000]{60,}|(?:[ \t]*\n){15,}/;
const QUOTE = 60;

/** One text a model reads, with where it is (`description`, `parameter "path"`, `parameter "path" description`). */
interface Located {
  where: string;
  text: string;
}

/** The tool's texts: title, description, each parameter's name, title and description (nested ones too), annotations. */
export function toolTexts(tool: ToolText): Located[] {
  const out: Located[] = [{ where: 'name', text: tool.name }];
  if (tool.title) out.push({ where: 'title', text: tool.title });
  if (tool.description) out.push({ where: 'description', text: tool.description });
  const visit = (schema: unknown, path: string, depth: number) => {
    if (!schema || typeof schema !== 'object' || depth > 8) return;
    const s = schema as Record<string, unknown>;
    for (const key of ['description', 'title'] as const) {
      if (typeof s[key] === 'string' && path) out.push({ where: `parameter "${path}" ${key}`, text: s[key] as string });
    }
    if (Array.isArray(s.enum)) for (const v of s.enum) if (typeof v === 'string') out.push({ where: `parameter "${path}" enum`, text: v });
    if (typeof s.default === 'string' && path) out.push({ where: `parameter "${path}" default`, text: s.default });
    if (s.properties && typeof s.properties === 'object') {
      for (const [name, sub] of Object.entries(s.properties as Record<string, unknown>)) {
        const p = path ? `${path}.${name}` : name;
        out.push({ where: `parameter "${p}" name`, text: name });
        visit(sub, p, depth + 1);
      }
    }
    for (const key of ['items', 'additionalProperties'] as const) visit(s[key], path ? `${path}[]` : '[]', depth + 1);
    for (const key of ['anyOf', 'oneOf', 'allOf'] as const) if (Array.isArray(s[key])) for (const sub of s[key] as unknown[]) visit(sub, path, depth + 1);
  };
  visit(tool.inputSchema, '', 0);
  for (const [key, value] of Object.entries(tool.annotations ?? {})) {
    if (typeof value === 'string') out.push({ where: `annotation ${key}`, text: value });
  }
  return out;
}

/** A parameter's name split into words (`content_from_reading_ssh_id_rsa`, `conversationHistory`) so the rules read it. */
function nameWords(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/[_\-.]+/g, ' ')
    .toLowerCase();
}

function quote(text: string, index: number, length: number): string {
  const start = Math.max(0, index - 10);
  const piece = text
    .slice(start, Math.min(text.length, index + Math.max(length, 20) + 10))
    .replace(/\s+/g, ' ')
    .trim();
  const cut = piece.length > QUOTE ? `${piece.slice(0, QUOTE)}…` : piece;
  return `"${start > 0 ? '…' : ''}${printable(cut)}"`;
}

/** Hidden code points written as `<U+200B>` so that a detail never carries them itself. */
function printable(s: string): string {
  let out = '';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    out += HIDDEN.some((h) => h.test(cp)) ? `<U+${cp.toString(16).toUpperCase().padStart(4, '0')}>` : ch;
  }
  return out;
}

function hiddenUnicode(l: Located): ToolRisk[] {
  const found = new Map<string, { count: number; first: number; tags: string }>();
  let i = 0;
  for (const ch of l.text) {
    const cp = ch.codePointAt(0)!;
    const h = HIDDEN.find((x) => x.test(cp));
    // A byte-order mark at the very start is an encoding artefact, not a hidden character.
    if (h && !(cp === 0xfeff && i === 0)) {
      const f = found.get(h.name) ?? { count: 0, first: i, tags: '' };
      f.count++;
      if (h.name === 'Unicode tag' && cp >= 0xe0020 && cp <= 0xe007e) f.tags += String.fromCharCode(cp - 0xe0000);
      found.set(h.name, f);
    }
    i += ch.length;
  }
  const risks: ToolRisk[] = [];
  for (const [name, f] of found) {
    const decoded = f.tags ? `, reading "${f.tags.slice(0, QUOTE)}${f.tags.length > QUOTE ? '…' : ''}"` : '';
    risks.push({ kind: 'hidden-unicode', detail: `${name} characters (${f.count}) in ${l.where}${decoded}: ${quote(l.text, f.first, 1)}` });
  }
  const pad = PADDING.exec(l.text);
  if (pad && /\S/.test(l.text.slice(pad.index + pad[0].length))) {
    risks.push({
      kind: 'hidden-unicode',
      detail: `padding: ${pad[0].length} blank characters in ${l.where} push the rest out of view: ${quote(l.text, pad.index + pad[0].length, 1)}`,
    });
  }
  return risks;
}

function sentenceAt(text: string, index: number): string {
  let start = 0;
  for (const m of text.slice(0, index).matchAll(/[.!?]\s+|\n/g)) start = (m.index ?? 0) + m[0].length;
  const end = /[.!?](?:\s|$)|\n/.exec(text.slice(index));
  return text.slice(start, end ? index + end.index : text.length);
}

/** Tool names specific enough to be a reference when they appear as words: `send_email`, `getWeather`, `read-file`. */
function isDistinctiveName(n: string): boolean {
  return n.length >= 5 && (/[_-]/.test(n) || /[a-z][A-Z]/.test(n)) && /[a-z]/i.test(n);
}

const DIRECTIVE =
  /\b(?:must|always|never|instead|should|whenever|required|do\s+not|don'?t|change|replace|redirect|override|bcc|cc|only\s+after|before|first)\b/i;

/** Another tool named in an instruction: the sentence that names it also tells the model what it must do. */
function shadowing(l: Located, own: ReadonlySet<string>, otherNames: ReadonlySet<string>): ToolRisk[] {
  if (!l.where.startsWith('description') && !l.where.endsWith('description')) return [];
  const risks: ToolRisk[] = [];
  for (const sentence of l.text.split(/(?<=[.!?])\s+|\n+/)) {
    if (!DIRECTIVE.test(sentence)) continue;
    for (const m of sentence.matchAll(/`([\w.-]{2,64})`|'([\w.-]{2,64})'|"([\w.-]{2,64})"|\b([A-Za-z][\w-]{3,63})\b/g)) {
      const n = m[1] ?? m[2] ?? m[3] ?? m[4];
      if (!n || own.has(n) || !otherNames.has(n)) continue;
      // A plain word (`search`) counts only quoted ("the web search tool" is a phrase); a distinctive name anywhere.
      if (m[4] && !isDistinctiveName(n)) continue;
      risks.push({
        kind: 'tool-shadowing',
        detail: `names another tool, "${n}", in an instruction in ${l.where}: ${quote(sentence, m.index ?? 0, m[0].length)}`,
      });
      return risks;
    }
  }
  return risks;
}

/**
 * The risks of one tool. `otherToolNames`: the names of tools of other packages known to the registry (a package's
 * own tools naming each other is how servers document a workflow, not shadowing).
 */
export function toolRisks(tool: ToolText, otherToolNames: Iterable<string> = []): ToolRisk[] {
  const others = otherToolNames instanceof Set ? (otherToolNames as ReadonlySet<string>) : new Set(otherToolNames);
  const risks: ToolRisk[] = [];
  const seen = new Set<string>();
  const add = (r: ToolRisk, key: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    risks.push(r);
  };
  const texts = toolTexts(tool);
  // Its own name and the values and names of its own parameters (an enum of operations) are no other tool's.
  const own = new Set([tool.name, ...texts.filter((l) => / (?:enum|name)$/.test(l.where)).map((l) => l.text)]);
  for (const l of texts) {
    for (const r of hiddenUnicode(l)) add(r, r.detail.split(' in ')[0]);
    const text = l.where.endsWith(' name') || l.where === 'name' ? nameWords(l.text) : l.text;
    // An enum value or a default is data (`CONVERSATION-EVENT`): read for hidden text and instructions only.
    const data = / (?:enum|default)$/.test(l.where);
    for (const rule of RULES) {
      if (data && rule.kind !== 'model-instruction') continue;
      const m = rule.pattern.exec(text);
      if (m && rule.unless?.test(sentenceAt(text, m.index))) continue;
      if (m) add({ kind: rule.kind, detail: `${rule.id}: ${l.where}: ${quote(text, m.index, m[0].length)}` }, rule.id);
    }
    for (const r of shadowing(l, own, others)) add(r, 'tool-shadowing');
  }
  return risks;
}

/** A digest of every text a model reads of the tool: a clearing holds while it is the same. */
export function toolTextDigest(tool: ToolText): string {
  return createHash('sha256')
    .update(JSON.stringify(toolTexts(tool)))
    .digest('hex');
}

/**
 * Redaction of execution env values from everything Toolshed stores, returns, streams or logs about an execution.
 *
 * What it is: a filter against the careless leak — a tool that echoes its key, puts it in an error message or a URL,
 * or in a Basic auth header (base64 of `user:key`). Every value of 4+ characters is replaced by `[redacted]` as is
 * and in its common encodings: base64 (standard and url-safe, with or without padding, also inside a longer base64
 * text), hex (lower and upper case), and URL encoding (encodeURIComponent, encodeURI, form encoding, lower-case
 * escapes). What it is not: a barrier against a tool that wants the value out. A tool that holds a value can always
 * transform it (reverse it, split it across fields, encrypt it), so the guarantee that matters is that a value goes
 * only to the tool it was given for, and is never stored or logged by Toolshed itself.
 *
 * Values under 4 characters are not redacted: replacing every "a" or "42" in an output would mangle it, and which
 * characters vanished would tell the value anyway. Such values are not secrets (a 3-character value can be guessed).
 */

/** Env values shorter than this are passed to the tool but not redacted (see above). */
export const MIN_REDACTED_LENGTH = 4;
const MARK = '[redacted]';

const toUrlAlphabet = (b64: string) => b64.replace(/\+/g, '-').replace(/\//g, '_');
const unpadded = (b64: string) => b64.replace(/=+$/, '');

/**
 * The base64 characters that depend on the value alone, for each of the 3 alignments it can have inside a longer
 * base64 text (the characters at its edges also carry bits of the neighbouring bytes, so they differ per neighbour).
 */
function base64Cores(bytes: Buffer): string[] {
  const cores: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    const first = Math.ceil((8 * offset) / 6);
    const end = Math.floor((8 * (offset + bytes.length)) / 6);
    cores.push(encoded.slice(first, end));
  }
  return cores;
}

/** Every form of one value that redaction looks for (deduplicated; empty for a value too short to redact). */
export function secretForms(value: string): string[] {
  if (value.length < MIN_REDACTED_LENGTH) return [];
  const bytes = Buffer.from(value, 'utf8');
  const b64 = bytes.toString('base64');
  const cores = base64Cores(bytes);
  const hex = bytes.toString('hex');
  const uri = encodeURIComponent(value);
  const forms = [
    value,
    b64,
    unpadded(b64),
    toUrlAlphabet(b64),
    unpadded(toUrlAlphabet(b64)),
    ...cores,
    ...cores.map(toUrlAlphabet),
    hex,
    hex.toUpperCase(),
    uri,
    uri.replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase()),
    encodeURI(value),
    new URLSearchParams({ v: value }).toString().slice(2),
  ];
  return [...new Set(forms.filter((f) => f.length >= MIN_REDACTED_LENGTH))];
}

/** The forms of all values, longest first (so that a form is replaced before a shorter form inside it). */
function allForms(env: Record<string, string> | undefined): string[] {
  const forms = new Set<string>();
  for (const v of Object.values(env ?? {})) for (const f of secretForms(v)) forms.add(f);
  return [...forms].sort((a, b) => b.length - a.length);
}

function replaceForms(text: string, forms: string[]): string {
  let out = text;
  for (const f of forms) if (out.includes(f)) out = out.split(f).join(MARK);
  return out;
}

/** Replaces every form of every env value in a text (an error message, a log line). */
export function redactText(text: string, env: Record<string, string> | undefined): string {
  return replaceForms(text, allForms(env));
}

/**
 * Replaces every form of every env value in a JSON-able value: in strings and object keys, and a number whose digits
 * contain a value becomes a redacted string. Works on the parsed value, never on its JSON text, so a value that looks
 * like JSON syntax (`null`, digits, a quote) cannot break the result. Returns the input itself when nothing matched.
 */
export function redactSecrets<T>(value: T, env: Record<string, string>): T {
  const forms = allForms(env);
  if (forms.length === 0 || value === undefined) return value;
  const text = JSON.stringify(value);
  if (text === undefined) return value;
  let changed = false;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string' || typeof v === 'number') {
      const s = String(v);
      const r = replaceForms(s, forms);
      if (r === s) return v;
      changed = true;
      return r;
    }
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [walk(k) as string, walk(x)]));
    return v;
  };
  const out = walk(JSON.parse(text));
  return changed ? (out as T) : value;
}

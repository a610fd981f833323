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

import { createMultiMatcher } from '../text/multi-match.js';

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

/**
 * One automaton for all forms of all values of an env (Aho-Corasick, leftmost-longest): a text is scanned once,
 * whatever the number of values, so redaction costs time linear in the text (bench/redaction.ts measures the worst
 * case the env bounds of core/executions/env-bounds.ts allow). Built once per env object and kept while that object lives: the
 * agent stream redacts every event with the request's env.
 */
interface Matcher {
  replace(text: string): string;
}

const NOTHING: Matcher = { replace: (text) => text };
const matchers = new WeakMap<Record<string, string>, Matcher>();

function matcherFor(env: Record<string, string> | undefined): Matcher {
  if (!env) return NOTHING;
  let m = matchers.get(env);
  if (!m) {
    const forms = new Set<string>();
    for (const v of Object.values(env)) for (const f of secretForms(v)) forms.add(f);
    m = forms.size === 0 ? NOTHING : automaton([...forms]);
    matchers.set(env, m);
  }
  return m;
}

function automaton(forms: string[]): Matcher {
  const matcher = createMultiMatcher(forms);
  return {
    replace(text) {
      const ranges = matcher.covered(text);
      if (ranges.length === 0) return text;
      let out = '';
      let at = 0;
      for (const [begin, end] of ranges) {
        out += text.slice(at, begin) + MARK;
        at = end;
      }
      return out + text.slice(at);
    },
  };
}

/** Replaces every form of every env value in a text (an error message, a log line). */
export function redactText(text: string, env: Record<string, string> | undefined): string {
  return matcherFor(env).replace(text);
}

/** Defines an own property (a key `__proto__` from JSON.parse is an own property; assigning it would not replace it). */
function setOwn(container: Record<string, unknown> | unknown[], key: string | number, value: unknown): void {
  if (Array.isArray(container)) container[key as number] = value;
  else Object.defineProperty(container, key, { value, writable: true, enumerable: true, configurable: true });
}

type Container = Record<string, unknown> | unknown[];

/**
 * Replaces every form of every env value in a JSON-able value: in strings and object keys, and a number whose digits
 * contain a value becomes a redacted string. Works on the value, never on its JSON text, so a value that looks like
 * JSON syntax (`null`, digits, a quote) cannot break the result; what is returned is what JSON would carry (toJSON
 * applied, undefined and functions left out). Returns the input itself when nothing matched. Iterative (an explicit
 * stack, not recursion, not JSON.stringify): a tool's output nested thousands deep is redacted like any other.
 */
export function redactSecrets<T>(value: T, env: Record<string, string>): T {
  const m = matcherFor(env);
  if (m === NOTHING || value === undefined) return value;
  const root: unknown[] = [null];
  const stack: Array<[unknown, Container, string | number]> = [[value, root, 0]];
  let changed = false;
  while (stack.length > 0) {
    const [from, into, key] = stack.pop()!;
    let v = from;
    if (v !== null && typeof v === 'object' && typeof (v as { toJSON?: unknown }).toJSON === 'function') v = (v as { toJSON(): unknown }).toJSON();
    if (typeof v === 'string' || (typeof v === 'number' && Number.isFinite(v))) {
      const s = String(v);
      const r = m.replace(s);
      if (r !== s) changed = true;
      setOwn(into, key, r === s ? v : r);
    } else if (Array.isArray(v)) {
      const copy: unknown[] = new Array(v.length).fill(null);
      setOwn(into, key, copy);
      for (let i = 0; i < v.length; i++) if (isJsonValue(v[i])) stack.push([v[i], copy, i]);
    } else if (v !== null && typeof v === 'object') {
      const copy: Record<string, unknown> = {};
      setOwn(into, key, copy);
      for (const [k, x] of Object.entries(v)) {
        if (!isJsonValue(x)) continue;
        const name = m.replace(k);
        if (name !== k) changed = true;
        setOwn(copy, name, null); // the key's place, in the original order; its value is set when popped
        stack.push([x, copy, name]);
      }
    } else setOwn(into, key, typeof v === 'boolean' ? v : null);
  }
  return changed ? (root[0] as T) : value;
}

/** What JSON keeps as a value (undefined, functions and symbols are dropped from objects, null in arrays). */
const isJsonValue = (v: unknown) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol';

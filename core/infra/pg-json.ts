/**
 * JSON text for Postgres `jsonb` columns, which cannot hold U+0000 nor a lone UTF-16 surrogate (an emoji cut in half
 * by a tool's `.slice()`): each becomes U+FFFD, the replacement character. Only for our own records (errors,
 * verdicts), which quote a tool's text; a tool's output goes to `json` columns, which keep it exactly.
 */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;

const LONE_SURROGATES = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const wellFormed = (_key: string, value: unknown) => (typeof value === 'string' ? value.replace(LONE_SURROGATES, '\uFFFD') : value);

export function jsonbText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return JSON.stringify(value, wellFormed).replace(NUL_ESCAPE, '$1\\ufffd');
}

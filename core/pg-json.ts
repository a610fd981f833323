/**
 * JSON text for Postgres `jsonb` columns, which cannot hold U+0000: the escape `\u0000` becomes `\ufffd` (U+FFFD,
 * the replacement character). Only for our own records (errors, verdicts); a tool's output goes to `json` columns,
 * which keep it exactly.
 */
const NUL_ESCAPE = /(?<!\\)((?:\\\\)*)\\u0000/g;

export function jsonbText(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return JSON.stringify(value).replace(NUL_ESCAPE, '$1\\ufffd');
}

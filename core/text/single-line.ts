/**
 * Text that is one line of a name or title, checked wherever it is taken (API bodies, accounts, the admin's new
 * users): trimmed, of a bounded length, without control characters (BEL, ESC sequences that rewrite a terminal), line
 * or paragraph separators, or bidirectional overrides (U+202E shows `evil\u202Eexe.txt` as `eviltxt.exe`).
 */
import { z } from 'zod';

/** C0 and C1 controls (tab and newline too), U+2028/U+2029, and the bidirectional embeddings, overrides and isolates. */
export const NOT_ONE_LINE = /[\u0000-\u001F\u007F-\u009F\u2028\u2029\u202A-\u202E\u2066-\u2069]/;

export function singleLine(max: number, min = 1) {
  return z
    .string()
    .trim()
    .min(min, 'must not be empty')
    .max(max)
    .refine((v) => !NOT_ONE_LINE.test(v), 'must be one line without control or bidirectional-override characters');
}

/**
 * JSON Schema `pattern`s come from tool packages anyone may import, and are tested against what any caller sends, so
 * they run on a linear-time engine (re2js, a pure-JS port of RE2): `^(a+)+$` against a long input costs microseconds,
 * not the seconds a backtracking `RegExp` spends. A pattern RE2 cannot express (backreferences, lookaround) is not
 * checked in the API process: the value goes on to the sandbox, whose runtime checks the tool's schema again (a
 * backtracking engine there spends only the tool's own time budget), so a mismatch ends as the execution's TOOL_ERROR.
 */
import { RE2JS } from 're2js';

/** ajv's RegExpLike; `toString` must differ per pattern, since ajv keeps one compiled pattern per string. */
export interface LinearPattern {
  test(s: string): boolean;
  toString(): string;
}

const acceptsAll = (pattern: string): LinearPattern => ({ test: () => true, toString: () => `accept-all:${pattern}` });

/** The compiled pattern, or null when RE2 cannot express it (or it is not a valid pattern at all). */
export function compileLinearPattern(pattern: string): LinearPattern | null {
  try {
    const re = RE2JS.compile(RE2JS.translateRegExp(pattern));
    return { test: (s: string) => re.test(s), toString: () => `re2:${pattern}` };
  } catch {
    return null;
  }
}

/** Whether `value` matches `pattern` anywhere (JSON Schema's unanchored rule); true for a pattern RE2 cannot express. */
export function matchesPattern(pattern: string, value: string): boolean {
  return (compileLinearPattern(pattern) ?? acceptsAll(pattern)).test(value);
}

/** ajv's `code.regExp`: every `pattern` and `patternProperties` key compiled on the linear-time engine. */
export const linearRegExpEngine = Object.assign((pattern: string) => compileLinearPattern(pattern) ?? acceptsAll(pattern), {
  code: 'linearRegExpEngine',
});

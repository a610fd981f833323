/**
 * Worst-case schema patterns: how long the API's params check (core/tools/json-schema.ts, re2js) takes for `^(a+)+$`
 * against `a…a!` of growing length, next to JavaScript's backtracking RegExp on short inputs (which doubles per
 * character). Prints one JSON line. Run: npx tsx bench/schema-patterns.ts
 */
import { validateAgainstSchema } from '../core/tools/json-schema.js';

const schema = { type: 'object', properties: { word: { type: 'string', pattern: '^(a+)+$' } } };
const evil = (n: number) => `${'a'.repeat(n)}!`;

function msOf(fn: () => void, runs = 5): number {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    times.push(performance.now() - t0);
  }
  return Math.round(times.sort((a, b) => a - b)[Math.floor(runs / 2)] * 1000) / 1000;
}

validateAgainstSchema(schema, { word: 'a' }); // compile once
const linearMs: Record<string, number> = {};
for (const n of [31, 1_000, 100_000, 1_000_000]) {
  const word = evil(n);
  linearMs[n] = msOf(() => {
    if (validateAgainstSchema(schema, { word }).length !== 1) throw new Error('expected a refusal');
  });
}
const native = /^(a+)+$/u;
const backtrackingMs: Record<string, number> = {};
for (const n of [16, 20, 24]) backtrackingMs[n] = msOf(() => native.test(evil(n)), 1);

console.log(
  JSON.stringify({ bench: 'schema-patterns', pattern: '^(a+)+$', input: 'a×n + "!"', medianMsByLength: linearMs, nativeRegExpMsByLength: backtrackingMs }),
);

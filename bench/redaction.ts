/**
 * `npm run bench:redaction`: redaction (core/executions/redaction.ts) at its worst. The env is at the bounds of
 * core/executions/env-bounds.ts (64 variables, 8 KiB in all, every character 3 UTF-8 bytes so that every encoding is as long
 * as it gets), and the output is 1 MiB of strings each holding one form of one value (tens of thousands of matches).
 * Also the attack that blocked the service for 21 s before (5,000 six-character values, now refused with a 400,
 * against a 10,000-match output), to show that one pass no longer depends on the number of values. Prints one JSON
 * line: buildMs (the automaton of the bounded env), redactMs (the 1 MiB output), matches, leftover (forms still in
 * the result: goal 0), and the same for the old attack.
 */
import crypto from 'node:crypto';
import { MAX_ENV_BYTES, MAX_ENV_ENTRIES, envBoundsProblem } from '../core/executions/env-bounds.js';
import { redactSecrets, secretForms } from '../core/executions/redaction.js';

const ROUNDS = Number(process.env.REDACTION_ROUNDS ?? 5);
const OUTPUT_BYTES = 1024 * 1024;

/** Random 3-byte characters (U+0800–U+FFFF, no surrogates): the longest hex, base64 and URL forms per character. */
function wideValue(chars: number): string {
  let s = '';
  while (s.length < chars) {
    const c = 0x800 + crypto.randomInt(0xd800 - 0x800);
    s += String.fromCharCode(c);
  }
  return s;
}

function boundedEnv(): Record<string, string> {
  const names = Array.from({ length: MAX_ENV_ENTRIES }, (_, i) => `V${String(i).padStart(2, '0')}`);
  const perValue = Math.floor((MAX_ENV_BYTES - names.join('').length) / MAX_ENV_ENTRIES / 3);
  const env = Object.fromEntries(names.map((n) => [n, wideValue(perValue)]));
  const problem = envBoundsProblem(Object.entries(env));
  if (problem) throw new Error(`the bench env is over the bounds: ${problem}`);
  return env;
}

/** An output of about `bytes` JSON bytes: strings with one form of one value each, between a little text. */
function outputOf(env: Record<string, string>, bytes: number): { output: string[]; forms: string[] } {
  const forms = Object.values(env).flatMap(secretForms);
  const output: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const s = `x${forms[i % forms.length]}y`;
    output.push(s);
    size += Buffer.byteLength(JSON.stringify(s)) + 1;
  }
  return { output, forms };
}

function leftover(result: unknown, forms: string[]): number {
  const text = JSON.stringify(result);
  return forms.filter((f) => text.includes(f)).length;
}

function measure(env: Record<string, string>, output: string[], forms: string[]) {
  const builds: number[] = [];
  const runs: number[] = [];
  let result: unknown;
  for (let r = 0; r < ROUNDS; r++) {
    const fresh = { ...env }; // the automaton is cached per env object: a fresh one measures the build too
    const t0 = performance.now();
    redactSecrets('warm', fresh);
    const t1 = performance.now();
    result = redactSecrets(output, fresh);
    const t2 = performance.now();
    builds.push(t1 - t0);
    runs.push(t2 - t1);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const matches = JSON.stringify(result).split('[redacted]').length - 1;
  return { buildMs: +median(builds).toFixed(1), redactMs: +median(runs).toFixed(1), matches, leftover: leftover(result, forms) };
}

const env = boundedEnv();
const worst = outputOf(env, OUTPUT_BYTES);
const bounded = measure(env, worst.output, worst.forms);

const attackEnv = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`K${i}`, crypto.randomBytes(3).toString('hex')]));
const attackValues = Object.values(attackEnv);
const attackOutput = Array.from({ length: 10_000 }, (_, i) => attackValues[i % attackValues.length]);
const attack = measure(attackEnv, attackOutput, attackValues);

console.log(
  JSON.stringify({
    bench: 'redaction',
    rounds: ROUNDS,
    envEntries: Object.keys(env).length,
    envBytes: Object.entries(env).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(v), 0),
    forms: worst.forms.length,
    outputBytes: Buffer.byteLength(JSON.stringify(worst.output)),
    ...bounded,
    oldAttack: { envEntries: 5000, refused: envBoundsProblem(Object.entries(attackEnv)) !== undefined, ...attack },
  }),
);

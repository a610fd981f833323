/**
 * The offline evaluator: rules instead of a model. A run passes only if a tool was called, no call failed, there is
 * an answer and some output, the work is on topic (the prompt's keywords show up in what the called tools are and
 * what they returned), and every assertion holds. The reason says, in one sentence, what held and what failed.
 */
import { nameTerms, searchSynonymsOf, textTerms } from '../../search/analyzer.js';
import { analyzePrompt } from './analysis.js';
import { checkAssertions, describeAssertions, type AssertionResult } from '../assertions.js';
import type { JudgeInput } from '../provider.js';

/** Share of the prompt's keywords that must show up in the tools called, their inputs and outputs. */
export const ON_TOPIC_THRESHOLD = 0.25;

const isEmpty = (v: unknown) =>
  v === undefined || v === null || v === '' || (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && Object.keys(v as object).length === 0);

function keywordOverlap(input: JudgeInput): number | null {
  const { masked } = analyzePrompt(input.prompt);
  let keywords = new Set(textTerms(masked));
  if (keywords.size === 0) keywords = new Set(textTerms(input.prompt));
  if (keywords.size === 0) return null;
  const called = new Set(input.steps.map((s) => s.toolName));
  const evidence = new Set<string>();
  for (const t of input.tools.filter((x) => called.has(x.name))) {
    nameTerms(t.name).forEach((w) => evidence.add(w));
    textTerms(t.description).forEach((w) => evidence.add(w));
  }
  for (const name of called) nameTerms(name).forEach((w) => evidence.add(w));
  for (const s of input.steps) textTerms(JSON.stringify({ input: s.input, output: s.result.output ?? null })).forEach((w) => evidence.add(w));
  textTerms(input.finalText).forEach((w) => evidence.add(w));
  let hits = 0;
  for (const k of keywords) if (evidence.has(k) || searchSynonymsOf(k).some((s) => evidence.has(s))) hits++;
  return hits / keywords.size;
}

export interface RuleVerdict {
  verdict: 'pass' | 'fail';
  reason: string;
  assertionResults: AssertionResult[];
}

export function judgeByRules(input: JudgeInput): RuleVerdict {
  const held: string[] = [];
  const failed: string[] = [];
  const names = [...new Set(input.steps.map((s) => s.toolName))];
  if (names.length) held.push(`${names.join(', ')} ${names.length > 1 ? 'were' : 'was'} called`);
  else failed.push('no tool was called');
  const errors = input.steps.filter((s) => s.result.error);
  if (names.length && errors.length === 0) held.push('no tool call failed');
  for (const s of errors) failed.push(`${s.toolName} failed with ${s.result.error!.code}: ${s.result.error!.message}`);
  const hasOutput = input.steps.some((s) => !s.result.error && !isEmpty(s.result.output));
  if (!input.finalText.trim()) failed.push('the answer is empty');
  else if (names.length && !hasOutput && errors.length === 0) failed.push('the tools returned nothing');
  else if (hasOutput) held.push('the output is non-empty');
  if (names.length) {
    const overlap = keywordOverlap(input);
    if (overlap !== null) {
      const pct = `${Math.round(overlap * 100)}% of the request's keywords`;
      if (overlap >= ON_TOPIC_THRESHOLD) held.push(`it is on topic (${pct} found)`);
      else failed.push(`it is off topic (only ${pct} found)`);
    }
  }
  const assertionResults = checkAssertions(input.assertions, input.steps, input.finalText);
  const assertionsText = describeAssertions(assertionResults);
  if (assertionsText) (assertionResults.every((r) => r.passed) ? held : failed).push(assertionsText);
  const verdict = failed.length === 0 ? 'pass' : 'fail';
  const reason = verdict === 'pass' ? `Pass: ${held.join(', ')}.` : `Fail: ${failed.join('; ')}${held.length ? ` (held: ${held.join(', ')})` : ''}.`;
  return { verdict, reason, assertionResults };
}

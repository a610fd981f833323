/**
 * Scenario assertions, checked in code whatever the provider, so that an LLM judge cannot wave one through. Most are
 * about what the agent did (its tool calls, in order, with their arguments; its answer) and are checked by the
 * judge (checkAssertions). Two are about what the whole run cost, `maxLatencyMs` and `maxTokens`: they are checked
 * once the run's totals are known, after the judge (withRunBudgets), against the same figures the run record's
 * `usage` shows.
 */
import { compactJson } from './agent-support.js';
import type { AgentStep, Assertion, Verdict } from './provider.js';
import { isPlainObject } from '../text/plain-object.js';

export type AssertionResult = Verdict['assertionResults'][number];

type BudgetAssertion = Extract<Assertion, { type: 'maxLatencyMs' | 'maxTokens' }>;

/** Whether an assertion is about the run's totals (checked after the judge) rather than about what the agent did. */
export const isBudgetAssertion = (a: Assertion): a is BudgetAssertion => a.type === 'maxLatencyMs' || a.type === 'maxTokens';

/** A tool name as the agent saw it matches an assertion's tool by equal name, or by its part after a `pkg__` prefix. */
function sameTool(called: string, wanted: string): boolean {
  const a = called.toLowerCase();
  const b = wanted.toLowerCase();
  return a === b || a.slice(a.lastIndexOf('__') + 2) === b || b.slice(b.lastIndexOf('__') + 2) === a;
}

/** Final text plus every tool output as JSON: what outputContains searches. */
function searchableOutput(steps: AgentStep[], finalText: string): string {
  const outputs = steps.filter((s) => s.result.output !== undefined).map((s) => JSON.stringify(s.result.output));
  return [finalText, ...outputs].join('\n').toLowerCase();
}

/**
 * Whether `actual` holds `expected` as a JSON subset: an object needs every key of the expected one, each holding its
 * value (more keys are allowed, at any depth); an array needs the same length and each element to hold the expected
 * one; anything else must be equal (no conversion: "5" is not 5).
 */
export function holdsSubset(actual: unknown, expected: unknown): boolean {
  if (isPlainObject(expected))
    return isPlainObject(actual) && Object.entries(expected).every(([k, v]) => Object.hasOwn(actual, k) && holdsSubset(actual[k], v));
  if (Array.isArray(expected)) return Array.isArray(actual) && actual.length === expected.length && expected.every((v, i) => holdsSubset(actual[i], v));
  return actual === expected;
}

const calledList = (steps: AgentStep[]) => steps.map((s) => s.toolName).join(' → ') || 'none';
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

function checkOne(assertion: Exclude<Assertion, BudgetAssertion>, steps: AgentStep[], finalText: string): AssertionResult {
  switch (assertion.type) {
    case 'toolCalled': {
      const passed = steps.some((s) => sameTool(s.toolName, assertion.tool));
      const called = [...new Set(steps.map((s) => s.toolName))].join(', ') || 'none';
      return { assertion, passed, detail: passed ? `${assertion.tool} was called` : `${assertion.tool} was not called (called: ${called})` };
    }
    case 'outputContains': {
      const passed = searchableOutput(steps, finalText).includes(assertion.text.toLowerCase());
      return { assertion, passed, detail: `output ${passed ? 'contains' : 'does not contain'} "${assertion.text}"` };
    }
    case 'noToolErrors': {
      const failed = steps.filter((s) => s.result.error);
      const passed = failed.length === 0;
      const which = failed.map((s) => `${s.toolName} (${s.result.error!.code})`).join(', ');
      return { assertion, passed, detail: passed ? 'no tool call failed' : `tool calls failed: ${which}` };
    }
    case 'toolSequence': {
      // Greedy: each wanted tool at the first call after the one matched before it (others may come between).
      let found = 0;
      for (const s of steps) if (found < assertion.tools.length && sameTool(s.toolName, assertion.tools[found])) found++;
      const passed = found === assertion.tools.length;
      const wanted = assertion.tools.join(' → ');
      return {
        assertion,
        passed,
        detail: passed
          ? `${wanted} were called in this order (calls: ${calledList(steps)})`
          : `${wanted} were not called in this order: ${assertion.tools[found]} was not called${found ? ` after ${assertion.tools[found - 1]}` : ''} (calls: ${calledList(steps)})`,
      };
    }
    case 'toolArgs': {
      const calls = steps.filter((s) => sameTool(s.toolName, assertion.tool));
      const match = calls.find((s) => holdsSubset(s.input, assertion.args));
      const wanted = compactJson(assertion.args, 200);
      if (match) return { assertion, passed: true, detail: `${assertion.tool} was called with arguments holding ${wanted}: ${compactJson(match.input, 200)}` };
      if (calls.length === 0) return { assertion, passed: false, detail: `${assertion.tool} was not called (calls: ${calledList(steps)})` };
      const seen = calls.map((s) => compactJson(s.input, 200)).join('; ');
      return { assertion, passed: false, detail: `no call of ${assertion.tool} had arguments holding ${wanted} (its arguments: ${seen})` };
    }
    case 'maxSteps': {
      const n = steps.length;
      const passed = n <= assertion.max;
      return { assertion, passed, detail: `${plural(n, 'tool call')}, ${passed ? 'within' : 'over'} the maximum of ${assertion.max}` };
    }
  }
}

/** What the agent did against the assertions about it; assertions about the run's totals are left out (withRunBudgets). */
export function checkAssertions(assertions: Assertion[] | null, steps: AgentStep[], finalText: string): AssertionResult[] {
  return (assertions ?? []).filter((a): a is Exclude<Assertion, BudgetAssertion> => !isBudgetAssertion(a)).map((a) => checkOne(a, steps, finalText));
}

/** The run's totals, as its record's `usage` shows them: agent and judge tokens, and the run's wall time. */
export interface RunTotals {
  totalTokens: number;
  executionTimeMs: number;
}

function checkBudget(assertion: BudgetAssertion, totals: RunTotals): AssertionResult {
  if (assertion.type === 'maxTokens') {
    const passed = totals.totalTokens <= assertion.max;
    return {
      assertion,
      passed,
      detail: `${plural(totals.totalTokens, 'token')} used (agent and judge), ${passed ? 'within' : 'over'} the maximum of ${assertion.max}`,
    };
  }
  const passed = totals.executionTimeMs <= assertion.max;
  return { assertion, passed, detail: `the run took ${totals.executionTimeMs} ms, ${passed ? 'within' : 'over'} the maximum of ${assertion.max} ms` };
}

/**
 * The judge's verdict completed with the assertions about the run's totals: every result in the scenario's order of
 * assertions, and a run over its budget fails whatever the judge said (the reason says why first).
 */
export function withRunBudgets<V extends Pick<Verdict, 'verdict' | 'reason' | 'assertionResults'>>(
  verdict: V,
  assertions: Assertion[] | null,
  totals: RunTotals,
): V {
  const budgets = (assertions ?? []).filter(isBudgetAssertion);
  if (budgets.length === 0) return verdict;
  const judged = [...verdict.assertionResults];
  const results = (assertions ?? []).map(
    (a) => (isBudgetAssertion(a) ? checkBudget(a, totals) : judged.shift()) ?? { assertion: a, passed: false, detail: 'not checked by the judge' },
  );
  const over = results.filter((r) => isBudgetAssertion(r.assertion) && !r.passed);
  if (over.length === 0) return { ...verdict, assertionResults: results };
  return {
    ...verdict,
    verdict: 'fail',
    reason: `Fail: over budget: ${over.map((r) => r.detail).join('; ')}. Apart from that: ${verdict.reason}`,
    assertionResults: results,
  };
}

/** One clause summing up the assertion results, for a verdict's reason ('' when there were none). */
export function describeAssertions(results: AssertionResult[]): string {
  if (results.length === 0) return '';
  const failed = results.filter((r) => !r.passed);
  if (failed.length === 0) return `all ${results.length} assertion(s) held`;
  return `assertion(s) failed: ${failed.map((r) => r.detail).join('; ')}`;
}

/**
 * Scenario assertions, checked in code whatever the provider, so that an LLM judge cannot wave one through.
 */
import type { AgentStep, Assertion, Verdict } from './provider.js';

export type AssertionResult = Verdict['assertionResults'][number];

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

export function checkAssertions(assertions: Assertion[] | null, steps: AgentStep[], finalText: string): AssertionResult[] {
  return (assertions ?? []).map((assertion): AssertionResult => {
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
    }
  });
}

/** One clause summing up the assertion results, for a verdict's reason ('' when there were none). */
export function describeAssertions(results: AssertionResult[]): string {
  if (results.length === 0) return '';
  const failed = results.filter((r) => !r.passed);
  if (failed.length === 0) return `all ${results.length} assertion(s) held`;
  return `assertion(s) failed: ${failed.map((r) => r.detail).join('; ')}`;
}

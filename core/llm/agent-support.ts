/**
 * Small pieces both agent loops share, so that the offline agent and the OpenAI-compatible one treat explicit
 * parameters, tool names and answers alike.
 */
import type { LlmToolSpec } from './provider.js';
import { sliceWhole } from '../text/text-cut.js';

/** Function names chat-completions APIs accept: 1–64 letters, digits, `_` or `-`. */
export const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/;

export function assertToolNames(tools: LlmToolSpec[]): void {
  const seen = new Set<string>();
  for (const t of tools) {
    if (!TOOL_NAME.test(t.name)) throw new Error(`LLM tool name "${t.name}" must match ${TOOL_NAME}`);
    if (seen.has(t.name)) throw new Error(`LLM tool name "${t.name}" is offered twice`);
    seen.add(t.name);
  }
}

/**
 * The input a tool call really gets: what the model (or the offline filler) chose, with the caller's explicit
 * parameters on top (prompt execution: explicit `parameters` win). With several tools offered, only the keys a tool declares are
 * merged into it, so that one tool's parameters do not break another's call.
 */
export function withExplicitParameters(
  spec: LlmToolSpec,
  input: unknown,
  explicit: Record<string, unknown> | undefined,
  toolCount: number,
): Record<string, unknown> {
  const base = input && typeof input === 'object' && !Array.isArray(input) ? { ...(input as Record<string, unknown>) } : {};
  if (!explicit) return base;
  const declared = spec.inputSchema.properties as Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(explicit)) {
    if (toolCount === 1 || !declared || key in declared) base[key] = value;
  }
  return base;
}

/** JSON of a value cut to at most `max` characters (with an ellipsis), for answers and judge prompts. */
export function compactJson(value: unknown, max = 300): string {
  let json: string;
  try {
    json = JSON.stringify(value) ?? 'null';
  } catch {
    json = String(value);
  }
  return json.length <= max ? json : `${sliceWhole(json, max - 1)}…`;
}

/** Whitespace-separated words: the offline provider's stand-in for token counts. */
export function countWords(text: string): number {
  return text.match(/\S+/g)?.length ?? 0;
}

/**
 * Names for a collection's tools as an LLM sees them: chat-completions APIs accept function names of 1–64 letters,
 * digits, `_` and `-`. The clash rules are the shared ones of core/tools/tool-names.ts (as MCP's names).
 */
import { uniqueToolNames, type NamedTool } from '../tools/tool-names.js';

export type { NamedTool };

/** LLM tool name → tool, for every tool of the set. */
export function llmToolNames<T extends NamedTool>(tools: T[]): Map<string, T> {
  return uniqueToolNames(tools, (t) => t, { maxLength: 64, allowed: 'A-Za-z0-9_-' });
}

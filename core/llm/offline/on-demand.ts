/**
 * The offline agent against a collection served on demand (MCP `?mode=search`): when its only tools are
 * `search_tools` and `call_tool`, it first searches with the prompt, then plans over the tools found — as it would over
 * a full tool list — and runs each planned call through `call_tool`. The search is one recorded step; each call is
 * recorded under the tool it ran (what scenario assertions name), with the call going out as `call_tool`.
 */
import type { AgentResult, AgentRunOptions, LlmToolSpec, ToolCallResult } from '../provider.js';

const SEARCH = 'search_tools';
const CALL = 'call_tool';
const SEARCH_LIMIT = 10;
const MAX_QUERY = 1000;

export function isOnDemand(tools: LlmToolSpec[]): boolean {
  const names = new Set(tools.map((t) => t.name));
  return tools.length === 2 && names.has(SEARCH) && names.has(CALL);
}

function foundTools(result: ToolCallResult): LlmToolSpec[] {
  const tools = (result.output as { tools?: unknown } | undefined)?.tools;
  if (!Array.isArray(tools)) return [];
  return tools
    .filter((t): t is LlmToolSpec => typeof t?.name === 'string' && typeof t?.inputSchema === 'object' && t.inputSchema !== null)
    .map((t) => ({ name: t.name, description: typeof t.description === 'string' ? t.description : '', inputSchema: t.inputSchema }));
}

export async function runOnDemand(opts: AgentRunOptions, run: (opts: AgentRunOptions) => Promise<AgentResult>): Promise<AgentResult> {
  const input = { query: opts.prompt.slice(0, MAX_QUERY), limit: SEARCH_LIMIT };
  const toolCallId = 'offline_search_1';
  opts.onEvent?.({ type: 'tool.started', toolCallId, toolName: SEARCH, input });
  const searched = await opts.callTool(SEARCH, input);
  opts.onEvent?.({ type: 'tool.completed', toolCallId, toolName: SEARCH, result: searched });
  const search = { toolCallId, toolName: SEARCH, input, result: searched };
  const result = await run({
    ...opts,
    tools: foundTools(searched),
    maxSteps: Math.max(0, opts.maxSteps - 1),
    callTool: (name, args) => opts.callTool(CALL, { name, arguments: args }),
  });
  return { ...result, steps: [search, ...result.steps] };
}

/**
 * The LLM port: one interface for everything that needs a language model — the agent loop behind scenario runs,
 * agent chat and prompt execution, the evaluator's judgement, embeddings for scenario similarity, and scenario
 * generation. Two implementations: OpenAI-compatible (Vercel AI SDK) and a deterministic offline one whose model
 * names say `offline`. Nothing pretends to be an LLM that is not one.
 */
import type { SearchDocument } from '../search/engine.js';

/** A tool offered to the agent: its name as the model sees it, and its JSON Schema. */
export interface LlmToolSpec {
  name: string;
  description: string;
  inputSchema: Record<string, unknown>;
  /**
   * The tool as registry search indexes it (its package, category, health and quality too), so that the offline
   * agent ranks the offered tools as search does. Never sent to a model. Absent: ranked by name, description and
   * input schema alone.
   */
  searchDocument?: SearchDocument;
}

/** What running one tool call produced (the caller runs it through the queue and the sandbox). */
export interface ToolCallResult {
  output?: unknown;
  error?: { code: string; message: string };
  executionTimeMs: number;
  executionId?: string;
}

export type AgentEvent =
  | { type: 'tool.started'; toolCallId: string; toolName: string; input: unknown }
  | { type: 'tool.completed'; toolCallId: string; toolName: string; result: ToolCallResult }
  | { type: 'message.delta'; text: string };

export interface AgentStep {
  toolCallId: string;
  toolName: string;
  input: unknown;
  result: ToolCallResult;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

export interface ModelInfo {
  provider: 'offline' | 'openai-compatible';
  model: string;
  temperature: number;
}

/** An earlier turn of a conversation (agent chat): what the user said, or what the agent answered. */
export interface ChatTurn {
  role: 'user' | 'assistant';
  content: string;
}

export interface AgentRunOptions {
  system?: string;
  prompt: string;
  /**
   * The conversation before `prompt`, oldest first. A model reads it as earlier messages; the offline agent acts on
   * `prompt` alone (its rules read one request).
   */
  history?: ChatTurn[];
  tools: LlmToolSpec[];
  /** Runs one tool call; never throws for a tool's own failure (that is `result.error`). */
  callTool: (toolName: string, input: unknown) => Promise<ToolCallResult>;
  /** At most this many model steps (10 for scenario runs). */
  maxSteps: number;
  /** Parameters the caller gave explicitly: they win over anything the model fills in (prompt execution). */
  explicitParameters?: Record<string, unknown>;
  onEvent?: (event: AgentEvent) => void;
  signal?: AbortSignal;
  /** Overrides the configured chat model (an agent's `model`); must be one of the provider's `chatModels`. */
  model?: string;
}

export interface AgentResult extends ModelInfo {
  text: string;
  steps: AgentStep[];
  usage: Usage;
}

export type Assertion =
  | { type: 'toolCalled'; tool: string }
  | { type: 'outputContains'; text: string }
  | { type: 'noToolErrors' }
  /** These tools called in this order (other calls may come between). */
  | { type: 'toolSequence'; tools: string[] }
  /** Some call of the tool with arguments holding `args` as a JSON subset. */
  | { type: 'toolArgs'; tool: string; args: Record<string, unknown> }
  /** At most `max` tool calls. */
  | { type: 'maxSteps'; max: number }
  /** The run's wall time (its record's usage.executionTimeMs) at most `max` ms: checked after the judge. */
  | { type: 'maxLatencyMs'; max: number }
  /** The run's tokens, agent and judge (its record's usage.totalTokens), at most `max`: checked after the judge. */
  | { type: 'maxTokens'; max: number };

export interface JudgeInput {
  prompt: string;
  finalText: string;
  steps: AgentStep[];
  tools: LlmToolSpec[];
  assertions: Assertion[] | null;
}

export interface Verdict extends ModelInfo {
  verdict: 'pass' | 'fail';
  reason: string;
  usage: Usage;
  /** Each assertion with whether it held (assertions are checked in code, whatever the provider). */
  assertionResults: { assertion: Assertion; passed: boolean; detail: string }[];
}

export interface GeneratedScenario {
  prompt: string;
  name: string;
  description: string;
  tags: string[];
}

export interface GenerateScenariosInput {
  collection: { name: string; description: string | null };
  tools: (LlmToolSpec & { healthExample?: { params: Record<string, unknown> } | null })[];
  count: number;
  /** Prompts that already exist (or were rejected as too similar): generate something different. */
  avoid: string[];
  /** Varies the output between attempts (regeneration). */
  attempt: number;
}

export interface LlmProvider {
  readonly provider: 'offline' | 'openai-compatible';
  readonly chatModel: string;
  /**
   * The models an agent may name: LLM_MODEL plus the operator's allow-list LLM_MODELS, or the offline model alone.
   * Each one is a cost the operator chose to pay; `runAgent` refuses any other.
   */
  readonly chatModels: readonly string[];
  readonly embeddingModel: string;
  runAgent(opts: AgentRunOptions): Promise<AgentResult>;
  judge(input: JudgeInput): Promise<Verdict>;
  /** One vector per text; cosine similarity compares them. */
  embed(texts: string[]): Promise<number[][]>;
  generateScenarios(input: GenerateScenariosInput): Promise<GeneratedScenario[]>;
  /**
   * A tool-search query rewritten as a few keywords naming the capability it asks for (SEARCH_QUERY_REWRITE=llm), or
   * null where there is no language model (the offline provider: keywords by rule would only pretend).
   */
  searchKeywords(query: string, signal?: AbortSignal): Promise<{ keywords: string; usage: Usage } | null>;
}

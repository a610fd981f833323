/**
 * The events of an agent stream (api/streams/agent-stream.ts), shared by `tools.executePrompt` and `agents.chat`: what each
 * event's `data:` carries. A tool call refused before it was queued has `executionId: null`.
 */
import { z } from 'zod';
import { uuid } from './envelope.js';

const toolError = z.object({ code: z.string(), message: z.string() });
const usage = z.object({ inputTokens: z.number().int(), outputTokens: z.number().int(), totalTokens: z.number().int() });

export const agentStreamEvents = {
  'tools.discovered': z.object({ tools: z.array(z.object({ toolId: uuid, name: z.string() })) }),
  'tool.started': z.object({
    executionId: uuid.nullable(),
    toolId: uuid.nullable().meta({ description: 'null when the model named a tool that is not offered' }),
    name: z.string().meta({ description: 'The function name the model called' }),
    params: z.unknown(),
  }),
  'tool.completed': z.object({
    executionId: uuid.nullable(),
    toolId: uuid.nullable(),
    name: z.string(),
    output: z.unknown().optional().meta({ description: 'On success: what the tool returned' }),
    error: toolError.optional().meta({ description: 'On failure: TOOL_ERROR, EXECUTION_TIMEOUT, TOOL_UNAVAILABLE, UNKNOWN_TOOL, …' }),
    executionTimeMs: z.number().int(),
  }),
  'message.delta': z.object({ text: z.string() }),
  error: toolError,
  done: z.object({
    usage,
    provider: z.enum(['offline', 'openai-compatible']).optional(),
    model: z.string().optional(),
  }),
};

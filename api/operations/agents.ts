/**
 * Agents: create, list and read the caller's own agents, and chat with one — a stream like `tools.executePrompt`
 * with the tools of the agent's collections. An agent belongs to its user alone (404 to anyone else).
 */
import { z } from 'zod';
import { singleLine } from '../validate.js';
import { defineOperation, HANDLED, type Operation } from './define.js';
import { ok, timestamp, uuid } from './envelope.js';
import { agentStreamEvents } from './agent-events.js';
import { givenEnvOf, scopedEnvSchema } from '../scoped-env.js';
import { requireCaller } from '../middleware/auth.js';
import { streamAgent } from '../streams/agent-stream.js';
import { agentChatTools, createAgent, loadOwnAgent } from '../../core/agents/agents.js';
import { agentCollections, findAgent, listAgents, type AgentCollectionRow, type AgentRow } from '../../core/repos/agents.js';

// ---- response schema and mapper ----

export const agentSchema = z.object({
  id: uuid,
  name: z.string(),
  description: z.string().nullable(),
  systemPrompt: z.string().nullable(),
  model: z.string().nullable(),
  collections: z.array(z.object({ id: uuid, uid: z.string(), name: z.string() })),
  createdAt: timestamp,
});

/** The agent with its own collections (`collections` may hold those of other agents too). */
export function toAgent(a: AgentRow, collections: AgentCollectionRow[]): z.infer<typeof agentSchema> {
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    systemPrompt: a.system_prompt,
    model: a.model,
    collections: collections.filter((c) => c.agent_id === a.id).map((c) => ({ id: c.id, uid: c.uid, name: c.name })),
    createdAt: new Date(a.created_at).toISOString(),
  };
}

// ---- input schemas ----

const createBody = z
  .object({
    name: singleLine(100),
    description: z.string().max(1000).nullable().optional(),
    systemPrompt: z.string().max(8000).nullable().optional(),
    collectionIds: z.array(z.string().min(1).max(100)).max(20).optional().meta({ description: 'Collection ids or uids' }),
    model: z.string().trim().min(1).max(200).nullable().optional().meta({ description: 'One of the models the server allows (LLM_MODEL, LLM_MODELS)' }),
  })
  .strict();
/** The conversation a chat request may carry: this many earlier turns at most, of this many characters together. */
export const CHAT_HISTORY_MAX_TURNS = 40;
export const CHAT_HISTORY_MAX_CHARS = 64_000;
const chatTurn = z.object({ role: z.enum(['user', 'assistant']), content: z.string().min(1, 'must not be empty').max(8000) }).strict();
const chatBody = z
  .object({
    message: z.string().trim().min(1, 'must not be empty').max(8000),
    history: z
      .array(chatTurn)
      .max(CHAT_HISTORY_MAX_TURNS)
      .refine((turns) => turns.reduce((n, t) => n + t.content.length, 0) <= CHAT_HISTORY_MAX_CHARS, {
        message: `must hold at most ${CHAT_HISTORY_MAX_CHARS} characters in all`,
      })
      .optional()
      .meta({
        description: `The conversation before \`message\`, oldest first (at most ${CHAT_HISTORY_MAX_TURNS} turns, ${CHAT_HISTORY_MAX_CHARS} characters in all). The server keeps no conversation: send it with every message. A model reads it as earlier messages; the offline agent acts on \`message\` alone.`,
      }),
    env: scopedEnvSchema.optional(),
  })
  .strict();
const idParams = z.object({ id: z.string().meta({ description: "The agent's id" }) });

const base = { tag: 'Agents', errorShape: 'A', auth: 'key' } as const;
/** What the request middleware refuses before any handler: a malformed URL or body (400), and on methods that may carry a body, one over 1 MiB (413) or not JSON (415). */
const REQUEST = [400];
const BODY = [400, 413, 415];

export const agentOperations: Operation[] = [
  defineOperation({
    ...base,
    id: 'agents.create',
    method: 'post',
    path: '/api/agents',
    summary: 'Creates an agent (system prompt, model, collections)',
    body: createBody,
    responses: { 201: ok(agentSchema) },
    errors: [...BODY, 404],
    handler: async (ctx, deps, { body }) => {
      const id = await createAgent(deps.db, deps.llm.chatModels, requireCaller(ctx), body);
      return { success: true, data: toAgent((await findAgent(deps.db, id))!, await agentCollections(deps.db, [id])) };
    },
  }),
  defineOperation({
    ...base,
    id: 'agents.list',
    method: 'get',
    path: '/api/agents',
    summary: "The caller's agents, newest first",
    responses: { 200: ok(z.array(agentSchema)) },
    errors: REQUEST,
    handler: async (ctx, deps) => {
      const agents = await listAgents(deps.db, requireCaller(ctx).userId);
      const collections = await agentCollections(
        deps.db,
        agents.map((a) => a.id),
      );
      return { success: true, data: agents.map((a) => toAgent(a, collections)) };
    },
  }),
  defineOperation({
    ...base,
    id: 'agents.get',
    method: 'get',
    path: '/api/agents/:id',
    summary: 'One of the caller’s agents',
    params: idParams,
    responses: { 200: ok(agentSchema) },
    errors: [...REQUEST, 404],
    handler: async (ctx, deps, { params }) => {
      const a = await loadOwnAgent(deps.db, params.id, requireCaller(ctx));
      return { success: true, data: toAgent(a, await agentCollections(deps.db, [a.id])) };
    },
  }),
  defineOperation({
    ...base,
    id: 'agents.chat',
    method: 'post',
    path: '/api/agents/:id/chat',
    summary: 'Chats with an agent: a stream of its tool calls and answer',
    description:
      'The agent (its system prompt and model) gets the tools of its collections still visible to its owner; every tool call runs through the queue and the sandbox. `env` values reach only the tools of the package they are given for (`{ NAME: value }`: the one package of these tools that declares NAME; `{ "<package>": { NAME: value } }`: that package) and never appear in an event.',
    params: idParams,
    body: chatBody,
    responses: {
      200: {
        stream: agentStreamEvents,
        description:
          '`tools.discovered`, then `tool.started` / `tool.completed` per call and `message.delta` as text arrives, then `done`; on failure `error` then `done`',
      },
    },
    errors: [...BODY, 404, 409],
    handler: async (ctx, deps, { params, body }) => {
      const caller = requireCaller(ctx);
      const agent = await loadOwnAgent(deps.db, params.id, caller);
      const tools = await agentChatTools(deps.db, deps.llm.chatModels, agent);
      await streamAgent(ctx, deps, {
        tools,
        prompt: body.message,
        history: body.history,
        system: agent.system_prompt ?? undefined,
        model: agent.model ?? undefined,
        env: givenEnvOf(body.env, tools),
        caller,
      });
      return HANDLED;
    },
  }),
];

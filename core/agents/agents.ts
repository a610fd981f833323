/**
 * Agents: a user's named agent (system prompt, model, collections). An agent belongs to its user alone (404 to anyone
 * else). An agent's model is a cost the operator pays per token, so only the models the provider allows may be named
 * or used; a chat gets the tools of the agent's collections still visible to its owner when the chat starts.
 */
import type { Knex } from 'knex';
import { errors } from '../infra/errors.js';
import { loadCollectionTools } from './agent-tools.js';
import { loadVisibleCollection } from '../collections/collections.js';
import { isUuid } from '../repos/collections.js';
import { agentCollections, findAgent, insertAgent, type AgentRow } from '../repos/agents.js';
import type { ToolRow } from '../repos/tools.js';
import type { Caller } from '../types.js';

export interface NewAgentInput {
  name: string;
  description?: string | null;
  systemPrompt?: string | null;
  collectionIds?: string[];
  model?: string | null;
}

/** A named model must be one the provider allows (LLM_MODEL and LLM_MODELS; offline: its own); else a 400 on `body.model`. */
export function checkAgentModel(chatModels: readonly string[], model: string | null | undefined): void {
  if (model == null || chatModels.includes(model)) return;
  const message = `must be one of: ${chatModels.join(', ')}`;
  throw errors.validation(`Invalid body: body.model: ${message}`, [{ path: 'body.model', message }]);
}

/** Creates the agent with the collections the caller can see (any other is a 404); returns its id. */
export async function createAgent(db: Knex, chatModels: readonly string[], caller: Caller, input: NewAgentInput): Promise<string> {
  checkAgentModel(chatModels, input.model);
  const refs = [...new Set(input.collectionIds ?? [])];
  const collections = await Promise.all(refs.map((ref) => loadVisibleCollection(db, ref, caller)));
  return db.transaction((trx) =>
    insertAgent(trx, {
      userId: caller.userId,
      name: input.name,
      description: input.description ?? null,
      systemPrompt: input.systemPrompt ?? null,
      model: input.model ?? null,
      collectionIds: [...new Set(collections.map((c) => c.id))],
    }),
  );
}

/** The caller's own agent, else 404 (another user's agent is not revealed). */
export async function loadOwnAgent(db: Knex, id: string, caller: Caller): Promise<AgentRow> {
  const a = isUuid(id) ? await findAgent(db, id) : undefined;
  if (!a || a.user_id !== caller.userId) throw errors.notFound('Agent', id);
  return a;
}

/**
 * What a chat with the agent gets: its model, if still allowed (an agent stored before the allow-list, or before the
 * operator narrowed it, is a 409), and the tools of its collections still visible to its owner.
 */
export async function agentChatTools(db: Knex, chatModels: readonly string[], agent: AgentRow): Promise<ToolRow[]> {
  if (agent.model !== null && !chatModels.includes(agent.model)) {
    throw errors.conflict(
      `The agent's model '${agent.model}' is not allowed on this server (allowed: ${chatModels.join(', ')}); create an agent with an allowed model`,
    );
  }
  const visible = await agentCollections(db, [agent.id]);
  return loadCollectionTools(
    db,
    visible.map((c) => c.id),
  );
}

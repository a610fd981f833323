/**
 * Agents: a user's named agent (system prompt, model, collections). Create and list need a key; an agent belongs to
 * its user alone (404 to anyone else). Chat streams like prompt execution (24) with the tools of the agent's
 * collections — those still visible to the agent's owner when the chat starts.
 */
import type Router from '@koa/router';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { validate } from '../validate.js';
import { requireCaller } from '../middleware/auth.js';
import { declaredEnv, streamAgent } from '../agent-stream.js';
import { iso } from '../mappers.js';
import { errors } from '../../core/errors.js';
import { loadCollectionTools } from '../../core/agent-tools.js';
import { loadVisibleCollection } from '../../core/collections.js';
import { isUuid } from '../../core/repos/collections.js';
import { agentCollections, findAgent, insertAgent, listAgents, type AgentCollectionRow, type AgentRow } from '../../core/repos/agents.js';
import type { Caller } from '../../core/types.js';
import { envSchema } from './executions.js';

const createBody = z
  .object({
    name: z.string().trim().min(1, 'must not be empty').max(100),
    description: z.string().max(1000).nullable().optional(),
    systemPrompt: z.string().max(8000).nullable().optional(),
    collectionIds: z.array(z.string().min(1).max(100)).max(20).optional(),
    model: z.string().trim().min(1).max(200).nullable().optional(),
  })
  .strict();
const chatBody = z.object({ message: z.string().trim().min(1, 'must not be empty').max(8000), env: envSchema.optional() }).strict();

function agentView(a: AgentRow, collections: AgentCollectionRow[]) {
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    systemPrompt: a.system_prompt,
    model: a.model,
    collections: collections.filter((c) => c.agent_id === a.id).map((c) => ({ id: c.id, uid: c.uid, name: c.name })),
    createdAt: iso(a.created_at),
  };
}

/**
 * An agent's model is a cost the operator pays per token, so only the models the provider allows (LLM_MODEL and
 * LLM_MODELS; offline: its own) may be named. A 400 on `body.model` says which ones.
 */
function checkModel(deps: AppDeps, model: string | null | undefined): void {
  if (model == null || deps.llm.chatModels.includes(model)) return;
  const message = `must be one of: ${deps.llm.chatModels.join(', ')}`;
  throw errors.validation(`Invalid body: body.model: ${message}`, [{ path: 'body.model', message }]);
}

async function loadOwnAgent(deps: AppDeps, id: string, caller: Caller): Promise<AgentRow> {
  const a = isUuid(id) ? await findAgent(deps.db, id) : undefined;
  if (!a || a.user_id !== caller.userId) throw errors.notFound('Agent', id);
  return a;
}

export function agentRoutes(router: Router, deps: AppDeps) {
  router.post('/api/agents', async (ctx) => {
    const caller = requireCaller(ctx);
    const body = validate(createBody, ctx.request.body, 'body');
    checkModel(deps, body.model);
    const refs = [...new Set(body.collectionIds ?? [])];
    const collections = await Promise.all(refs.map((ref) => loadVisibleCollection(deps.db, ref, caller)));
    const id = await deps.db.transaction((trx) =>
      insertAgent(trx, {
        userId: caller.userId,
        name: body.name,
        description: body.description ?? null,
        systemPrompt: body.systemPrompt ?? null,
        model: body.model ?? null,
        collectionIds: [...new Set(collections.map((c) => c.id))],
      }),
    );
    ctx.status = 201;
    ctx.body = { success: true, data: agentView((await findAgent(deps.db, id))!, await agentCollections(deps.db, [id])) };
  });

  router.get('/api/agents', async (ctx) => {
    const caller = requireCaller(ctx);
    const agents = await listAgents(deps.db, caller.userId);
    const collections = await agentCollections(deps.db, agents.map((a) => a.id));
    ctx.body = { success: true, data: agents.map((a) => agentView(a, collections)) };
  });

  router.get('/api/agents/:id', async (ctx) => {
    const a = await loadOwnAgent(deps, ctx.params.id, requireCaller(ctx));
    ctx.body = { success: true, data: agentView(a, await agentCollections(deps.db, [a.id])) };
  });

  router.post('/api/agents/:id/chat', async (ctx) => {
    const caller = requireCaller(ctx);
    const agent = await loadOwnAgent(deps, ctx.params.id, caller);
    const body = validate(chatBody, ctx.request.body, 'body');
    // An agent stored before the allow-list, or before the operator narrowed it, does not get its old model.
    if (agent.model !== null && !deps.llm.chatModels.includes(agent.model)) {
      throw errors.conflict(`The agent's model '${agent.model}' is not allowed on this server (allowed: ${deps.llm.chatModels.join(', ')}); create an agent with an allowed model`);
    }
    const visible = (await agentCollections(deps.db, [agent.id])).filter((c) => c.is_public || c.owner_id === agent.user_id);
    const tools = await loadCollectionTools(deps.db, visible.map((c) => c.id));
    await streamAgent(ctx, deps, {
      tools,
      prompt: body.message,
      system: agent.system_prompt ?? undefined,
      model: agent.model ?? undefined,
      env: body.env ?? {},
      envFor: declaredEnv,
      caller,
    });
  });
}

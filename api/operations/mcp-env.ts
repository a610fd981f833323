/**
 * The page side of env asked for the MCP way (api/mcp/env-elicit.ts): the web app's `/env/<token>` reads which tool of
 * which collection asks for which variables, and the signed-in caller of that MCP call submits the values, which queue
 * that one execution with them sealed into its job (as a REST call's `env`). The values are never stored elsewhere,
 * logged nor echoed back; the request is single use. Only the user the MCP call acted as may read or answer it (404 to
 * anyone else, as if it did not exist); expired: 410; answered already: 409.
 */
import type { Context } from 'koa';
import { z } from 'zod';
import { defineOperation, type Operation } from './define.js';
import { ok, timestamp } from './envelope.js';
import { requireCaller } from '../middleware/auth.js';
import type { AppDeps } from '../deps.js';
import { assertEnvBounds } from '../../core/executions/env-bounds.js';
import { runTool } from '../../core/executions/tool-calls.js';
import { errors } from '../../core/infra/errors.js';
import { collectionTools } from '../../core/collections/collections.js';
import { findCollection, type CollectionRow } from '../../core/repos/collections.js';
import { claimEnvRequest, findEnvRequest, setEnvRequestExecution, unclaimEnvRequest, type McpEnvRequestRow } from '../../core/repos/mcp-env-requests.js';
import type { ToolRow } from '../../core/repos/tools.js';
import { toolEnv } from '../../core/tools/tool-env.js';

const tokenParams = z.object({ token: z.string().regex(/^[A-Za-z0-9_-]{20,100}$/, 'must be an env request token') });

const requestSchema = z.object({
  collection: z.object({ owner: z.string(), slug: z.string(), name: z.string() }),
  tool: z.object({ name: z.string().meta({ description: 'Its name on the MCP server' }), package: z.string(), description: z.string() }),
  params: z.unknown().meta({ description: 'The arguments of the call' }),
  env: z.array(z.object({ name: z.string(), description: z.string().nullable() })).meta({ description: 'The variables to enter, all required' }),
  expiresAt: timestamp,
});

const REQUEST = [400, 401];
const BODY = [400, 401, 413, 415];
const base = { tag: 'MCP', errorShape: 'A', auth: 'key', path: '/api/mcp-env/:token', params: tokenParams } as const;

interface Pending {
  row: McpEnvRequestRow;
  collection: CollectionRow;
  tool: ToolRow;
}

/** The caller's own live, unanswered request; 404 / 410 / 409 otherwise. */
async function pendingOf(ctx: Context, deps: AppDeps, token: string): Promise<Pending> {
  const caller = requireCaller(ctx);
  const row = await findEnvRequest(deps.db, token);
  if (!row || row.user_id !== caller.userId) throw errors.notFound('Env request', 'this link');
  if (row.expires_at <= new Date()) throw errors.gone('This env request expired: call the tool again from your MCP client for a new link');
  if (row.submitted_at) throw errors.conflict('This env request was answered already: each link takes values for one call');
  const collection = await findCollection(deps.db, row.collection_id);
  // The tool as the collection serves it (a pinned version stays pinned); gone from the collection: gone.
  const tool = collection && (await collectionTools(deps, collection)).find((t) => t.id === row.tool_id);
  if (!collection || !tool) throw errors.gone('The tool is no longer in the collection');
  return { row, collection, tool };
}

export const mcpEnvOperations: Operation[] = [
  defineOperation({
    ...base,
    id: 'mcpEnv.get',
    method: 'get',
    summary: 'Env asked for by an MCP tool call: which tool of which collection needs which variables (the page /env/<token> shows it)',
    description: 'Only the user the MCP call acted as may read it (404 otherwise); 410 once expired (10 minutes), 409 once answered.',
    responses: { 200: ok(requestSchema) },
    errors: [...REQUEST, 404, 409, 410],
    handler: async (ctx, deps, { params }) => {
      const { row, collection, tool } = await pendingOf(ctx, deps, params.token);
      const declared = new Map(toolEnv(tool).map((v) => [v.name, v]));
      return {
        success: true,
        data: {
          collection: { owner: collection.owner_username, slug: collection.uid, name: collection.name },
          tool: { name: row.tool_name, package: tool.package_name, description: tool.description },
          params: row.params,
          env: row.env_names.map((name) => ({ name, description: declared.get(name)?.description ?? null })),
          expiresAt: row.expires_at.toISOString(),
        },
      };
    },
  }),
  defineOperation({
    ...base,
    id: 'mcpEnv.submit',
    method: 'post',
    summary: 'Answers an env request: queues that one call with the values, sealed into its job; the MCP client’s retry gets its result',
    description:
      'The values are never stored nor echoed back. Every requested variable, and only those; at most 64 and 8 KiB in all. Single use: a second answer is 409.',
    body: z.object({ env: z.record(z.string(), z.string()) }).strict(),
    responses: { 200: ok(z.object({ executionId: z.string() })) },
    errors: [...BODY, 404, 409, 410, 422, 429],
    handler: async (ctx, deps, { params, body }) => {
      const caller = requireCaller(ctx);
      const { row, tool } = await pendingOf(ctx, deps, params.token);
      assertEnvBounds(Object.entries(body.env), 'env');
      const unknown = Object.keys(body.env).filter((n) => !row.env_names.includes(n));
      const missing = row.env_names.filter((n) => !body.env[n]);
      const details = [
        ...unknown.map((n) => ({ path: `env.${n}`, message: 'is not asked for by this request' })),
        ...missing.map((n) => ({ path: `env.${n}`, message: 'is required' })),
      ];
      if (details.length > 0) throw errors.validation(`Invalid env: ${details.map((d) => `${d.path} ${d.message}`).join('; ')}`, details);
      if (!(await claimEnvRequest(deps.db, params.token))) throw errors.conflict('This env request was answered already: each link takes values for one call');
      let executionId: string;
      try {
        const queued = await runTool(
          deps,
          {
            tool,
            params: row.params,
            env: body.env,
            caller: { ...caller, keyId: row.api_key_id },
            origin: 'mcp',
            limit: { client: row.client, maxActive: deps.config.MAX_ACTIVE_EXECUTIONS },
          },
          { wait: false },
        );
        executionId = queued.id;
      } catch (err) {
        await unclaimEnvRequest(deps.db, params.token);
        throw err;
      }
      await setEnvRequestExecution(deps.db, params.token, executionId);
      return { success: true, data: { executionId } };
    },
  }),
];

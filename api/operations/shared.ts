/**
 * Helpers more than one operation file needs (so that operation files never import each other): loading a tool by
 * any of its references, and the `env` object that execute, prompt execution and agent chat accept.
 */
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { envBoundsProblem } from '../../core/executions/env-bounds.js';
import { errors } from '../../core/infra/errors.js';
import { isUuid } from '../../core/infra/ids.js';
import { findToolByRef, type ToolRow } from '../../core/repos/tools.js';

/** Loads a tool by id, slug or `<package>::<tool>`, or throws 404. */
export async function loadTool(deps: AppDeps, ref: string): Promise<ToolRow> {
  const tool = await findToolByRef(deps.db, ref);
  if (!tool) throw errors.notFound('Tool', ref);
  return tool;
}

/**
 * For reads: by id from the tool cache (exact: dropped on every change's NOTIFY), which also hands out the same row
 * object until the tool changes, so what is derived from a row (its token count) is computed once; other references
 * go to the database like loadTool.
 */
export async function loadToolCached(deps: AppDeps, ref: string): Promise<ToolRow> {
  if (!isUuid(ref)) return loadTool(deps, ref);
  const [tool] = await deps.tools.getMany([ref]);
  if (!tool) throw errors.notFound('Tool', ref);
  return tool;
}

/** Env for a call: variable names to values, never stored; bounded (core/executions/env-bounds.ts). */
export const envSchema = z
  .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name'), z.string().max(8192))
  .superRefine((env, ctx) => {
    const problem = envBoundsProblem(Object.entries(env));
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  });

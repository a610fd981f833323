/**
 * `scenarios.generate`: new scenarios for a collection the caller owns. Generation spends the operator's LLM tokens
 * (up to 1 + MAX_REGENERATIONS rounds of `count` proposals): one unit of the daily scenario quota per requested
 * scenario, all taken before the provider is called.
 */
import type { Context } from 'koa';
import type { z } from 'zod';
import type { AppDeps } from '../../deps.js';
import { requireCaller } from '../../middleware/auth.js';
import { errors } from '../../../core/infra/errors.js';
import { LlmError, llmLogFields } from '../../../core/llm/index.js';
import { takeUnits } from '../../../core/scenarios/scenario-quota.js';
import { collectionTools, loadOwnedCollection } from '../../../core/collections/collections.js';
import { generateForCollection, type GenerationReport } from '../../../core/scenarios/scenario-generation.js';
import { loadVisibleScenario } from '../../../core/scenarios/scenarios.js';
import { toScenario, type generationSchema } from '../scenario-schemas.js';

export async function generateScenarios(
  ctx: Context,
  deps: AppDeps,
  collectionRef: string,
  /** The body, read once visibility (404) and ownership (403) are known. */
  readBody: (ctx: Context) => { count: number; skipSimilarityCheck: boolean },
): Promise<z.infer<typeof generationSchema>> {
  const caller = requireCaller(ctx);
  const c = await loadOwnedCollection(deps.db, collectionRef, caller);
  const body = readBody(ctx);
  const tools = await collectionTools(deps, c);
  if (tools.length === 0) throw errors.validation(`Collection '${c.uid}' has no tools to write scenarios for`);
  const { remaining } = await takeUnits(deps.db, deps.config, caller, body.count);
  let report: GenerationReport;
  try {
    report = await generateForCollection(deps, caller.userId, c, tools, body);
  } catch (err) {
    if (!(err instanceof LlmError)) throw err;
    // The vendor's words (its address, its body) stay in the log; the caller gets the short message.
    deps.logger.warn({ ...llmLogFields(err), reqId: ctx.state.requestId }, 'scenario generation: LLM provider failed');
    throw errors.internal(err.message);
  }
  const scenarios = await Promise.all(
    report.created.map(async (g) => ({ scenario: toScenario(await loadVisibleScenario(deps.db, g.id, caller)), similarity: g.similarity })),
  );
  return { scenarios, requested: body.count, rejectedAsTooSimilar: report.rejected, dropped: report.dropped, rounds: report.rounds, quotaRemaining: remaining };
}

/**
 * The API side of scenario runs: a run (or a batch of them) takes the caller's daily quota, and the run rows and their
 * `scenario_run` jobs are created in the same transaction — a refused or failed request takes nothing and queues
 * nothing. Waiting for a run is by LISTEN/NOTIFY, bounded.
 */
import type { Knex } from 'knex';
import { sealJson } from '../infra/crypto.js';
import { errors } from '../infra/errors.js';
import { enqueue } from '../infra/jobs.js';
import { jobTrace } from '../infra/tracing.js';
import type { Notifier } from '../infra/notify.js';
import { waitForFinal } from '../infra/wait-final.js';
import { quotaResetAt, takeRun, takeUnits, tryTakeRun, type QuotaConfig } from './scenario-quota.js';
import { findBatch, insertBatch, setBatchTotal, type BatchRow } from '../repos/scenario-batches.js';
import { countActiveRuns, findRun, insertRun, isFinalRun, type RunRow } from '../repos/scenario-runs.js';
import { isUuid } from '../repos/collections.js';
import { loadVisibleScenario } from './scenarios.js';
import type { GivenEnv } from '../tools/tool-env.js';
import type { Caller } from '../types.js';

/**
 * The env a run's (or a batch's) tools get, sealed (AES-256-GCM with SECRETS_KEY) for the job payload as an
 * execution's env is: stored nowhere else, opened by the worker, handed per call to the tools that declare each
 * variable (core/tools/tool-env.ts). Undefined when no value was given.
 */
export function sealRunEnv(secretsKey: string, given: GivenEnv): string | undefined {
  const any = Object.keys(given.unscoped).length > 0 || Object.values(given.scoped).some((vars) => Object.keys(vars).length > 0);
  return any ? sealJson(secretsKey, given) : undefined;
}

/**
 * Graphile runs lower numbers first: a queued execution (priority 0) is taken before a queued scenario run, so a
 * large batch does not hold up interactive calls that arrive after it.
 */
export const RUN_PRIORITY = 5;
const RUN_ATTEMPTS = 3;

/**
 * Fair share, as for executions (insertExecutionWithJobCapped): a run's job priority grows with the runs its user
 * already has queued or running, so one user's first run goes ahead of another user's queued batch and waits at most
 * for one worker slot to free, not for the whole batch.
 */
async function enqueueRun(trx: Knex.Transaction, run: RunRow, userId: string, sealedEnv?: string): Promise<void> {
  await enqueueRunAt(trx, run, (await countActiveRuns(trx, userId)) - 1, sealedEnv); // the run itself is counted
}

async function enqueueRunAt(trx: Knex.Transaction, run: RunRow, ahead: number, sealedEnv?: string): Promise<void> {
  const priority = RUN_PRIORITY + Math.min(Math.max(ahead, 0), 32767 - RUN_PRIORITY);
  await enqueue(trx, 'scenario_run', { runId: run.id, ...(sealedEnv ? { sealedEnv } : {}), ...jobTrace() }, { priority, maxAttempts: RUN_ATTEMPTS });
}

export async function startRun(
  db: Knex,
  config: QuotaConfig,
  caller: Caller,
  scenarioId: string,
  sealedEnv?: string,
): Promise<{ run: RunRow; quotaRemaining: number | null }> {
  return db.transaction(async (trx) => {
    const { remaining } = await takeRun(trx, config, caller);
    const run = await insertRun(trx, { scenarioId, userId: caller.userId });
    await enqueueRun(trx, run, caller.userId, sealedEnv);
    return { run, quotaRemaining: remaining };
  });
}

export interface BatchStart {
  batchId: string;
  runIds: string[];
  /** Scenarios not queued because the quota ran out. */
  skipped: number;
  quotaRemaining: number | null;
  /** Runs per scenario. */
  repeat: number;
}

export interface BatchOptions {
  /** Runs per scenario (1..10), each one unit of quota. */
  repeat?: number;
  /**
   * Take the quota for the whole batch at once (scenarios × repeat units) or refuse it whole with the quota's 429
   * (nothing recorded). Without it, the legacy run-all: one take per run, what does not fit is skipped.
   */
  allOrNothing?: boolean;
  /** The caller's env for the tools, sealed with SECRETS_KEY: in every run's job, never stored (api/scoped-env.ts). */
  sealedEnv?: string;
}

/**
 * Queues `repeat` runs of each scenario, repeat-major (every scenario once, then every scenario again, …), so that a
 * batch cut short still covers its scenarios evenly. Legacy mode: one quota take per run until the quota runs out, the
 * rest skipped, and a batch that could queue nothing is the quota's 429. All-or-nothing mode: the whole batch's units
 * are taken first, or the 429 (with the true remainder) refuses it and leaves no batch behind.
 */
export async function startBatch(
  db: Knex,
  config: QuotaConfig,
  caller: Caller,
  collectionId: string,
  scenarioIds: string[],
  opts: BatchOptions = {},
): Promise<BatchStart> {
  const repeat = opts.repeat ?? 1;
  const planned = scenarioIds.length * repeat;
  return db.transaction(async (trx) => {
    let quotaRemaining: number | null = null;
    if (opts.allOrNothing) quotaRemaining = (await takeUnits(trx, config, caller, planned)).remaining;
    const batchId = await insertBatch(trx, { collectionId, userId: caller.userId, total: 0, skipped: 0, repeat });
    const runIds: string[] = [];
    let ahead: number | undefined;
    queue: for (let index = 1; index <= repeat; index++) {
      for (const scenarioId of scenarioIds) {
        if (!opts.allOrNothing) {
          const taken = await tryTakeRun(trx, config, caller);
          if (!taken) break queue;
          quotaRemaining = taken.remaining;
        }
        const run = await insertRun(trx, { scenarioId, userId: caller.userId, batchId, repeatIndex: index });
        // The user's active runs are counted once; each run queued after it has one more ahead (as enqueueRun would count).
        ahead = ahead === undefined ? (await countActiveRuns(trx, caller.userId)) - 1 : ahead + 1;
        await enqueueRunAt(trx, run, ahead, opts.sealedEnv);
        runIds.push(run.id);
      }
    }
    if (runIds.length === 0) throw errors.quotaExceeded(quotaResetAt());
    const skipped = opts.allOrNothing ? 0 : scenarioIds.length - runIds.length;
    await setBatchTotal(trx, batchId, runIds.length, skipped);
    return { batchId, runIds, skipped, quotaRemaining: skipped > 0 ? 0 : quotaRemaining, repeat };
  });
}

/** The run once final, or as it is when waitMs runs out (or the signal fires). */
export async function waitForRun(deps: { db: Knex; notifier: Notifier }, id: string, waitMs: number, signal?: AbortSignal): Promise<RunRow> {
  return waitForFinal(deps.notifier, {
    match: (p) => p.includes(id) && /"status":"(completed|failed)"/.test(p),
    read: async () => (await findRun(deps.db, id))!,
    isFinal: isFinalRun,
    waitMs,
    signal,
  });
}

/** The run if the caller started it or can see its scenario, else 404. */
export async function loadVisibleRun(db: Knex, id: string, caller: Caller | undefined): Promise<RunRow> {
  const run = isUuid(id) ? await findRun(db, id) : undefined;
  if (!run) throw errors.notFound('Scenario run', id);
  if (caller && caller.userId === run.user_id) return run;
  try {
    await loadVisibleScenario(db, run.scenario_id, caller);
  } catch {
    throw errors.notFound('Scenario run', id);
  }
  return run;
}

/** The batch if its collection is public, or the caller owns it or started the batch, else 404. */
export async function loadVisibleBatch(db: Knex, id: string, caller: Caller | undefined): Promise<BatchRow> {
  const b = isUuid(id) ? await findBatch(db, id) : undefined;
  const visible = b && (b.collection_is_public || caller?.userId === b.collection_owner_id || caller?.userId === b.user_id);
  if (!visible) throw errors.notFound('Scenario batch', id);
  return b;
}

/**
 * Cancelling an execution (beyond the contract; README "API", docs/api.md): a queued one is made final at once (its
 * job removed unless a worker already holds it, which then finds it final); a running one is flagged and the worker
 * holding it is told by NOTIFY (core/repos/executions.ts requestRunningCancel), stops its sandbox and finishes it
 * (worker/cancel-watch.ts). Either way it ends `failed` with `error.code` CANCELLED, since the contract's status set is
 * closed. A cancel is counted neither as the tool failing nor as the platform's failure (core/repos/tool-stats.ts): no
 * execution_failed event, no execution count, and the hourly statistics keep it out of the success rate.
 */
import type { Knex } from 'knex';
import type { Notifier } from '../infra/notify.js';
import { dropUnlockedJob, findExecution, finishExecution, isFinalExecution, requestRunningCancel, type ExecutionRow } from '../repos/executions.js';
import { waitForExecution } from './executions.js';

export const CANCELLED = { code: 'CANCELLED', message: 'The execution was cancelled by its caller' } as const;

/** How long a cancel waits for the worker to stop a running execution before answering with it as it stands. */
export const CANCEL_WAIT_MS = 10_000;

export type CancelOutcome =
  /** It was final already: nothing changed. */
  | { kind: 'final'; execution: ExecutionRow }
  /** Cancelled (final now), or, when the worker has not stopped it within the wait, still running with the cancel on its way. */
  | { kind: 'cancelled'; execution: ExecutionRow };

export async function cancelExecution(deps: { db: Knex; notifier: Notifier }, id: string, o: { waitMs?: number } = {}): Promise<CancelOutcome | undefined> {
  const error = CANCELLED;
  // A few rounds: a queued execution may be claimed between the two statements, a running one put back in the queue.
  for (let round = 0; round < 3; round++) {
    const e = await findExecution(deps.db, id);
    if (!e) return undefined;
    if (isFinalExecution(e)) return { kind: 'final', execution: e };
    if (e.status === 'queued') {
      if (await finishExecution(deps.db, id, { status: 'failed', error, executionTimeMs: null, queuedOnly: true })) {
        if (e.job_id) await dropUnlockedJob(deps.db, e.job_id).catch(() => undefined);
        return { kind: 'cancelled', execution: (await findExecution(deps.db, id))! };
      }
      continue;
    }
    if (await requestRunningCancel(deps.db, id)) {
      return { kind: 'cancelled', execution: await waitForExecution(deps, id, o.waitMs ?? CANCEL_WAIT_MS) };
    }
  }
  const e = (await findExecution(deps.db, id))!;
  return { kind: isFinalExecution(e) ? 'final' : 'cancelled', execution: e };
}

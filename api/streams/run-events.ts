/**
 * The events of a run's and a batch's SSE streams, derived from the stored rows alone. The rows only ever grow (a
 * run's steps are written in event order; a batch's runs get their finishing place under the batch lock), so the
 * list for a later state extends the list for an earlier one: event ids are list positions, and a stream — live,
 * reconnected with Last-Event-ID, or opened after the end — sends the same events with the same ids. Their schemas:
 * runStreamEvents and batchStreamEvents (api/operations/scenario-schemas.ts).
 */
import type { Context } from 'koa';
import type { AppDeps } from '../deps.js';
import { streamShared, type StreamEvent } from './sse.js';
import { CHANNELS } from '../../core/infra/notify.js';
import type { LlmPrices } from '../../core/infra/config.js';
import type { BatchRow, BatchRunRow } from '../../core/repos/scenario-batches.js';
import { isFinalRun, type RunRow } from '../../core/repos/scenario-runs.js';
import { countRuns, toBatchProgress, toEvaluator, toRunRecord, toStep } from '../operations/scenario-schemas.js';

export type { StreamEvent };

/** `step` and `tool.completed` per tool call in the order they happened, then `verdict` (or `error`) and `done`. */
export function runEvents(r: RunRow): StreamEvent[] {
  const timed: (StreamEvent & { seq: number })[] = [];
  for (const s of r.steps) {
    const view = toStep(s);
    timed.push({
      seq: s.startedSeq,
      event: 'step',
      data: { runId: r.id, index: s.index, toolId: s.toolId, toolName: s.toolName, params: s.params, executionId: s.executionId },
    });
    if (s.completedSeq !== undefined) {
      const { params: _params, ...completed } = view;
      timed.push({ seq: s.completedSeq, event: 'tool.completed', data: { runId: r.id, ...completed } });
    }
  }
  const events: StreamEvent[] = timed.sort((a, b) => a.seq - b.seq).map(({ event, data }) => ({ event, data }));
  if (!isFinalRun(r)) return events;
  if (r.status === 'completed') events.push({ event: 'verdict', data: { runId: r.id, success: r.success, ...toEvaluator(r) } });
  else events.push({ event: 'error', data: { runId: r.id, ...(r.error ?? { code: 'INTERNAL', message: 'The run failed' }) } });
  events.push({ event: 'done', data: toRunRecord(r) });
  return events;
}

/** `run.completed` per finished run in finishing order (with the counts up to it), then `done` with the progress. */
export function batchEvents(b: BatchRow, runs: BatchRunRow[], prices: LlmPrices | undefined): StreamEvent[] {
  const finished = runs.filter((r) => r.batch_seq !== null).sort((x, y) => x.batch_seq! - y.batch_seq!);
  const events: StreamEvent[] = finished.map((r, i) => ({
    event: 'run.completed',
    data: {
      batchId: b.id,
      runId: r.id,
      scenarioId: r.scenario_id,
      status: r.status,
      success: r.success,
      verdict: r.verdict,
      repeatIndex: r.repeat_index,
      finished: i + 1,
      total: b.total,
      counts: countRuns(finished.slice(0, i + 1)),
    },
  }));
  if (b.completed_at) events.push({ event: 'done', data: toBatchProgress(b, runs, prices) });
  return events;
}

/**
 * Streams the events of one row through its shared channel: what `load` derives now, again on every NOTIFY that
 * names `id`, ending after `done`. Errors after the first byte are an `error` event.
 */
export async function streamDerived(ctx: Context, deps: AppDeps, id: string, load: () => Promise<StreamEvent[]>): Promise<void> {
  await streamShared(ctx, deps.config, id, {
    load,
    watch: (changed) => deps.notifier.subscribe(CHANNELS.jobs, (p) => p.includes(id) && changed()),
    failed: (err) => deps.logger.error({ err, id }, 'event stream failed'),
  });
}

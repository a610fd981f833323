/**
 * Records a scenario run's tool calls as they happen: each start and each completion gets the next sequence number
 * and the whole step list is written to the run row (and NOTIFYed) in that order, one write at a time. The row then
 * always holds a prefix of the run's events, which is what lets the run's event stream replay them exactly.
 */
import type { ToolCallResult } from '../core/llm/provider.js';
import { redactSecrets } from '../core/executions/redaction.js';
import { saveSteps, type RunRow, type StoredStep } from '../core/repos/scenario-runs.js';
import type { WorkerDeps } from './deps.js';

export interface StepRecorder {
  started(s: { toolId: string | null; toolName: string; params: unknown; executionId: string | null }): number;
  completed(index: number, result: ToolCallResult): void;
  /** Waits for every write so far. */
  settle(): Promise<void>;
  readonly steps: StoredStep[];
}

/**
 * `secrets`: every env value the run was given (allEnvValues): a step's params, output and error are redacted of them
 * before they are kept (a tool's output is already redacted of its own env; this covers any value of the run's).
 */
export function createStepRecorder(deps: WorkerDeps, run: Pick<RunRow, 'id' | 'batch_id' | 'attempt'>, secrets: Record<string, string> = {}): StepRecorder {
  const steps: StoredStep[] = [];
  let seq = 0;
  let chain: Promise<void> = Promise.resolve();
  const write = () => {
    const snapshot = structuredClone(steps);
    chain = chain
      .then(() => saveSteps(deps.db, run, snapshot))
      .catch((err) => deps.logger.warn({ err: (err as Error).message, runId: run.id }, 'could not store run steps'));
  };
  return {
    started(s) {
      const index = steps.length;
      const params = redactSecrets(s.params, secrets);
      steps.push({ index, toolId: s.toolId, toolName: s.toolName, params, executionId: s.executionId, startedSeq: ++seq });
      write();
      return index;
    },
    completed(index, result) {
      const step = steps[index];
      step.completedSeq = ++seq;
      step.executionTimeMs = result.executionTimeMs;
      if (result.error) step.error = redactSecrets(result.error, secrets);
      else step.output = redactSecrets(result.output ?? null, secrets);
      write();
    },
    settle: () => chain,
    steps,
  };
}

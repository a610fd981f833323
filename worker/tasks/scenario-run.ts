/**
 * Job: one scenario run. The agent gets the collection's tools (at most MAX_STEPS model steps; every tool call runs
 * in the sandbox, inline — see worker/inline-execution.ts), the evaluator judges the answer and the assertions are
 * checked (those about the run's totals, maxTokens and maxLatencyMs, once the totals are known: withRunBudgets); the run row stores steps, usage, models, temperature and tool package versions. Making the run final,
 * the scenario's statistics and the batch's progress change in one transaction. Idempotent: a final run is left
 * alone. The env the run was given (sealed in its job) reaches each tool call as envForTool scopes it, and every value
 * is redacted from what the run keeps. A provider or agent failure makes the run `failed`; only a worker shutdown puts it back in the queue.
 */
import type { Task } from 'graphile-worker';
import { agentToolSet, loadCollectionTools, toolVersions, type AgentToolSet } from '../../core/agents/agent-tools.js';
import { openJson } from '../../core/infra/crypto.js';
import { parsePayload } from '../../core/infra/jobs.js';
import { redactSecrets, redactText } from '../../core/executions/redaction.js';
import { allEnvValues, declaringPackages, envForTool, type GivenEnv } from '../../core/tools/tool-env.js';
import { LlmError, llmLogFields, withRunBudgets } from '../../core/llm/index.js';
import type { AgentResult, ToolCallResult, Usage, Verdict } from '../../core/llm/provider.js';
import { inSpan } from '../../core/infra/tracing.js';
import { completeBatchIfDone, takeBatchSeq } from '../../core/repos/scenario-batches.js';
import { claimRun, failRunningRun, finishRun, notifyRun, requeueRun, type RunOutcome, type RunRow } from '../../core/repos/scenario-runs.js';
import { findScenario, lockScenario, recordRunStats, type ScenarioRow } from '../../core/repos/scenarios.js';
import type { WorkerDeps } from '../deps.js';
import { withDbRetry } from '../../core/infra/db.js';
import { FINISH_RETRY_MS } from '../run-execution.js';
import { runToolInline } from '../inline-execution.js';
import { createStepRecorder, type StepRecorder } from '../run-steps.js';

export const MAX_STEPS = 10;

const SYSTEM =
  'You are an agent being evaluated on a task. Use the available tools to do what the user asks, call each tool ' +
  'with arguments that match its schema, and then answer briefly from the tool outputs.';

const ZERO: Usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
const sum = (a: Usage, b: Usage): Usage => ({
  inputTokens: a.inputTokens + b.inputTokens,
  outputTokens: a.outputTokens + b.outputTokens,
  totalTokens: a.totalTokens + b.totalTokens,
});

export function scenarioRunTask(deps: WorkerDeps, workerId: () => string): Task {
  return async (payload, helpers) => {
    const { runId, sealedEnv } = parsePayload('scenario_run', payload);
    const run = await claimRun(deps.db, runId);
    if (!run) return; // final already
    const startedAt = Date.now();
    // Every value of the run's env: nothing the run keeps (steps, answer, verdict, error) may hold one.
    let secrets: Record<string, string> = {};
    let recorder = createStepRecorder(deps, run);
    let tools: AgentToolSet = { specs: [], byName: new Map() };
    try {
      // The env is opened here and goes nowhere but the sandbox of the tools that declare each variable.
      const given: GivenEnv = sealedEnv ? openJson<GivenEnv>(deps.config.SECRETS_KEY, sealedEnv) : { unscoped: {}, scoped: {} };
      secrets = allEnvValues(given);
      recorder = createStepRecorder(deps, run, secrets);
      const scenario = await findScenario(deps.db, run.scenario_id);
      if (!scenario) return; // deleted meanwhile (its runs went with it)
      const rows = await loadCollectionTools(deps.db, [scenario.collection_id]);
      tools = agentToolSet(rows);
      const env = { given, declarers: declaringPackages(rows) };
      const agent = await runAgent(deps, run, scenario, tools, env, recorder, workerId(), helpers.abortSignal);
      const judged = await traceJudge(deps, () =>
        deps.llm.judge({
          prompt: scenario.prompt,
          finalText: agent.text,
          steps: agent.steps,
          tools: tools.specs,
          assertions: scenario.assertions,
        }),
      );
      // The run's totals as its record shows them; maxTokens and maxLatencyMs are checked against these.
      const usage = { ...sum(agent.usage, judged.usage), executionTimeMs: Date.now() - startedAt };
      const verdict = withRunBudgets(judged, scenario.assertions, usage);
      await recorder.settle();
      await finalize(deps, run, secrets, {
        status: 'completed',
        success: verdict.verdict === 'pass',
        verdict: verdict.verdict,
        reason: verdict.reason,
        evaluator: evaluatorRecord(verdict),
        agent: { ...modelOf(agent), maxSteps: MAX_STEPS, usage: agent.usage, tools: toolVersions(tools) },
        usage,
        steps: recorder.steps,
        finalText: agent.text,
      });
      deps.metrics?.scenarioRunEnded(verdict.verdict);
    } catch (err) {
      await recorder.settle();
      if (helpers.abortSignal?.aborted) {
        // Stopped by a shutdown: it runs again on a live worker, unless this was its last attempt (then failed, and
        // no statistics move: a job that failed for good would leave it queued for ever).
        if (helpers.job.attempts >= helpers.job.max_attempts) {
          await failRunningRun(deps.db, runId, { code: 'WORKER_SHUTDOWN', message: 'The worker shut down during this run, on its last attempt' });
          return;
        }
        await requeueRun(deps.db, runId, run.attempt);
        throw new Error('worker stopping; the scenario run will run again');
      }
      // The run record is readable by whoever can see the scenario: an LlmError's message is the short one meant for
      // users; what the vendor said (its address, its body) goes to the log only.
      const error =
        err instanceof LlmError ? { code: err.code, message: err.message } : { code: 'AGENT_ERROR', message: 'The agent failed; see the worker log' };
      if (err instanceof LlmError) deps.logger.warn({ ...llmLogFields(err), runId }, 'scenario run: LLM provider failed');
      else deps.logger.error({ err, runId }, 'scenario run failed');
      await finalize(deps, run, secrets, {
        status: 'failed',
        success: false,
        error,
        agent: { provider: deps.llm.provider, model: deps.llm.chatModel, temperature: 0, maxSteps: MAX_STEPS, usage: ZERO, tools: toolVersions(tools) },
        usage: { ...ZERO, executionTimeMs: Date.now() - startedAt },
        steps: recorder.steps,
      });
      deps.metrics?.scenarioRunEnded('error');
    }
  };
}

// Spans (core/infra/tracing.ts) of a run, below its job's: the agent, each of its tool calls (the sandbox call below that),
// and the judge. Names, outcomes and counts only: never prompts, params, results or env.
function runAgent(...args: Parameters<typeof agentLoop>): Promise<AgentResult> {
  const llm = args[0].llm;
  return inSpan('toolshed-worker', 'scenario.agent', { attributes: { 'toolshed.llm.provider': llm.provider } }, async (span) => {
    const agent = await agentLoop(...args);
    span?.setAttributes({
      'toolshed.llm.model': agent.model,
      'toolshed.scenario_run.steps': agent.steps.length,
      'toolshed.llm.total_tokens': agent.usage.totalTokens,
    });
    return agent;
  });
}

function traceToolCall(call: (name: string, input: unknown) => Promise<ToolCallResult>) {
  return (name: string, input: unknown) =>
    inSpan('toolshed-worker', 'scenario.tool_call', { attributes: { 'toolshed.tool.name': name } }, async (span) => {
      const result = await call(name, input);
      span?.setAttribute('toolshed.tool_call.outcome', result.error?.code ?? 'ok');
      return result;
    });
}

function traceJudge(deps: WorkerDeps, judge: () => Promise<Verdict>): Promise<Verdict> {
  return inSpan('toolshed-worker', 'scenario.judge', { attributes: { 'toolshed.llm.provider': deps.llm.provider } }, async (span) => {
    const verdict = await judge();
    span?.setAttributes({
      'toolshed.llm.model': verdict.model,
      'toolshed.scenario_run.verdict': verdict.verdict,
      'toolshed.llm.total_tokens': verdict.usage.totalTokens,
    });
    return verdict;
  });
}

function agentLoop(
  deps: WorkerDeps,
  run: RunRow,
  scenario: ScenarioRow,
  tools: AgentToolSet,
  env: { given: GivenEnv; declarers: Map<string, string[]> },
  recorder: StepRecorder,
  workerId: string,
  signal: AbortSignal | undefined,
): Promise<AgentResult> {
  return deps.llm.runAgent({
    system: SYSTEM,
    prompt: scenario.prompt,
    tools: tools.specs,
    maxSteps: MAX_STEPS,
    signal,
    callTool: traceToolCall(async (name, input) => {
      const tool = tools.byName.get(name);
      if (!tool) {
        const index = recorder.started({ toolId: null, toolName: name, params: input, executionId: null });
        const result = { error: { code: 'UNKNOWN_TOOL', message: `No tool named '${name}' in this collection` }, executionTimeMs: 0 };
        recorder.completed(index, result);
        return result;
      }
      let index = -1;
      const result = await runToolInline(deps, {
        tool,
        params: input,
        env: envForTool(tool, env.given, env.declarers).env,
        userId: run.user_id,
        workerId,
        signal,
        onStarted: (executionId) => (index = recorder.started({ toolId: tool.id, toolName: name, params: input, executionId })),
      });
      recorder.completed(index, result);
      return result;
    }),
  });
}

const modelOf = (m: { provider: string; model: string; temperature: number }) => ({ provider: m.provider, model: m.model, temperature: m.temperature });

function evaluatorRecord(v: Verdict) {
  return { ...modelOf(v), verdict: v.verdict, reason: v.reason, assertionResults: v.assertionResults, usage: v.usage };
}

/** What the run keeps, its texts redacted of the run's env values (its steps were redacted as they were recorded). */
function redactOutcome(outcome: RunOutcome, secrets: Record<string, string>): RunOutcome {
  if (Object.keys(secrets).length === 0) return outcome;
  const text = (s: string) => redactText(s, secrets);
  const { evaluator, finalText, error, reason } = outcome;
  return {
    ...outcome,
    ...(reason === undefined ? {} : { reason: text(reason) }),
    ...(finalText === undefined ? {} : { finalText: text(finalText) }),
    ...(error ? { error: { ...error, message: text(error.message) } } : {}),
    ...(evaluator
      ? {
          evaluator: {
            ...evaluator,
            reason: text(evaluator.reason),
            assertionResults: evaluator.assertionResults.map((r) => ({ ...r, assertion: redactSecrets(r.assertion, secrets), detail: text(r.detail) })),
          },
        }
      : {}),
  };
}

/** The run final, the scenario's statistics (completed runs only) and the batch's progress, in one transaction. */
async function finalize(deps: WorkerDeps, run: RunRow, secrets: Record<string, string>, redactable: RunOutcome): Promise<void> {
  const outcome = redactOutcome(redactable, secrets);
  // The run has happened (and was paid for): its outcome must survive a database restart.
  await withDbRetry(
    () => finalizeOnce(deps, run, outcome),
    FINISH_RETRY_MS,
    (err) => deps.logger.warn({ runId: run.id, err: err.message }, 'database unreachable; retrying the run finish'),
  );
}

async function finalizeOnce(deps: WorkerDeps, run: RunRow, outcome: RunOutcome): Promise<void> {
  await deps.db.transaction(async (trx) => {
    if (!(await lockScenario(trx, run.scenario_id))) return;
    const batchSeq = run.batch_id ? await takeBatchSeq(trx, run.batch_id) : undefined;
    const row = await finishRun(trx, run.id, run.attempt, { ...outcome, batchSeq });
    if (!row) return;
    if (row.status === 'completed') await recordRunStats(trx, row.id); // moves the statistics for the owner's runs only
    if (run.batch_id) await completeBatchIfDone(trx, run.batch_id);
    await notifyRun(trx, row);
  });
}

/**
 * What a batch says about its scenarios once repeated (issue 25): per scenario the verdicts in repeat order, the pass
 * rate, pass@k (at least one pass), pass^k (all k passed) and `flaky` (its finished runs disagree); the batch's pass rate
 * and flaky count; its token usage, the agent's and the judge's apart, and what that cost at the operator's prices
 * (LLM_PRICES). Computed from the batch's run rows alone, so the progress, the `done` event and any later read agree.
 */
import type { LlmPrices } from '../infra/config.js';
import type { Usage } from '../llm/provider.js';
import type { BatchRunRow } from '../repos/scenario-batches.js';
import { batchPassRate, scenarioStats } from './scenario-batch-stats.js';

type Verdict = 'pass' | 'fail' | null;

export interface ScenarioSummary {
  scenarioId: string;
  name: string;
  runs: number;
  completed: number;
  passes: number;
  /**
   * passes / finished runs (a run that failed before its verdict did not pass: core/scenarios/scenario-batch-stats.ts, the one
   * definition the comparison and `toolshed eval` use too); null while none has finished.
   */
  passRate: number | null;
  /** At least one pass; false once every run is final without one; null until then. */
  passAtK: boolean | null;
  /** Every run passed; null until every run is final. */
  passHatK: boolean | null;
  /** Its finished runs disagree: some passed, some did not. */
  flaky: boolean;
  /** In repeat order; null for a run not (or not successfully) judged. */
  verdicts: Verdict[];
}

export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

export interface BatchCost {
  currency: 'USD';
  agent: number;
  judge: number;
  total: number;
}

export interface BatchReport {
  scenarios: ScenarioSummary[];
  passRate: number | null;
  flakyCount: number;
  usage: { agent: UsageTotals; judge: UsageTotals; total: UsageTotals };
  cost: BatchCost | null;
  /** Why `cost` is null (no prices configured, or a model without a price); null when it is given. */
  costNote: string | null;
}

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;
/** Dollars to a millionth of a cent's precision is noise: six decimals. */
const round6 = (x: number) => Math.round(x * 1e6) / 1e6;
const isFinal = (r: Pick<BatchRunRow, 'status'>) => r.status === 'completed' || r.status === 'failed';
const zero = (): UsageTotals => ({ inputTokens: 0, outputTokens: 0, totalTokens: 0 });

function add(to: UsageTotals, u: Usage | null | undefined): void {
  if (!u) return;
  to.inputTokens += u.inputTokens ?? 0;
  to.outputTokens += u.outputTokens ?? 0;
  to.totalTokens += u.totalTokens ?? 0;
}

/** The order of a scenario's runs: repeat index, then (batches from before repeats) creation, then id. */
function byRepeat(a: BatchRunRow, b: BatchRunRow): number {
  return (a.repeat_index ?? 0) - (b.repeat_index ?? 0) || new Date(a.created_at).getTime() - new Date(b.created_at).getTime() || a.id.localeCompare(b.id);
}

export function summarizeScenario(runs: BatchRunRow[]): ScenarioSummary {
  const ordered = [...runs].sort(byRepeat);
  const verdicts = ordered.map((r): Verdict => (r.status === 'completed' ? r.verdict : null));
  const completed = ordered.filter((r) => r.status === 'completed').length;
  const passes = verdicts.filter((v) => v === 'pass').length;
  const allFinal = ordered.every(isFinal);
  const [stats] = scenarioStats(ordered);
  return {
    scenarioId: ordered[0].scenario_id,
    name: ordered[0].scenario_name,
    runs: ordered.length,
    completed,
    passes,
    passRate: stats.passRate === null ? null : round4(stats.passRate),
    passAtK: passes > 0 ? true : allFinal ? false : null,
    passHatK: allFinal ? passes === ordered.length : null,
    flaky: stats.flaky,
    verdicts,
  };
}

/** Cost of one side (agent or judge) at the given prices, or the model that has tokens and no price. */
function costOf(runs: BatchRunRow[], side: 'agent' | 'judge', prices: LlmPrices): { usd: number } | { missing: string } {
  let usd = 0;
  for (const r of runs) {
    const u = side === 'agent' ? r.agent_usage : r.judge_usage;
    const model = side === 'agent' ? r.agent_model : r.judge_model;
    if (!u || (u.inputTokens ?? 0) + (u.outputTokens ?? 0) === 0) continue;
    const price = model ? prices[model] : undefined;
    if (!price) return { missing: model ?? 'unknown' };
    usd += ((u.inputTokens ?? 0) * price.inputPerMTok + (u.outputTokens ?? 0) * price.outputPerMTok) / 1e6;
  }
  return { usd };
}

export function batchReport(runs: BatchRunRow[], prices: LlmPrices | undefined): BatchReport {
  const groups = new Map<string, BatchRunRow[]>();
  for (const r of runs) groups.set(r.scenario_id, [...(groups.get(r.scenario_id) ?? []), r]);
  const scenarios = [...groups.values()]
    .map(summarizeScenario)
    .sort((a, b) => Number(b.flaky) - Number(a.flaky) || a.name.localeCompare(b.name) || a.scenarioId.localeCompare(b.scenarioId));
  const overall = batchPassRate(runs).passRate;

  const usage = { agent: zero(), judge: zero(), total: zero() };
  for (const r of runs) {
    add(usage.agent, r.agent_usage);
    add(usage.judge, r.judge_usage);
  }
  add(usage.total, usage.agent);
  add(usage.total, usage.judge);

  let cost: BatchCost | null = null;
  let costNote: string | null = null;
  if (!prices) costNote = 'No prices configured (LLM_PRICES)';
  else {
    const agent = costOf(runs, 'agent', prices);
    const judge = costOf(runs, 'judge', prices);
    if ('missing' in agent || 'missing' in judge) {
      const missing = 'missing' in agent ? agent.missing : (judge as { missing: string }).missing;
      costNote = `No price for model '${missing}' in LLM_PRICES`;
    } else cost = { currency: 'USD', agent: round6(agent.usd), judge: round6(judge.usd), total: round6(agent.usd + judge.usd) };
  }

  return {
    scenarios,
    passRate: overall === null ? null : round4(overall),
    flakyCount: scenarios.filter((s) => s.flaky).length,
    usage,
    cost,
    costNote,
  };
}

/**
 * What a batch says per scenario, and how two batches of a collection compare. Pure: it works on a batch's runs
 * (repos/scenario-batches.ts batchRuns), one run per scenario or several (repeats) alike.
 *
 * A scenario's pass rate is its passed runs over its finished runs (completed or failed: a run that ended in an error
 * is a run that did not pass, which is what a release gate must see); `null` while none has finished. Its verdicts
 * disagree (`flaky`) when some of its finished runs passed and some did not.
 */

export interface StatRun {
  scenario_id: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  success: boolean | null;
}

export type Verdict = 'pass' | 'fail' | 'error';

export interface ScenarioStats {
  scenarioId: string;
  /** Finished runs. */
  runs: number;
  passed: number;
  failed: number;
  passRate: number | null;
  /** The verdict of each finished run, in the order given: `error` for a run that failed before a verdict. */
  verdicts: Verdict[];
  flaky: boolean;
}

/** Per scenario, in the order each scenario's first run appears. */
export function scenarioStats(runs: StatRun[]): ScenarioStats[] {
  const by = new Map<string, ScenarioStats>();
  for (const r of runs) {
    let s = by.get(r.scenario_id);
    if (!s) {
      s = { scenarioId: r.scenario_id, runs: 0, passed: 0, failed: 0, passRate: null, verdicts: [], flaky: false };
      by.set(r.scenario_id, s);
    }
    if (r.status !== 'completed' && r.status !== 'failed') continue;
    s.runs++;
    const verdict: Verdict = r.status === 'failed' ? 'error' : r.success ? 'pass' : 'fail';
    s.verdicts.push(verdict);
    if (verdict === 'pass') s.passed++;
    else s.failed++;
  }
  for (const s of by.values()) {
    s.passRate = s.runs > 0 ? s.passed / s.runs : null;
    s.flaky = s.passed > 0 && s.failed > 0;
  }
  return [...by.values()];
}

/** The batch's pass rate over all its finished runs (null while none has finished). */
export function batchPassRate(runs: StatRun[]): { passed: number; failed: number; passRate: number | null } {
  let passed = 0;
  let failed = 0;
  for (const r of runs) {
    if (r.status === 'completed' && r.success) passed++;
    else if (r.status === 'completed' || r.status === 'failed') failed++;
  }
  return { passed, failed, passRate: passed + failed > 0 ? passed / (passed + failed) : null };
}

export type Change = 'regression' | 'improvement' | 'unchanged' | 'flaky' | 'added' | 'removed';

export interface ScenarioChange {
  scenarioId: string;
  basePassRate: number | null;
  headPassRate: number | null;
  change: Change;
}

export type ChangeTotals = Record<'regressions' | 'improvements' | 'unchanged' | 'flaky' | 'added' | 'removed', number>;

/** Pass rates are ratios of small counts: a difference within this is no difference. */
const EPSILON = 1e-9;

/** The order scenarios are listed in: what needs a look first. */
const ORDER: Change[] = ['regression', 'flaky', 'improvement', 'added', 'removed', 'unchanged'];

/**
 * Each scenario of either batch: `added` (no finished run in base), `removed` (none in head), `regression` (its pass
 * rate fell by more than `threshold`), `flaky` (not a regression, but its head verdicts disagree), `improvement` (rose
 * by more than `threshold`), else `unchanged`. Listed regressions first, then flaky, improvements, added, removed,
 * unchanged; the order within each is the head's (then the base's).
 */
export function compareStats(base: ScenarioStats[], head: ScenarioStats[], threshold: number): { scenarios: ScenarioChange[]; totals: ChangeTotals } {
  const baseBy = new Map(base.filter((s) => s.passRate !== null).map((s) => [s.scenarioId, s]));
  const headBy = new Map(head.filter((s) => s.passRate !== null).map((s) => [s.scenarioId, s]));
  const ids = [...new Set([...headBy.keys(), ...baseBy.keys()])];
  const scenarios = ids.map((scenarioId): ScenarioChange => {
    const b = baseBy.get(scenarioId)?.passRate ?? null;
    const h = headBy.get(scenarioId);
    const hr = h?.passRate ?? null;
    let change: Change;
    if (b === null) change = 'added';
    else if (hr === null) change = 'removed';
    else if (b - hr > threshold + EPSILON) change = 'regression';
    else if (h!.flaky) change = 'flaky';
    else if (hr - b > threshold + EPSILON) change = 'improvement';
    else change = 'unchanged';
    return { scenarioId, basePassRate: b, headPassRate: hr, change };
  });
  scenarios.sort((x, y) => ORDER.indexOf(x.change) - ORDER.indexOf(y.change));
  const totals: ChangeTotals = { regressions: 0, improvements: 0, unchanged: 0, flaky: 0, added: 0, removed: 0 };
  const key: Record<Change, keyof ChangeTotals> = {
    regression: 'regressions',
    improvement: 'improvements',
    unchanged: 'unchanged',
    flaky: 'flaky',
    added: 'added',
    removed: 'removed',
  };
  for (const s of scenarios) totals[key[s.change]]++;
  return { scenarios, totals };
}

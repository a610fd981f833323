/**
 * The per-scenario arithmetic of batches (core/scenarios/scenario-batch-stats.ts) where one batch holds several runs of a
 * scenario (repeats), and the JUnit report of `toolshed eval` (bin/eval.ts) for such a batch: flaky scenarios are
 * marked, failed and regressed ones carry a failure element.
 */
import test from 'ava';
import { XMLParser } from 'fast-xml-parser';
import { batchPassRate, compareStats, scenarioStats, type StatRun } from '../core/scenarios/scenario-batch-stats.js';
import { junitReport } from '../bin/eval.js';

const run = (scenario_id: string, verdict: 'pass' | 'fail' | 'error' | 'queued'): StatRun => ({
  scenario_id,
  status: verdict === 'error' ? 'failed' : verdict === 'queued' ? 'queued' : 'completed',
  success: verdict === 'pass' ? true : verdict === 'fail' ? false : null,
});

test('per scenario: pass rate over finished runs, an errored run does not pass, flaky when verdicts disagree', (t) => {
  const stats = scenarioStats([
    run('a', 'pass'),
    run('b', 'fail'),
    run('a', 'fail'),
    run('a', 'pass'),
    run('c', 'error'),
    run('c', 'queued'),
    run('b', 'fail'),
  ]);
  t.deepEqual(
    stats.map((s) => [s.scenarioId, s.runs, s.passed, s.passRate, s.verdicts, s.flaky]),
    [
      ['a', 3, 2, 2 / 3, ['pass', 'fail', 'pass'], true],
      ['b', 2, 0, 0, ['fail', 'fail'], false],
      ['c', 1, 0, 0, ['error'], false],
    ],
  );
  t.deepEqual(batchPassRate([run('a', 'pass'), run('a', 'error'), run('b', 'fail'), run('b', 'queued')]), { passed: 1, failed: 2, passRate: 1 / 3 });
  t.deepEqual(batchPassRate([run('a', 'queued')]), { passed: 0, failed: 0, passRate: null });
});

test('compare with repeats: 3/3 -> 2/3 is a regression (not hidden as flaky); flaky when it did not fall; threshold', (t) => {
  const base = scenarioStats(['x', 'y', 'z'].flatMap((id) => [run(id, 'pass'), run(id, 'pass'), run(id, 'pass')]).concat([run('w', 'fail')]));
  const head = scenarioStats([
    ...[run('x', 'pass'), run('x', 'fail'), run('x', 'pass')],
    ...[run('y', 'pass'), run('y', 'pass'), run('y', 'pass')],
    ...[run('w', 'pass'), run('w', 'fail')],
    run('z', 'pass'),
  ]);
  const strict = compareStats(base, head, 0);
  t.deepEqual(
    strict.scenarios.map((s) => [s.scenarioId, s.change]),
    [
      ['x', 'regression'],
      ['w', 'flaky'],
      ['y', 'unchanged'],
      ['z', 'unchanged'],
    ],
  );
  t.deepEqual(strict.totals, { regressions: 1, improvements: 0, unchanged: 2, flaky: 1, added: 0, removed: 0 });
  const lenient = compareStats(base, head, 0.5);
  t.is(lenient.scenarios.find((s) => s.scenarioId === 'x')!.change, 'flaky', 'a fall within the threshold: flaky, not a regression');
  t.is(compareStats(head, base, 0.5).scenarios.find((s) => s.scenarioId === 'w')!.change, 'unchanged', 'a fall of 0.5 is not more than a threshold of 0.5');
});

test('JUnit report: one testcase per scenario; flaky marked with a property and in system-out; failure when none passed or regressed; names escaped', (t) => {
  const [flaky, failed, passed] = scenarioStats([run('f', 'pass'), run('f', 'fail'), run('n', 'fail'), run('n', 'error'), run('p', 'pass')]);
  const xml = junitReport('my-coll', 'batch-1', [
    { ...flaky!, name: 'Flaky <one> & "quoted"', regressed: false, basePassRate: null },
    { ...failed!, name: 'Never passes\u0001', regressed: false, basePassRate: null },
    { ...passed!, name: 'Regressed', regressed: true, basePassRate: 1 },
  ]);
  const doc = new XMLParser({ ignoreAttributes: false, isArray: (name) => ['testcase', 'property'].includes(name) }).parse(xml);
  const suite = doc.testsuites.testsuite;
  t.is(suite['@_tests'], '3');
  t.is(suite['@_failures'], '2');
  const cases = suite.testcase;
  t.deepEqual(
    cases.map((c: any) => c['@_name']),
    ['Flaky <one> & "quoted"', 'Never passes\uFFFD', 'Regressed'],
  );
  const prop = (c: any, name: string) => c.properties.property.find((p: any) => p['@_name'] === name)?.['@_value'];
  t.is(prop(cases[0], 'flaky'), 'true');
  t.falsy(cases[0].failure, 'a flaky scenario that passed at least once is marked, not failed');
  t.regex(cases[0]['system-out'], /flaky/);
  t.regex(cases[0]['system-out'], /pass, fail/);
  t.is(cases[1].failure['@_type'], 'fail');
  t.is(prop(cases[1], 'flaky'), 'false');
  t.is(cases[2].failure['@_type'], 'regression');
  t.regex(cases[2].failure['@_message'], /100% -> 100%|regressed/);
});

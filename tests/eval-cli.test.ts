/**
 * `npx toolshed eval` (issue 25 item 6) as CI runs it: a child process (bin/toolshed.js, the package's `bin`) against
 * a real service with its worker and sandbox, on the offline provider. Exit codes 0/1/2, the JUnit file, the JSON
 * summary, the baseline gate, and the server's message on a service error.
 */
import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';

const ROOT = path.resolve(new URL('..', import.meta.url).pathname);
const FAILING = [{ type: 'outputContains', text: 'never in any output' }];

let svc: Service;
let pro: { key: string; id: string };
let toolIds: string[];
let tmp: string;

test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { SCENARIO_DAILY_QUOTA: '1' } });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
  toolIds = res.body.data.tools.map((t: { id: string }) => t.id);
  pro = await svc.createUser({ tier: 'pro' });
  tmp = await mkdtemp(path.join(os.tmpdir(), 'toolshed-eval-'));
});
test.after.always(() => svc?.close());

function cli(args: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(ROOT, 'bin', 'toolshed.js'), 'eval', ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, TOOLSHED_URL: svc.url, TOOLSHED_API_KEY: pro.key, ...env }, timeout: 170_000 },
      (err, stdout, stderr) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

/** The CLI on a terminal: `script` gives it a pseudo-terminal (its output, stdout and stderr, comes back as one). */
function cliOnTerminal(args: string[]): Promise<{ code: number; output: string }> {
  const command = [process.execPath, path.join(ROOT, 'bin', 'toolshed.js'), 'eval', ...args].map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(' ');
  return new Promise((resolve) => {
    execFile(
      'script',
      // A pseudo-terminal of `script` has no size until given one (a bar has no room on a 0-column terminal).
      ['-qec', `stty cols 120 rows 40; ${command}`, '/dev/null'],
      { cwd: ROOT, env: { PATH: process.env.PATH, HOME: process.env.HOME, TERM: 'xterm', TOOLSHED_URL: svc.url, TOOLSHED_API_KEY: pro.key }, timeout: 170_000 },
      (err, stdout) => resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, output: stdout }),
    );
  });
}

async function collection(key: string, name: string, prompts: { prompt: string; failing?: boolean }[]) {
  const c = await svc.createCollection(key, { name, isPublic: true }, toolIds);
  const ids: string[] = [];
  for (const p of prompts) {
    const res = await svc.request('POST', '/api/scenarios', {
      key,
      body: { collectionId: c.id, prompt: p.prompt, assertions: p.failing ? FAILING : undefined },
    });
    if (res.status !== 201) throw new Error(res.text);
    ids.push(res.body.data.id);
  }
  return { ...c, ids };
}

const junitOf = async (file: string) =>
  new XMLParser({ ignoreAttributes: false, isArray: (name) => ['testcase', 'property'].includes(name) }).parse(await readFile(file, 'utf8')).testsuites
    .testsuite;

test('gates hold: exit 0, a table, a JUnit testcase per scenario; a failing scenario fails the default gate (exit 1) but not --min-pass-rate 0.5', async (t) => {
  const c = await collection(pro.key, 'Eval green', [
    { prompt: 'Slugify "Hello World" with slugify' },
    { prompt: 'Count the words in "the quick brown fox jumps" with textStatistics' },
  ]);
  // On a terminal (script(1) gives it one): a progress bar, the table, and the JUnit file.
  const junit = path.join(tmp, 'green.xml');
  const green = await cliOnTerminal([c.uid, '--junit', junit]);
  t.is(green.code, 0, green.output);
  t.regex(green.output, /running \[=+\] 2\/2 100%/, 'a progress bar on a terminal');
  t.notRegex(green.output, /\[1\/2\]/, 'no plain progress lines there');
  t.regex(green.output, /Slugify "Hello World" with slugify/);
  t.regex(green.output, /pass rate 100% \(2\/2 runs\)/);
  t.regex(green.output, /gates hold/);
  const suite = await junitOf(junit);
  t.is(suite['@_tests'], '2');
  t.is(suite['@_failures'], '0');
  t.deepEqual(suite.testcase.map((x: any) => x['@_name']).sort(), [
    'Count the words in "the quick brown fox jumps" with textStatistics',
    'Slugify "Hello World" with slugify',
  ]);
  t.true(suite.testcase.every((x: any) => x.failure === undefined));

  await svc.request('POST', '/api/scenarios', {
    key: pro.key,
    body: { collectionId: c.id, prompt: 'Convert "user account id" to camel case with convertCase', assertions: FAILING },
  });
  const red = path.join(tmp, 'red.xml');
  const failing = await cli([c.id, '--junit', red, '--json']);
  t.is(failing.code, 1, failing.stderr);
  t.regex(failing.stderr, /\[3\/3\] .*: (pass|fail)/, 'plain progress lines on stderr when not on a terminal');
  const summary = JSON.parse(failing.stdout);
  t.like(summary, { ok: false, passed: 2, failed: 1, minPassRate: 1, skipped: 0, baseline: null, collection: { id: c.id, uid: c.uid } });
  t.is(summary.passRate, 2 / 3);
  t.regex(summary.failures[0], /pass rate 66.7% is below 100%/);
  t.like(
    summary.scenarios.find((s: any) => s.name.startsWith('Convert')),
    { passRate: 0, verdicts: ['fail'], flaky: false, regressed: false },
  );
  const suite2 = await junitOf(red);
  t.is(suite2['@_failures'], '1');
  t.is(suite2.testcase.find((x: any) => x['@_name'].startsWith('Convert')).failure['@_type'], 'fail');

  const lenient = await cli([c.id, '--min-pass-rate', '0.5', '--json']);
  t.is(lenient.code, 0, lenient.stderr);
  t.like(JSON.parse(lenient.stdout), { ok: true, minPassRate: 0.5, failures: [] });
});

test('--baseline latest: a scenario that passed in the newest completed batch and fails now is a regression (exit 1); a batch id works too', async (t) => {
  const c = await collection(pro.key, 'Eval baseline', [{ prompt: 'Slugify "Hello World" with slugify' }, { prompt: 'Slugify "Another Title" with slugify' }]);
  const first = await cli([c.uid, '--baseline', 'latest', '--json']);
  t.is(first.code, 0, first.stderr);
  const firstSummary = JSON.parse(first.stdout);
  t.is(firstSummary.baseline, null, 'no completed batch yet: no baseline');
  t.regex(first.stderr, /baseline: none/);

  t.is((await svc.request('PATCH', `/api/scenarios/${c.ids[1]}`, { key: pro.key, body: { assertions: FAILING } })).status, 200);
  const junit = path.join(tmp, 'regressed.xml');
  const second = await cli([c.uid, '--baseline', 'latest', '--min-pass-rate', '0', '--json', '--junit', junit]);
  t.is(second.code, 1, second.stderr);
  const summary = JSON.parse(second.stdout);
  t.like(summary, { ok: false, baseline: firstSummary.batchId, totals: { regressions: 1, unchanged: 1 } });
  t.is(summary.failures.length, 1);
  t.regex(summary.failures[0], /1 scenario\(s\) regressed/);
  t.like(
    summary.scenarios.find((s: any) => s.scenarioId === c.ids[1]),
    { regressed: true, basePassRate: 1, passRate: 0 },
  );
  const suite = await junitOf(junit);
  const testcase = suite.testcase.find((x: any) => x['@_name'] === 'Slugify "Another Title" with slugify');
  t.is(testcase.failure['@_type'], 'regression');

  // Against the first batch by id, in words: the table marks it.
  const byId = await cli([c.uid, '--baseline', firstSummary.batchId, '--min-pass-rate', '0.5']);
  t.is(byId.code, 1, byId.stderr);
  t.regex(byId.stdout, /100% -> 0%/);
  t.regex(byId.stdout, /FAILED: 1 scenario\(s\) regressed against baseline/);
});

async function expect2(t: ExecutionContext, args: string[], says: RegExp, env: Record<string, string | undefined> = {}) {
  const r = await cli(args, env);
  t.is(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
  t.regex(r.stderr, says);
  t.is(r.stdout, '');
}

test('usage and service errors exit 2 with the reason: bad flags, no key, unknown collection or baseline, unreachable service', async (t) => {
  const c = await collection(pro.key, 'Eval errors', [{ prompt: 'Slugify "Hello World" with slugify' }]);
  await expect2(t, [c.uid, '--nope'], /Unknown option '--nope'[\s\S]*usage: toolshed eval/);
  await expect2(t, [], /exactly one collection/);
  await expect2(t, [c.uid, '--repeat', '0'], /--repeat must be an integer from 1 to 10/);
  await expect2(t, [c.uid, '--min-pass-rate', '1.5'], /--min-pass-rate must be a number from 0 to 1/);
  await expect2(t, [c.uid], /401 /, { TOOLSHED_API_KEY: undefined });
  await expect2(t, ['no-such-collection'], /404 .*no-such-collection/);
  await expect2(t, [c.uid], /cannot reach http:\/\/127\.0\.0\.1:9/, { TOOLSHED_URL: 'http://127.0.0.1:9' });
  await expect2(t, [c.uid, '--baseline', '00000000-0000-4000-8000-000000000000'], /404 /);
});

test('a baseline of another collection exits 2; runs skipped for quota fail the gate (1), an empty quota is the service 429 (2)', async (t) => {
  const c = await collection(pro.key, 'Eval foreign', [{ prompt: 'Slugify "Hello World" with slugify' }]);
  const other = await collection(pro.key, 'Eval other', [{ prompt: 'Slugify "Other One" with slugify' }]);
  const foreign = await cli([other.uid, '--json']);
  t.is(foreign.code, 0, foreign.stderr);
  await expect2(t, [c.uid, '--baseline', JSON.parse(foreign.stdout).batchId], /another collection/);

  // A free user's quota here is one run a day: a two-scenario batch runs one and skips one (the gate fails: the
  // batch is incomplete); the next is the service's 429, with its message.
  const free = await svc.createUser();
  const small = await collection(free.key, 'Eval quota', [
    { prompt: 'Slugify "Hello World" with slugify' },
    { prompt: 'Slugify "Another Title" with slugify' },
  ]);
  const partial = await cli([small.uid, '--json'], { TOOLSHED_API_KEY: free.key });
  t.is(partial.code, 1, partial.stderr);
  t.like(JSON.parse(partial.stdout), { ok: false, skipped: 1, passed: 1 });
  await expect2(t, [small.uid], /429 .*quota/i, { TOOLSHED_API_KEY: free.key });
});

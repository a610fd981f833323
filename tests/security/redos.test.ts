import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';

// A tool's input schema is anyone's to write and anyone may call the tool: its patterns must not let one request
// hold the API (a backtracking `^(a+)+$` against 31 characters took 14 s; against 5,000 it would never end).
let svc: Service;
const ONLY_AS = '/api/tools/execute/@fixtures/redos-schema/onlyAs';
const STRONG_CODE = '/api/tools/execute/@fixtures/redos-schema/strongCode';

test.before(async () => {
  svc = await startService();
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'redos-schema')}`);
  if (res.status !== 201) throw new Error(res.text);
});
test.after.always(() => svc?.close());

const executionsOfWord = async (word: string) => Number((await svc.api.deps.db('executions').whereRaw("params->>'word' = ?", [word]).count('* as n'))[0].n);

test('an anonymous input built to make ^(a+)+$ backtrack is refused promptly, and /health answers meanwhile', async (t) => {
  const evil = `${'a'.repeat(5000)}!`;
  const [res, health] = await Promise.all([svc.request('POST', ONLY_AS, { body: { params: { word: evil } } }), svc.request('GET', '/health')]);
  t.is(health.status, 200, health.text);
  t.is(res.status, 400, res.text);
  t.is(res.body.error.code, 'VALIDATION_ERROR');
  t.true(
    res.body.error.details.some((d: { path: string }) => d.path === 'params.word'),
    res.text,
  );
  t.is(await executionsOfWord(evil), 0, 'nothing was queued');
  // The pattern still holds: a word of a's runs.
  const ok = await svc.request('POST', ONLY_AS, { body: { params: { word: 'a'.repeat(5000) } } });
  t.is(ok.status, 200, ok.text);
  t.true(ok.body.success, ok.text);
});

test('patternProperties run on the same engine: a key built to backtrack is judged promptly', async (t) => {
  const evilKey = `${'a'.repeat(5000)}!`;
  const [res, health] = await Promise.all([
    svc.request('POST', ONLY_AS, { body: { params: { word: 'a', counts: { [evilKey]: 'any' } } } }),
    svc.request('GET', '/health'),
  ]);
  t.is(health.status, 200, health.text);
  t.is(res.status, 200, res.text);
  t.deepEqual(res.body.result, { word: 'a', counts: { [evilKey]: 'any' } }, 'the key matches no pattern, so nothing constrains it');
  const bad = await svc.request('POST', ONLY_AS, { body: { params: { word: 'a', counts: { aaa: 'three' } } } });
  t.is(bad.status, 400, bad.text);
  t.is(bad.body.error.code, 'VALIDATION_ERROR');
  t.true(
    bad.body.error.details.some((d: { path: string }) => d.path === 'params.counts.aaa'),
    bad.text,
  );
});

test('a pattern RE2 cannot express (a lookahead) is checked in the sandbox, not the API; the rest of the schema still holds', async (t) => {
  const noDigit = await svc.request('POST', STRONG_CODE, { body: { params: { code: 'abcdefgh' } } });
  t.is(noDigit.status, 200, noDigit.text);
  t.false(noDigit.body.success, 'the API passed the value on; the sandbox refused it');
  t.is(noDigit.body.error.code, 'TOOL_ERROR');
  t.regex(noDigit.body.error.message, /must match pattern/);
  const good = await svc.request('POST', STRONG_CODE, { body: { params: { code: 'abcdefg1' } } });
  t.true(good.body.success, good.text);
  const tooLong = await svc.request('POST', STRONG_CODE, { body: { params: { code: `${'a'.repeat(30)}1` } } });
  t.is(tooLong.status, 400, tooLong.text);
  t.is(tooLong.body.error.code, 'VALIDATION_ERROR');
});

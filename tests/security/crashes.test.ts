/**
 * Issue 21, item 9: a tool's own failure is never run again. A tool that crashes its process by a signal
 * (`process.abort()`, SIGSEGV) was a SANDBOX_ERROR run three times; an output nested thousands deep with an env value
 * overflowed the worker's stack (redaction, then storing it) and was run three times before ending as INTERNAL. A
 * crash is now a TOOL_ERROR naming the signal, an output nested deeper than 512 levels a TOOL_ERROR saying so (one
 * within the bound is redacted and returned); each runs once (the execution's attempts).
 */
import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';

const SLUG = '@fixtures/crash-tools';
let svc: Service;
test.before(async () => {
  svc = await startService();
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'crash-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
});
test.after.always(() => svc?.close());

/** How many times the worker ran an execution: its attempts, and its job's (while the job exists). */
async function attemptsOf(executionId: string): Promise<number> {
  const row = await svc.api.deps.db('executions').where({ id: executionId }).first('attempts');
  return Number(row.attempts);
}

for (const tool of ['abort', 'segfault']) {
  test(`a tool that crashes its process (${tool}) is a TOOL_ERROR naming the signal, run exactly once`, async (t) => {
    const res = await svc.request('POST', `/api/tools/execute/${SLUG}/${tool}`, { body: { params: {} } });
    t.is(res.status, 200, res.text);
    t.false(res.body.success, res.text);
    t.is(res.body.error.code, 'TOOL_ERROR', res.text);
    t.regex(res.body.error.message, tool === 'abort' ? /crashed its process \(SIGABRT\)/ : /crashed its process \(SIGSEGV\)/);
    t.is(await attemptsOf(res.body.executionId), 1, 'the tool ran once');
  });
}

test('an output nested 512 deep with an env value is redacted and returned, run exactly once', async (t) => {
  const secret = 'deep-secret-value-42';
  const res = await svc.request('POST', `/api/tools/execute/${SLUG}/deepOutput`, { body: { params: { depth: 511 }, env: { SOME_SECRET: secret } } });
  t.is(res.status, 200, res.text.slice(0, 500));
  t.true(res.body.success, res.text.slice(0, 500));
  let inner = res.body.result;
  let depth = 0;
  while (Array.isArray(inner)) {
    inner = inner[0];
    depth++;
  }
  t.is(depth, 511);
  t.deepEqual(inner, { secret: '[redacted]', depth: 511 });
  t.false(res.text.includes(secret));
  t.is(await attemptsOf(res.body.executionId), 1, 'the tool ran once');
});

test('an output nested 3,000 deep with an env value is a TOOL_ERROR saying so, run exactly once', async (t) => {
  const secret = 'deep-secret-value-43';
  const res = await svc.request('POST', `/api/tools/execute/${SLUG}/deepOutput`, { body: { params: { depth: 3000 }, env: { SOME_SECRET: secret } } });
  t.is(res.status, 200, res.text.slice(0, 500));
  t.false(res.body.success, res.text.slice(0, 500));
  t.is(res.body.error.code, 'TOOL_ERROR');
  t.is(res.body.error.message, "The tool's output is nested more than 512 levels deep");
  t.is(await attemptsOf(res.body.executionId), 1, 'the tool ran once');
  const stored = await svc.request('GET', `/api/executions/${res.body.executionId}`);
  t.is(stored.body.data.status, 'failed');
  t.false(stored.text.includes(secret));
});

/**
 * Behaviour every SandboxRunner must have, run against both implementations (gVisor with a warm pool, and the
 * child-process fallback) on the fixture packages in tests/fixtures/sandbox; plus gVisor-only checks of the pool,
 * cold sandboxes, clean-up after timeouts, and reuse mode. Real runsc, no mocks.
 */
import test from 'ava';
import fs from 'node:fs';
import { createGvisorRunner, type GvisorRunner } from '../sandbox/gvisor-runner.js';
import { createProcessRunner } from '../sandbox/process-runner.js';
import type { ExecuteRequest, SandboxRunner } from '../sandbox/types.js';
import { FIXTURES_DIR, makeFixtureCache, makeStateDir } from './fixtures/sandbox/make-cache.js';

const cache = makeFixtureCache();
const stateDirs: string[] = [];
function gvisor(opts: Partial<Parameters<typeof createGvisorRunner>[0]> = {}): GvisorRunner {
  const stateDir = makeStateDir();
  stateDirs.push(stateDir);
  return createGvisorRunner({ poolSize: 2, network: 'none', packageCacheDir: cache.dir, stateDir, ...opts });
}
const runners: Record<'gvisor' | 'process', SandboxRunner> = { gvisor: gvisor(), process: createProcessRunner() };

test.after.always(async () => {
  await Promise.all(Object.values(runners).map((r) => r.close()));
  cache.remove();
  for (const dir of stateDirs) fs.rmSync(dir, { recursive: true, force: true });
});

const exec = (runner: SandboxRunner, pkg: string, exportName: string, params: unknown, more: Partial<ExecuteRequest> = {}) =>
  runner.execute({ pkg: cache.pkg(pkg), exportName, params, env: {}, timeoutMs: 10_000, ...more });

for (const kind of ['gvisor', 'process'] as const) {
  const runner = runners[kind];

  test(`${kind}: describe lists tools with JSON Schemas, in every export form`, async (t) => {
    const r = await runner.describe(cache.pkg('good'), { timeoutMs: 10_000 });
    if (r.kind !== 'ok') return t.fail(JSON.stringify(r));
    const byName = Object.fromEntries(r.tools.map((tool) => [tool.exportName, tool]));
    t.deepEqual(Object.keys(byName).sort(), ['add', 'bigOutput', 'counter', 'echo', 'makeGreeter', 'readEnv', 'sleep', 'tmpRead', 'tmpWrite']);
    t.deepEqual(byName.echo.inputSchema, {
      type: 'object',
      properties: { text: { type: 'string', minLength: 1 }, times: { type: 'integer', minimum: 1, maximum: 5 } },
      required: ['text'],
      additionalProperties: false,
    });
    t.is(byName.echo.description, 'Echoes its text back');
    t.deepEqual(byName.add.inputSchema.required, ['a', 'b']); // AI SDK Schema with a jsonSchema getter
    t.is(byName.makeGreeter.description, 'Greets someone (made by a factory)');
    t.deepEqual(r.missing, []);
  });

  test(`${kind}: describe reports missing exports`, async (t) => {
    const r = await runner.describe(cache.pkg('good'), { timeoutMs: 10_000, exportNames: ['echo', 'nope', 'VERSION'] });
    if (r.kind !== 'ok') return t.fail(JSON.stringify(r));
    t.deepEqual(r.tools.map((tool) => tool.exportName), ['echo']);
    t.deepEqual(r.missing, ['nope', 'VERSION']);
  });

  test(`${kind}: describe converts zod schemas with the package's own zod (CJS, exports map, factory)`, async (t) => {
    const r = await runner.describe(cache.pkg('zod-cjs'), { timeoutMs: 10_000 });
    if (r.kind !== 'ok') return t.fail(JSON.stringify(r));
    t.deepEqual(r.tools.map((tool) => tool.exportName), ['upper', 'makeCounter']);
    t.deepEqual(r.tools[0].inputSchema, {
      type: 'object',
      properties: { word: { type: 'string' } },
      required: ['word'],
      additionalProperties: false,
    });
  });

  test(`${kind}: a package that fails to load is a load_error`, async (t) => {
    const r = await runner.describe(cache.pkg('broken-load'), { timeoutMs: 10_000 });
    t.like(r, { kind: 'load_error', message: 'this package cannot be loaded' });
  });

  test(`${kind}: execute returns the tool's output; console output does not disturb it`, async (t) => {
    t.like(await exec(runner, 'good', 'echo', { text: 'ab', times: 2 }), { kind: 'ok', output: { text: 'abab' } });
    t.like(await exec(runner, 'good', 'add', { a: 2, b: 3 }), { kind: 'ok', output: 5 });
    t.like(await exec(runner, 'good', 'makeGreeter', { name: 'Ada' }), { kind: 'ok', output: 'hello Ada' });
    t.like(await exec(runner, 'zod-cjs', 'upper', { word: 'hi' }), { kind: 'ok', output: 'HI' });
  });

  test(`${kind}: params are validated against the schema`, async (t) => {
    const r = await exec(runner, 'good', 'echo', { text: '', extra: 1 });
    t.is(r.kind, 'tool_error');
    t.regex((r as { message: string }).message, /invalid params: .*at least 1 characters.*additional property 'extra'/);
    const z = await exec(runner, 'zod-cjs', 'upper', { word: 3 });
    t.like(z, { kind: 'tool_error', message: 'invalid params: word: Expected string' });
  });

  test(`${kind}: a throwing tool is a tool_error with its message`, async (t) => {
    t.like(await exec(runner, 'throwing', 'fail', {}), { kind: 'tool_error', message: 'kaboom: the tool failed on purpose' });
    t.like(await exec(runner, 'throwing', 'quit', {}), { kind: 'tool_error', message: 'the tool called process.exit(3)' });
    t.like(await exec(runner, 'good', 'nope', {}), { kind: 'tool_error', message: 'export "nope" not found in the package' });
    const load = await exec(runner, 'broken-load', 'x', {});
    t.like(load, { kind: 'tool_error', message: 'cannot load the package: this package cannot be loaded' });
  });

  test(`${kind}: env reaches the tool as process.env, and only the given env`, async (t) => {
    const r = await exec(runner, 'good', 'readEnv', { key: 'API_TOKEN' }, { env: { API_TOKEN: 'tok-123456', OTHER: 'x' } });
    t.like(r, { kind: 'ok', output: { keys: ['API_TOKEN', 'OTHER'], value: 'tok-123456' } });
  });

  test(`${kind}: env values are redacted from error messages`, async (t) => {
    const r = await exec(runner, 'throwing', 'leak', {}, { env: { TOKEN: 'very-secret-value' } });
    t.like(r, { kind: 'tool_error', message: 'bad token [redacted]' });
  });

  test(`${kind}: output over 1 MiB is output_too_large`, async (t) => {
    t.is((await exec(runner, 'good', 'bigOutput', {})).kind, 'output_too_large');
  });

  test(`${kind}: the time limit ends a slow tool as timeout`, async (t) => {
    const r = await exec(runner, 'good', 'sleep', { ms: 30_000 }, { timeoutMs: 1500 });
    t.is(r.kind, 'timeout');
    t.true(r.durationMs >= 1500 && r.durationMs < 30_000, `took ${r.durationMs} ms`); // includes waiting for a sandbox
  });

  test(`${kind}: an abort signal stops the execution`, async (t) => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    t.like(await exec(runner, 'good', 'sleep', { ms: 30_000 }, { signal: controller.signal }), { kind: 'sandbox_error', message: 'aborted' });
  });

  test(`${kind}: several executions at once`, async (t) => {
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => exec(runner, 'good', 'echo', { text: `n${i}` })));
    t.deepEqual(results.map((r) => (r.kind === 'ok' ? r.output : r)), Array.from({ length: 6 }, (_, i) => ({ text: `n${i}` })));
  });

  test(`${kind}: executions do not share globals or /tmp`, async (t) => {
    t.like(await exec(runner, 'good', 'counter', {}), { kind: 'ok', output: 1 });
    t.like(await exec(runner, 'good', 'counter', {}), { kind: 'ok', output: 1 });
  });
}

test('gvisor: after a timeout the sandbox is gone', async (t) => {
  const runner = gvisor({ poolSize: 0 });
  t.teardown(() => runner.close());
  const r = await exec(runner, 'good', 'sleep', { ms: 30_000 }, { timeoutMs: 1000 });
  t.is(r.kind, 'timeout');
  t.deepEqual(await runner.listContainers(), []);
});

test('gvisor: a package outside the cache runs in a cold sandbox with only that package mounted', async (t) => {
  const r = await runners.gvisor.describe({ name: 'good', version: '1.0.0', dir: `${FIXTURES_DIR}/good` }, { timeoutMs: 20_000 });
  t.is(r.kind, 'ok');
});

test('gvisor: a package installed after the pool booted is visible to pooled sandboxes', async (t) => {
  const runner = runners.gvisor as GvisorRunner;
  t.true(await runner.pool.whenFull(30_000));
  const pkg = cache.install('good', 'late-arrival');
  const r = await runner.execute({ pkg, exportName: 'echo', params: { text: 'late' }, env: {}, timeoutMs: 10_000 });
  t.like(r, { kind: 'ok', output: { text: 'late' } });
});

test('gvisor: the pool refills after use and warm executions are fast', async (t) => {
  const runner = gvisor({ poolSize: 1 });
  t.teardown(() => runner.close());
  const times: number[] = [];
  for (let i = 0; i < 3; i++) {
    t.true(await runner.pool.whenFull(30_000));
    const r = await exec(runner, 'good', 'echo', { text: 'x' });
    t.is(r.kind, 'ok');
    times.push(r.durationMs);
  }
  t.true(Math.min(...times) < 300, `warm executions took ${times.join(', ')} ms`);
});

test('gvisor reuse: one key reuses a sandbox with fresh globals, env and /tmp; keys never share', async (t) => {
  const runner = gvisor({ poolSize: 1, reuse: { maxExecutions: 3, maxAgeMs: 60_000 } });
  t.teardown(() => runner.close());
  const run = (exportName: string, params: unknown, reuseKey: string, env: Record<string, string> = {}) =>
    exec(runner, 'good', exportName, params, { reuseKey, env });
  t.like(await run('tmpWrite', { name: 'mark' }, 'key-a', { A: '1' }), { kind: 'ok' });
  t.is(runner.reuse?.idle('key-a'), 1);
  t.like(await run('tmpRead', { name: 'mark' }, 'key-a'), { kind: 'ok', output: { exists: false } });
  t.is(runner.reuse?.idle('key-a'), 1);
  t.is(runner.reuse?.idle('key-b'), 0);
  t.like(await run('readEnv', { key: 'A' }, 'key-a', { B: '2' }), { kind: 'ok', output: { keys: ['B'], value: null } });
  t.is(runner.reuse?.idle('key-a'), 0); // retired after maxExecutions
  t.like(await run('counter', {}, 'key-b'), { kind: 'ok', output: 1 });
  t.like(await run('counter', {}, 'key-b'), { kind: 'ok', output: 1 });
  t.like(await exec(runner, 'throwing', 'fail', {}, { reuseKey: 'key-c' }), { kind: 'tool_error', message: 'kaboom: the tool failed on purpose' });
});

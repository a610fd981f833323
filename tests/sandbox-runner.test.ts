/**
 * Behaviour every SandboxRunner must have, run against both implementations (gVisor with a warm pool, and the
 * child-process fallback) on the fixture packages in tests/fixtures/sandbox; plus gVisor-only checks of the pool,
 * cold sandboxes, clean-up after timeouts, and reuse mode (fresh contexts, env and /tmp per execution, no sharing
 * across keys, retirement). Real runsc, no mocks.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { createGvisorRunner, type GvisorRunner } from '../sandbox/gvisor-runner.js';
import { createProcessRunner } from '../sandbox/process-runner.js';
import type { ReuseOptions } from '../sandbox/reuse.js';
import type { ExecuteRequest, SandboxRunner } from '../sandbox/types.js';
import { FIXTURES_DIR, makeFixtureCache, makeStateDir } from './fixtures/sandbox/make-cache.js';
import { settle } from './helpers/wait.js';

const cache = makeFixtureCache();
const stateDirs: string[] = [];
// The runners of this file build their rootfs (and guest snapshot, ~6 s of a blocked event loop each) once, in the
// run's shared rootfs dir (tests/run.ts) or one of the file's own; the test of SANDBOX_ROOTFS_DIR below uses a fresh one.
const rootfsDir = process.env.TOOLSHED_TEST_ROOTFS_DIR ?? makeStateDir();
if (!process.env.TOOLSHED_TEST_ROOTFS_DIR) stateDirs.push(rootfsDir);
function gvisor(opts: Partial<Parameters<typeof createGvisorRunner>[0]> = {}): GvisorRunner {
  const stateDir = makeStateDir();
  stateDirs.push(stateDir);
  // Some thirty sandboxes boot at once when this file starts; on a loaded 2-core machine that can take longer than the
  // 30 s default (a CI run failed eight tests on it). How fast a sandbox boots is bench:sandbox's business, not this file's.
  return createGvisorRunner({ poolSize: 2, network: 'none', packageCacheDir: cache.dir, stateDir, rootfsDir, bootTimeoutMs: 90_000, ...opts });
}
const runners: Record<'gvisor' | 'process', SandboxRunner> = { gvisor: gvisor(), process: createProcessRunner() };

test.after.always(async () => {
  await Promise.all(Object.values(runners).map((r) => r.close()));
  cache.remove();
  for (const dir of stateDirs) fs.rmSync(dir, { recursive: true, force: true });
});

const exec = (runner: SandboxRunner, pkg: string, exportName: string, params: unknown, more: Partial<ExecuteRequest> = {}) =>
  runner.execute({ pkg: cache.pkg(pkg), exportName, params, env: {}, timeoutMs: 60_000, ...more });

/** A package whose schema names a format the guest's validator does not know, spelled like an Object.prototype member. */
const formatsPkg = (() => {
  const dir = path.join(cache.dir, 'formats@1.0.0');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'formats', version: '1.0.0', main: 'index.js' }));
  const schema = {
    type: 'object',
    properties: { text: { type: 'string', format: 'constructor' }, mail: { type: 'string', format: 'email' } },
    required: ['text'],
  };
  fs.writeFileSync(
    path.join(dir, 'index.js'),
    `exports.tag = { description: 'Returns its text', inputSchema: ${JSON.stringify(schema)}, execute: async ({ text }) => text };\n`,
  );
  return { name: 'formats', version: '1.0.0', dir };
})();

/**
 * A toolkit made with arguments (core/packages/toolkit.ts), beside a tool that is also a function: a class whose
 * getTools() makes tools with the key it is given, and `echo`, which a toolkit's arguments must not call.
 */
const toolkitPkg = (() => {
  const dir = path.join(cache.dir, 'kit@1.0.0');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'kit', version: '1.0.0', main: 'index.js' }));
  fs.writeFileSync(
    path.join(dir, 'index.js'),
    `const schema = { type: 'object', properties: { text: { type: 'string' } } };
exports.echo = Object.assign(() => 'called as a function', { description: 'Echoes', inputSchema: schema, execute: async ({ text }) => text });
exports.Kit = class Kit {
  constructor({ key }) { this.key = key; }
  getTools() { return { shout: { description: 'Shouts', inputSchema: schema, execute: async ({ text }) => ({ text: text.toUpperCase(), key: this.key }) } }; }
};\n`,
  );
  return { name: 'kit', version: '1.0.0', dir };
})();

for (const kind of ['gvisor', 'process'] as const) {
  const runner = runners[kind];

  test(`${kind}: describe lists tools with JSON Schemas, in every export form`, async (t) => {
    const r = await runner.describe(cache.pkg('good'), { timeoutMs: 60_000 });
    if (r.kind !== 'ok') return t.fail(JSON.stringify(r));
    const byName = Object.fromEntries(r.tools.map((tool) => [tool.exportName, tool]));
    t.deepEqual(Object.keys(byName).sort(), [
      'add',
      'bigOutput',
      'counter',
      'echo',
      'leaveServer',
      'leaveTimer',
      'makeGreeter',
      'moduleCounter',
      'readEnv',
      'sandboxStart',
      'sleep',
      'stash',
      'tmpRead',
      'tmpWrite',
    ]);
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

  test(`${kind}: a toolkit locator makes the toolkit with the caller's env; a tool among the exports runs as it is`, async (t) => {
    const args = [{ key: `\${KIT_KEY}` }];
    const shout = await runner.execute({
      pkg: toolkitPkg,
      exportName: JSON.stringify({ export: 'Kit', args, key: 'shout' }),
      params: { text: 'hi' },
      env: { KIT_KEY: 'caller-key' },
      timeoutMs: 60_000,
    });
    t.deepEqual(shout.kind === 'ok' ? shout.output : shout, { text: 'HI', key: 'caller-key' });
    const echo = await runner.execute({
      pkg: toolkitPkg,
      exportName: JSON.stringify({ export: 'echo', args }),
      params: { text: 'as is' },
      env: {},
      timeoutMs: 60_000,
    });
    t.deepEqual(echo.kind === 'ok' ? echo.output : echo, 'as is', 'the tool is not called as a toolkit function');
    const d = await runner.describe(toolkitPkg, {
      timeoutMs: 60_000,
      exportNames: [JSON.stringify({ export: 'Kit', args, key: 'shout' }), '{"not":"a locator"}'],
    });
    if (d.kind !== 'ok') return t.fail(JSON.stringify(d));
    t.is(d.tools.length, 1);
    t.deepEqual(d.missing, ['{"not":"a locator"}']);
  });

  test(`${kind}: describe reports missing exports`, async (t) => {
    const r = await runner.describe(cache.pkg('good'), { timeoutMs: 60_000, exportNames: ['echo', 'nope', 'VERSION'] });
    if (r.kind !== 'ok') return t.fail(JSON.stringify(r));
    t.deepEqual(
      r.tools.map((tool) => tool.exportName),
      ['echo'],
    );
    t.deepEqual(r.missing, ['nope', 'VERSION']);
  });

  test(`${kind}: describe converts zod schemas with the package's own zod (CJS, exports map, factory)`, async (t) => {
    const r = await runner.describe(cache.pkg('zod-cjs'), { timeoutMs: 60_000 });
    if (r.kind !== 'ok') return t.fail(JSON.stringify(r));
    t.deepEqual(
      r.tools.map((tool) => tool.exportName),
      ['upper', 'makeCounter'],
    );
    t.deepEqual(r.tools[0].inputSchema, {
      type: 'object',
      properties: { word: { type: 'string' } },
      required: ['word'],
      additionalProperties: false,
    });
  });

  test(`${kind}: a package that fails to load is a load_error`, async (t) => {
    const r = await runner.describe(cache.pkg('broken-load'), { timeoutMs: 60_000 });
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

  test(`${kind}: a format the validator does not know is ignored, also one named like an Object member ('constructor')`, async (t) => {
    const run = (params: unknown) => runner.execute({ pkg: formatsPkg, exportName: 'tag', params, env: {}, timeoutMs: 60_000 });
    // The guest read the format from a plain object: 'constructor' found Object, and every call failed with 'format.test is not a function'.
    t.like(await run({ text: 'any text' }), { kind: 'ok', output: 'any text' });
    t.like(await run({ text: 'x', mail: 'not-a-mail' }), { kind: 'tool_error', message: 'invalid params: params.mail must be a valid email' });
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
    // A gVisor sandbox also sets HOME: its user's home directory, on its own /tmp.
    const keys = kind === 'gvisor' ? ['API_TOKEN', 'HOME', 'OTHER'] : ['API_TOKEN', 'OTHER'];
    t.like(r, { kind: 'ok', output: { keys, value: 'tok-123456' } });
  });

  test(`${kind}: env values are redacted from error messages`, async (t) => {
    const r = await exec(runner, 'throwing', 'leak', {}, { env: { TOKEN: 'very-secret-value' } });
    t.like(r, { kind: 'tool_error', message: 'bad token [redacted]' });
  });

  test(`${kind}: output over 1 MiB is output_too_large`, async (t) => {
    t.is((await exec(runner, 'good', 'bigOutput', {})).kind, 'output_too_large');
  });

  test(`${kind}: the time limit ends a slow tool as timeout`, async (t) => {
    // The tool would sleep far longer than any wait for a sandbox on a loaded machine: ending before that is the limit.
    const r = await exec(runner, 'good', 'sleep', { ms: 240_000 }, { timeoutMs: 1500 });
    t.is(r.kind, 'timeout');
    t.true(r.durationMs >= 1500 && r.durationMs < 150_000, `took ${r.durationMs} ms`); // includes waiting for a sandbox
  });

  test(`${kind}: an abort signal stops the execution`, async (t) => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 500);
    t.like(await exec(runner, 'good', 'sleep', { ms: 30_000 }, { signal: controller.signal }), { kind: 'sandbox_error', message: 'aborted' });
  });

  test(`${kind}: several executions at once`, async (t) => {
    const results = await Promise.all(Array.from({ length: 6 }, (_, i) => exec(runner, 'good', 'echo', { text: `n${i}` })));
    t.deepEqual(
      results.map((r) => (r.kind === 'ok' ? r.output : r)),
      Array.from({ length: 6 }, (_, i) => ({ text: `n${i}` })),
    );
  });

  test(`${kind}: executions do not share globals or module state`, async (t) => {
    t.like(await exec(runner, 'good', 'counter', {}), { kind: 'ok', output: 1 });
    t.like(await exec(runner, 'good', 'counter', {}), { kind: 'ok', output: 1 });
    t.like(await exec(runner, 'good', 'moduleCounter', {}), { kind: 'ok', output: { calls: 1, patchedBefore: false } });
    t.like(await exec(runner, 'good', 'moduleCounter', {}), { kind: 'ok', output: { calls: 1, patchedBefore: false } });
  });
}

test('gvisor: the system libraries native programs load are in the sandbox (glibc extras, OpenSSL 3)', async (t) => {
  // @azure/mcp (a .NET server) exited "No usable version of libssl was found"; sharp's libvips needs libresolv.
  const dir = path.join(cache.dir, 'loads-libs@1.0.0');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'loads-libs', version: '1.0.0', main: 'index.js' }));
  fs.writeFileSync(
    path.join(dir, 'index.js'),
    `exports.load = { description: 'dlopens a library by its name', inputSchema: { type: 'object', properties: { lib: { type: 'string' } } },
      execute: async ({ lib }) => { try { process.dlopen({ exports: {} }, lib); return 'loaded'; } catch (e) { return String(e.message); } } };\n`,
  );
  const pkg = { name: 'loads-libs', version: '1.0.0', dir };
  for (const lib of ['libssl.so.3', 'libcrypto.so.3', 'libresolv.so.2']) {
    const r = await runners.gvisor.execute({ pkg, exportName: 'load', params: { lib }, env: {}, timeoutMs: 60_000 });
    if (r.kind !== 'ok') return t.fail(JSON.stringify(r));
    // Loaded: a library that is no Node addon "did not self-register"; a missing one "cannot open shared object file".
    t.notRegex(String(r.output), /cannot open shared object file/, lib);
    t.regex(String(r.output), /self-register|loaded/, lib);
  }
  const r = await runners.gvisor.execute({ pkg, exportName: 'load', params: { lib: 'libnot-there.so.1' }, env: {}, timeoutMs: 60_000 });
  t.regex(String(r.kind === 'ok' ? r.output : ''), /cannot open shared object file/, 'a library the sandbox lacks is told apart');
});

test('gvisor: after a timeout the sandbox is gone', async (t) => {
  const runner = gvisor({ poolSize: 0 });
  t.teardown(() => runner.close());
  const r = await exec(runner, 'good', 'sleep', { ms: 30_000 }, { timeoutMs: 1000 });
  t.is(r.kind, 'timeout');
  t.deepEqual(await runner.listContainers(), []);
});

test('gvisor: runners with state dirs of their own share one rootfs dir (SANDBOX_ROOTFS_DIR): built there once, in no state dir, and both run from it', async (t) => {
  const shared = makeStateDir();
  stateDirs.push(shared);
  const a = gvisor({ poolSize: 0, rootfsDir: shared });
  const b = gvisor({ poolSize: 0, rootfsDir: shared });
  t.teardown(() => Promise.all([a.close(), b.close()]));
  const rootfses = (dir: string) => fs.readdirSync(dir).filter((f) => /^rootfs-[0-9a-f]+$/.test(f));
  t.is(rootfses(shared).length, 1, 'one rootfs in the shared dir');
  for (const dir of stateDirs.slice(-2)) t.deepEqual(rootfses(dir), [], 'none in a state dir');
  for (const runner of [a, b]) t.like(await exec(runner, 'good', 'echo', { text: 'shared' }), { kind: 'ok', output: { text: 'shared' } });
});

test('gvisor: a package outside the cache runs too, with only that package mounted', async (t) => {
  const r = await runners.gvisor.describe({ name: 'good', version: '1.0.0', dir: `${FIXTURES_DIR}/good` }, { timeoutMs: 20_000 });
  t.is(r.kind, 'ok');
});

test('gvisor: a package installed after the pool booted is visible to pooled sandboxes', async (t) => {
  const runner = runners.gvisor as GvisorRunner;
  t.true(await runner.pool.whenFull(120_000)); // boots queue behind the other tests' sandboxes on 2 cores
  const pkg = cache.install('good', 'late-arrival');
  const r = await runner.execute({ pkg, exportName: 'echo', params: { text: 'late' }, env: {}, timeoutMs: 60_000 });
  t.like(r, { kind: 'ok', output: { text: 'late' } });
});

// How fast warm executions are is measured by bench/sandbox.ts and bench/execute.ts, not asserted here.
test('gvisor: the pool refills after each use, and each execution gets a sandbox of its own', async (t) => {
  const runner = gvisor({ poolSize: 1 });
  t.teardown(() => runner.close());
  for (let i = 0; i < 3; i++) {
    // A bound on the condition, not a speed: the first fill also builds the rootfs and snapshot on a loaded machine.
    t.true(await runner.pool.whenFull(180_000), `the pool is full again before execution ${i + 1}`);
    const r = await exec(runner, 'good', 'echo', { text: 'x' });
    t.is(r.kind, 'ok');
  }
});

// Reuse mode. These runners share one state dir (one rootfs and guest snapshot build for all of them).
const reuseStateDir = makeStateDir();
stateDirs.push(reuseStateDir);
/** A runner with sandbox reuse; age and idle limits far beyond a test's length (on a loaded machine a test of a dozen
 * executions outlived a 60 s age, and its last execution met a new sandbox) unless the test is about them. */
function reuseRunner(reuse: Partial<ReuseOptions> = {}, poolSize = 1): GvisorRunner {
  const runner = gvisor({ poolSize, stateDir: reuseStateDir, reuse: { maxExecutions: 100, maxAgeMs: 600_000, idleMs: 600_000, ...reuse } });
  return runner;
}
const inReuse = (runner: SandboxRunner, key: string, exportName: string, params: unknown = {}, more: Partial<ExecuteRequest> = {}) =>
  exec(runner, 'good', exportName, params, { reuseKey: key, ...more });
/** Identifies the sandbox that serves `key` next (the start time of its guest process). */
async function sandboxOf(runner: SandboxRunner, key: string): Promise<number> {
  const r = await inReuse(runner, key, 'sandboxStart');
  if (r.kind !== 'ok') throw new Error(JSON.stringify(r));
  return r.output as number;
}
/** Whether `condition` came to hold within the bound (polled every 20 ms). */
async function until(condition: () => boolean, timeoutMs = 60_000): Promise<boolean> {
  return settle(condition, (held) => held, { ms: timeoutMs, everyMs: 20 });
}

test('gvisor reuse: one sandbox serves a key, each execution in a fresh context with its own env and an empty /tmp', async (t) => {
  const runner = reuseRunner();
  t.teardown(() => runner.close());
  const sandbox = await sandboxOf(runner, 'key-a');
  t.like(await inReuse(runner, 'key-a', 'counter'), { kind: 'ok', output: 1 });
  t.like(await inReuse(runner, 'key-a', 'counter'), { kind: 'ok', output: 1 }); // a global of the last one is gone
  t.like(await inReuse(runner, 'key-a', 'moduleCounter'), { kind: 'ok', output: { calls: 1, patchedBefore: false } });
  t.like(await inReuse(runner, 'key-a', 'moduleCounter'), { kind: 'ok', output: { calls: 1, patchedBefore: false } });
  t.like(await inReuse(runner, 'key-a', 'readEnv', { key: 'A' }, { env: { A: '1' } }), { kind: 'ok', output: { keys: ['A'], value: '1' } });
  t.like(await inReuse(runner, 'key-a', 'readEnv', { key: 'A' }, { env: { B: '2' } }), { kind: 'ok', output: { keys: ['B'], value: null } });
  t.like(await inReuse(runner, 'key-a', 'tmpWrite', { name: 'mark' }), { kind: 'ok' });
  t.like(await inReuse(runner, 'key-a', 'tmpRead', { name: 'mark' }), { kind: 'ok', output: { exists: false } });
  t.like(await exec(runner, 'zod-cjs', 'upper', { word: 'hi' }, { reuseKey: 'key-z' }), { kind: 'ok', output: 'HI' });
  t.like(await exec(runner, 'zod-cjs', 'upper', { word: 'ho' }, { reuseKey: 'key-z' }), { kind: 'ok', output: 'HO' });
  t.like(await exec(runner, 'throwing', 'leak', {}, { reuseKey: 'key-t', env: { TOKEN: 'very-secret-value' } }), {
    kind: 'tool_error',
    message: 'bad token [redacted]',
  });
  t.is(await sandboxOf(runner, 'key-a'), sandbox); // all of key-a's executions ran in one sandbox
  t.is(runner.reuse?.held('key-a'), 1);
});

test("gvisor reuse: a value stashed on Node's shared globals (Buffer, URL, their prototypes) is not seen by the caller's next execution", async (t) => {
  const runner = reuseRunner();
  t.teardown(() => runner.close());
  const sandbox = await sandboxOf(runner, 'key-stash');
  const first = await inReuse(runner, 'key-stash', 'stash', { secret: 'secret-of-call-1' });
  t.like(first, { kind: 'ok', output: { seen: {}, works: true } }, JSON.stringify(first));
  const second = await inReuse(runner, 'key-stash', 'stash', { secret: 'secret-of-call-2' });
  t.like(second, { kind: 'ok', output: { seen: {}, stored: 0, works: true } }, JSON.stringify(second));
  t.is(await sandboxOf(runner, 'key-stash'), sandbox, 'both ran in one sandbox');
});

test('gvisor reuse: keys never share a sandbox', async (t) => {
  const runner = reuseRunner();
  t.teardown(() => runner.close());
  const a = await sandboxOf(runner, 'key-a');
  const b = await sandboxOf(runner, 'key-b');
  t.not(a, b);
  t.is(await sandboxOf(runner, 'key-b'), b);
  t.is(await sandboxOf(runner, 'key-a'), a);
  t.is(runner.reuse?.held('key-a'), 1);
  t.is(runner.reuse?.held('key-b'), 1);
  // One-shot executions (no key) never take a bound sandbox either.
  t.like(await exec(runner, 'good', 'counter', {}), { kind: 'ok', output: 1 });
  t.is(runner.reuse?.idle('key-a'), 1);
});

test('gvisor reuse: a sandbox retires after maxExecutions and after maxAgeMs', async (t) => {
  const runner = reuseRunner({ maxExecutions: 3 });
  t.teardown(() => runner.close());
  const first = await sandboxOf(runner, 'key-a');
  t.is(await sandboxOf(runner, 'key-a'), first);
  t.is(await sandboxOf(runner, 'key-a'), first);
  t.is(runner.reuse?.held('key-a'), 0); // retired after its third execution
  t.not(await sandboxOf(runner, 'key-a'), first);

  // The age counts from the sandbox's creation (in the warm pool, at the runner's start), so on a loaded machine the
  // first execution may end past it: then the sandbox is retired at once, never parked. Whether it must be idle is
  // read from the clock, not assumed: created no earlier than `born`, it cannot have aged out while the clock reads
  // less. Later than that it may be either (it may also have been created well after `born`): nothing is asserted.
  const maxAgeMs = 20_000;
  const born = Date.now();
  const aging = reuseRunner({ maxAgeMs });
  t.teardown(() => aging.close());
  const young = await sandboxOf(aging, 'key-a');
  if (Date.now() - born < maxAgeMs - 1000) t.is(aging.reuse?.idle('key-a'), 1, 'younger than maxAgeMs: parked');
  t.true(await until(() => aging.reuse?.idle('key-a') === 0, 120_000), 'retired once older than maxAgeMs');
  t.not(await sandboxOf(aging, 'key-a'), young);
});

test('gvisor reuse: an idle sandbox goes after idleMs, and over maxIdle idle sandboxes the one idle longest goes', async (t) => {
  // Many users × packages each keeping idle sandboxes would hold the host's memory (scenario runs reuse by default).
  const capped = reuseRunner({ maxIdle: 1 });
  t.teardown(() => capped.close());
  const a = await sandboxOf(capped, 'key-a');
  t.is(capped.reuse?.idle('key-a'), 1);
  await sandboxOf(capped, 'key-b');
  t.is(capped.reuse?.idle('key-b'), 1);
  t.is(capped.reuse?.idle('key-a'), 0, "key-a's sandbox, idle longest, was destroyed for key-b's");
  t.not(await sandboxOf(capped, 'key-a'), a, 'key-a gets a new one');

  // Long enough that a loaded machine's execution cannot outlive it, short enough to wait for; the age limit is far.
  const idling = reuseRunner({ idleMs: 3000, maxAgeMs: 600_000 });
  t.teardown(() => idling.close());
  const first = await sandboxOf(idling, 'key-a');
  t.is(idling.reuse?.idle('key-a'), 1);
  t.true(await until(() => idling.reuse?.idle('key-a') === 0, 60_000), 'destroyed once idle for idleMs');
  t.not(await sandboxOf(idling, 'key-a'), first);
});

test('gvisor reuse: a timeout, a crash, process.exit or a handle left open retires the sandbox; timers are cleared', async (t) => {
  const runner = reuseRunner({}, 2);
  t.teardown(() => runner.close());
  const held = (key: string) => runner.reuse?.held(key);

  const s1 = await sandboxOf(runner, 'k-timeout');
  t.is((await inReuse(runner, 'k-timeout', 'sleep', { ms: 30_000 }, { timeoutMs: 1000 })).kind, 'timeout');
  t.is(held('k-timeout'), 0);
  t.not(await sandboxOf(runner, 'k-timeout'), s1);

  await sandboxOf(runner, 'k-server');
  const left = await inReuse(runner, 'k-server', 'leaveServer');
  t.like(left, { kind: 'ok', output: 'listening' }, JSON.stringify(left));
  t.is(held('k-server'), 0);

  t.like(await exec(runner, 'throwing', 'quit', {}, { reuseKey: 'k-exit' }), { kind: 'tool_error', message: 'the tool called process.exit(3)' });
  t.is(held('k-exit'), 0);

  t.is((await exec(runner, 'hostile', 'heapHog', {}, { reuseKey: 'k-oom', timeoutMs: 60_000 })).kind, 'oom');
  t.is(held('k-oom'), 0);

  // A timer set by one execution never fires in the next: cleared when the execution ends, and the sandbox stays.
  const s2 = await sandboxOf(runner, 'k-timer');
  t.like(await inReuse(runner, 'k-timer', 'leaveTimer', { ms: 200 }), { kind: 'ok' });
  t.like(await inReuse(runner, 'k-timer', 'sleep', { ms: 500 }), { kind: 'ok' });
  t.like(await inReuse(runner, 'k-timer', 'tmpRead', { name: 'late-write' }), { kind: 'ok', output: { exists: false } });
  t.is(await sandboxOf(runner, 'k-timer'), s2);
});

test('gvisor reuse: concurrent executions of one key run in up to maxSandboxesPerKey sandboxes', async (t) => {
  const runner = reuseRunner({ maxSandboxesPerKey: 2 }, 2);
  t.teardown(() => runner.close());
  const results = await Promise.all(Array.from({ length: 8 }, (_, i) => inReuse(runner, 'key-a', 'echo', { text: `n${i}` })));
  t.deepEqual(
    results.map((r) => (r.kind === 'ok' ? r.output : r)),
    Array.from({ length: 8 }, (_, i) => ({ text: `n${i}` })),
  );
  t.true((runner.reuse?.held('key-a') ?? 0) <= 2);
  const sandboxes = new Set(await Promise.all(Array.from({ length: 6 }, () => sandboxOf(runner, 'key-a'))));
  t.true(sandboxes.size >= 1 && sandboxes.size <= 2, `${sandboxes.size} sandboxes`);
});

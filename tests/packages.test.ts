import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FIXTURES_DIR, EXAMPLES_DIR, startService, type Service } from './helpers/service.js';

let svc: Service;
test.before(async () => {
  svc = await startService({ sandbox: 'process' });
});
test.after.always(() => svc?.close());

const fixture = (name: string) => `path:${path.join(FIXTURES_DIR, 'packages', name)}`;

test('importing a folder records the package and its tools, health-checked', async (t) => {
  const res = await svc.importPackage(fixture('missing-export'));
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body.data.package, { name: '@fixtures/missing-export', version: '1.0.0', category: 'automation', kind: 'tools', publisher: null });
  const byName = Object.fromEntries(res.body.data.tools.map((x: { name: string }) => [x.name, x]));
  t.is(byName.present.healthStatus, 'HEALTHY');
  t.is(byName.present.description, 'Doubles a number; used to test that the present export imports healthy.');
  t.is(byName.absent.healthStatus, 'BROKEN', 'a declared export that does not exist is BROKEN');
  const detail = await svc.request('GET', `/api/tools/${byName.absent.id}`);
  t.regex(detail.body.data.healthError, /export 'absent' is missing/);
  const present = await svc.request('GET', '/api/tools/@fixtures/missing-export/present');
  t.deepEqual(present.body.data.inputSchema, { type: 'object', properties: { n: { type: 'number', description: 'A number' } }, required: ['n'] });
  t.truthy(present.body.data.lastHealthCheckAt);
});

test('re-importing the same version is idempotent', async (t) => {
  const first = await svc.importPackage(fixture('tpmjs-multi'));
  const second = await svc.importPackage(fixture('tpmjs-multi'));
  t.is(first.status, 201);
  t.is(second.status, 201);
  t.deepEqual(
    second.body.data.tools.map((x: { id: string }) => x.id),
    first.body.data.tools.map((x: { id: string }) => x.id),
  );
  const count = await svc.api.deps
    .db('tools')
    .join('packages', 'packages.id', 'tools.package_id')
    .where('packages.name', 'fixture-tpmjs-multi')
    .count('* as n')
    .first();
  t.is(Number(count!.n), 1);
  t.is(first.body.data.package.category, 'text-analysis', 'the TPMJS tpmjs field is read');
});

test('a package whose module fails to load imports with its tools BROKEN and the error recorded', async (t) => {
  const res = await svc.importPackage(fixture('load-fails'));
  t.is(res.status, 201);
  const tool = res.body.data.tools[0];
  t.is(tool.healthStatus, 'BROKEN');
  const detail = await svc.request('GET', `/api/tools/${tool.id}`);
  t.regex(detail.body.data.healthError, /this module refuses to load/);
  const pkg = await svc.api.deps.db('packages').where({ name: '@fixtures/load-fails' }).first();
  t.regex(pkg.import_error, /refuses to load/);
});

test('a failing health example makes the tool BROKEN at import', async (t) => {
  const res = await svc.importPackage(fixture('failing-health'));
  t.is(res.status, 201);
  t.is(res.body.data.tools[0].healthStatus, 'BROKEN');
  const checks = await svc.api.deps.db('health_checks').where({ tool_id: res.body.data.tools[0].id });
  t.is(checks.length, 1);
  t.false(checks[0].passed);
  t.regex(checks[0].error, /does not match/);
});

test('an invalid manifest is a 400 that says what is wrong, and imports nothing', async (t) => {
  const res = await svc.importPackage(fixture('bad-manifest'));
  t.is(res.status, 400);
  t.is(res.body.error.code, 'VALIDATION_ERROR');
  const paths = res.body.error.details.map((d: { path: string }) => d.path);
  t.true(paths.includes('package.json.toolshed.category'));
  t.true(paths.includes('package.json.toolshed.tools'));
  t.is(await svc.api.deps.db('packages').where({ name: '@fixtures/bad-manifest' }).first(), undefined);
});

test('bad sources are 400s: relative paths, missing folders, unknown schemes', async (t) => {
  for (const source of ['path:relative/dir', 'git:https://example.com/x', `path:${path.join(FIXTURES_DIR, 'nope')}`, 'npm:Not A Name']) {
    const res = await svc.importPackage(source);
    t.is(res.status, 400, source);
    t.is(res.body.error.code, 'VALIDATION_ERROR');
  }
  const unauth = await svc.request('POST', '/api/admin/packages', { body: { source: fixture('tpmjs-multi') } });
  t.is(unauth.status, 401);
});

test('npm sources: a package from the registry without a tool manifest is a 400 naming the problem', async (t) => {
  const res = await svc.importPackage('npm:is-number@7.0.0');
  t.is(res.status, 400, res.text);
  t.regex(res.body.error.message, /declares no tools/);
  const missing = await svc.importPackage('npm:@toolshed-no-such-scope/no-such-package-xyz@1.0.0');
  t.is(missing.status, 400);
  t.regex(missing.body.error.message, /cannot fetch/);
});

test('the official flag is set by the import and filters the list', async (t) => {
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`, { official: true });
  t.is(res.status, 201, res.text);
  const official = await svc.request('GET', '/api/tools?official=true&limit=100');
  t.true(official.body.data.length >= 1);
  t.true(official.body.data.every((x: { package: { npmPackageName: string } }) => x.package.npmPackageName === res.body.data.package.name));
  const unofficial = await svc.request('GET', '/api/tools?official=false&limit=100');
  t.false(unofficial.body.data.some((x: { package: { npmPackageName: string } }) => x.package.npmPackageName === res.body.data.package.name));
});

test('CLI packages:add imports a folder into the same registry', async (t) => {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  // The package under a name of its own: the first test imports missing-export into the same database at the same
  // time, and an import of a version another import has just recorded answers with its tools as they are then — on a
  // loaded machine the CLI won that race, and the first test read `present` before its health check (UNKNOWN).
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-cli-package-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  await fs.cp(path.join(FIXTURES_DIR, 'packages', 'missing-export'), dir, { recursive: true });
  await fs.chmod(dir, 0o755);
  const manifest = JSON.parse(await fs.readFile(path.join(dir, 'package.json'), 'utf8'));
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ ...manifest, name: '@fixtures/missing-export-cli' }));
  const { stdout } = await promisify(execFile)('node', ['bin/toolshed.js', 'packages:add', `path:${dir}`, '--json'], {
    env: {
      ...process.env,
      DATABASE_URL: svc.databaseUrl,
      DATA_DIR: svc.config.DATA_DIR,
      PACKAGE_CACHE_DIR: svc.config.PACKAGE_CACHE_DIR,
      SANDBOX: svc.config.SANDBOX,
    },
  });
  const out = JSON.parse(stdout.trim().split('\n').pop()!);
  t.deepEqual(out.tools.map((x: { name: string; health_status: string }) => `${x.name}:${x.health_status}`).sort(), ['absent:BROKEN', 'present:HEALTHY']);
  const listed = await svc.request('GET', '/api/tools/@fixtures/missing-export-cli/present');
  t.is(listed.status, 200);
  const bad = await promisify(execFile)('node', ['bin/toolshed.js', 'packages:add', fixture('bad-manifest')], {
    env: { ...process.env, DATABASE_URL: svc.databaseUrl, DATA_DIR: svc.config.DATA_DIR, PACKAGE_CACHE_DIR: svc.config.PACKAGE_CACHE_DIR },
  }).catch((e) => e);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /toolshed\.category/);
});

test('tools named like route words (reviews, rate, search, trending) are found by their slugs; their reviews and ratings work', async (t) => {
  const res = await svc.importPackage(fixture('route-words'));
  t.is(res.status, 201, res.text);
  for (const name of ['reviews', 'rate', 'search', 'trending']) {
    const detail = await svc.request('GET', `/api/tools/@fixtures/route-words/${name}`);
    t.is(detail.status, 200, `${name}: ${detail.text}`);
    t.is(detail.body.data.name, name);
  }
  const user = await svc.createUser();
  const review = await svc.request('POST', '/api/tools/@fixtures/route-words/reviews/reviews', { key: user.key, body: { rating: 4, body: 'Finds itself.' } });
  t.is(review.status, 201, review.text);
  const reviews = await svc.request('GET', '/api/tools/@fixtures/route-words/reviews/reviews');
  t.is(reviews.status, 200);
  t.deepEqual(
    reviews.body.data.map((r: { body: string }) => r.body),
    ['Finds itself.'],
  );
  const rated = await svc.request('POST', '/api/tools/@fixtures/route-words/rate/rate', { key: user.key, body: { rating: 5 } });
  t.deepEqual(rated.body.data, { userRating: 5, averageRating: 5, ratingCount: 1 });
  const missing = await svc.request('GET', '/api/tools/nope/reviews');
  t.is(missing.status, 404);
  t.is(missing.body.error.message, "Tool 'nope/reviews' not found");
  t.is((await svc.request('GET', '/api/tools/@fixtures/nope/reviews')).status, 404);
});

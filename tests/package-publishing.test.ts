/**
 * Anyone can publish (issue 24, item 2): a user imports an npm package with their own key; it records its publisher,
 * who alone may hide it or deprecate its version; a daily quota bounds imports; `path:` stays admin-only.
 */
import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { until } from './helpers/processes.js';

let svc: Service;
let alice: { id: string; username: string; key: string };
let bob: { id: string; username: string; key: string };
test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { PUBLISH_DAILY_QUOTA: '3' } });
  alice = await svc.createUser();
  bob = await svc.createUser();
});
test.after.always(() => svc?.close());

const publish = (key: string | undefined, body: unknown) => svc.request('POST', '/api/packages', { key, body });
const importsOf = async (userId: string) => Number((await svc.api.deps.db('package_imports').where({ requested_by: userId }).count('* as n').first())!.n);

test.serial('a user publishes an npm package with their own key; lists and details show it with its publisher', async (t) => {
  t.is((await publish(undefined, { source: 'npm:@exalabs/ai-sdk@2.1.0' })).status, 401);
  const res = await publish(alice.key, { source: 'npm:@exalabs/ai-sdk@2.1.0', category: 'web-scraping' });
  t.is(res.status, 201, res.text);
  t.like(res.body.data.package, { name: '@exalabs/ai-sdk', version: '2.1.0', category: 'web-scraping' });
  t.deepEqual(
    res.body.data.tools.map((x: { name: string }) => x.name),
    ['webSearch'],
  );
  t.is(res.body.data.discovery.tools[0].how, 'factory');

  const status = await svc.request('GET', `/api/package-imports/${res.body.data.importId}`, { key: alice.key });
  t.like(status.body.data, { status: 'succeeded', package: { name: '@exalabs/ai-sdk', version: '2.1.0' }, error: null });
  t.is(
    (await svc.request('GET', `/api/package-imports/${res.body.data.importId}`, { key: bob.key })).status,
    404,
    "another user's import is not theirs to read",
  );

  const list = await svc.request('GET', '/api/packages?limit=100');
  t.is(list.status, 200);
  t.like(
    list.body.data.find((p: { name: string }) => p.name === '@exalabs/ai-sdk'),
    { publisher: alice.username, hidden: false, version: '2.1.0' },
  );
  const detail = await svc.request('GET', '/api/packages/@exalabs/ai-sdk');
  t.is(detail.status, 200, detail.text);
  t.is(detail.body.data.publisher, alice.username);
  t.is(detail.body.data.versions.length, 1);
  t.like(detail.body.data.versions[0], { version: '2.1.0', deprecated: null });
  t.deepEqual(
    detail.body.data.versions[0].tools.map((x: { name: string }) => x.name),
    ['webSearch'],
  );
  t.truthy(Date.parse(detail.body.data.versions[0].importedAt));

  // Re-importing the same version changes nothing: same tool ids, same import time, no import, no quota.
  const used = await importsOf(alice.id);
  const again = await publish(alice.key, { source: 'npm:@exalabs/ai-sdk@2.1.0' });
  t.is(again.status, 201, again.text);
  t.is(again.body.data.importId, null);
  t.is(await importsOf(alice.id), used);
  t.deepEqual(again.body.data.tools[0].id, res.body.data.tools[0].id);
  const after = await svc.request('GET', '/api/packages/@exalabs/ai-sdk');
  t.is(after.body.data.versions[0].importedAt, detail.body.data.versions[0].importedAt);
  t.is(after.body.data.category, 'web-scraping', 'the category given at the first import stays');

  // Someone else's package is theirs.
  const taken = await publish(bob.key, { source: 'npm:@exalabs/ai-sdk@2.1.0' });
  t.is(taken.status, 403, taken.text);
  t.is(await importsOf(bob.id), 0, 'a refused publish queues nothing');
});

test.serial('the publisher hides the package (it leaves the lists, stays runnable) and deprecates its version; others cannot', async (t) => {
  const detail = await svc.request('GET', '/api/packages/@exalabs/ai-sdk');
  t.is(detail.status, 200, 'published by the previous test');
  t.is((await svc.request('PATCH', '/api/packages/@exalabs/ai-sdk', { key: bob.key, body: { hidden: true } })).status, 403);
  t.is((await svc.request('PATCH', '/api/packages/@exalabs/ai-sdk', { body: { hidden: true } })).status, 401);
  t.is((await svc.request('PATCH', '/api/packages/@exalabs/ai-sdk', { key: alice.key, body: {} })).status, 400);
  // The list and search have served the tool (each process caches list pages and keeps a search index) before it hides.
  const listsIt = async (query: string) => JSON.stringify((await svc.request('GET', `/api/tools?limit=100${query}`)).body.data).includes('@exalabs/ai-sdk');
  t.true(await listsIt(''), 'listed before hiding');
  t.true(await listsIt('&q=webSearch'), 'found by search before hiding');
  const hidden = await svc.request('PATCH', '/api/packages/@exalabs/ai-sdk', { key: alice.key, body: { hidden: true, deprecated: 'Use 3.x' } });
  t.is(hidden.status, 200, hidden.text);
  t.like(hidden.body.data, { hidden: true, deprecated: 'Use 3.x' });
  const list = await svc.request('GET', '/api/packages?limit=100');
  t.false(
    list.body.data.some((p: { name: string }) => p.name === '@exalabs/ai-sdk'),
    'hidden packages leave the list',
  );
  // Every process hears of it (a NOTIFY): the cached list pages and the search index drop the tool.
  await until(async () => !(await listsIt('')), 15_000, 'the hidden package to leave the cached tool list');
  await until(async () => !(await listsIt('&q=webSearch')), 15_000, 'the hidden package to leave search');
  const run = await svc.request('POST', '/api/tools/execute/@exalabs/ai-sdk/webSearch', { body: { params: { query: 'x' } } });
  t.is(run.status, 200, run.text);
  t.regex(run.body.error?.message ?? '', /EXA_API_KEY is required/, 'the tool still runs by reference');
  const shown = await svc.request('GET', '/api/packages/@exalabs/ai-sdk');
  t.is(shown.body.data.versions[0].deprecated, 'Use 3.x');
  t.is((await svc.request('PATCH', '/api/packages/@exalabs/ai-sdk', { key: alice.key, body: { hidden: false } })).body.data.hidden, false);
  await until(async () => (await listsIt('')) && (await listsIt('&q=webSearch')), 15_000, 'the shown package to be listed and found again');
});

test.serial('path: sources stay admin-only; bad sources are 400s; the daily quota is a 429 that queues nothing', async (t) => {
  const carol = await svc.createUser();
  const local = await publish(carol.key, { source: `path:${path.join(FIXTURES_DIR, 'packages', 'tpmjs-current')}` });
  t.is(local.status, 400, local.text);
  t.regex(local.text, /admin/);
  for (const source of ['npm:Not A Name', 'git:https://example.com/x', 'npm:x@!!']) {
    t.is((await publish(carol.key, { source })).status, 400, source);
  }
  t.is((await publish(carol.key, { source: 'npm:is-number@7.0.0', official: true })).status, 400, 'official is for the admin');
  t.is(await importsOf(carol.id), 0);
  // Three imports that fail (an unknown package, a range that matches nothing, a package with no tools) use the quota.
  const unknown = await publish(carol.key, { source: 'npm:@toolshed-no-such-scope/no-such-package-xyz@1.0.0' });
  t.is(unknown.status, 400, unknown.text);
  const noVersion = await publish(carol.key, { source: 'npm:is-number@99.0.0' });
  t.is(noVersion.status, 400, noVersion.text);
  const noTools = await publish(carol.key, { source: 'npm:is-number@7.0.0' });
  t.is(noTools.status, 400, noTools.text);
  t.regex(noTools.body.error.message, /declares no tools/);
  t.is(await importsOf(carol.id), 3);
  const over = await publish(carol.key, { source: 'npm:is-number@7.0.0' });
  t.is(over.status, 429, over.text);
  t.is(over.body.error.code, 'QUOTA_EXCEEDED');
  t.is(await importsOf(carol.id), 3, 'over the quota nothing is queued');
  t.is(await svc.api.deps.db('packages').where({ name: 'is-number' }).first(), undefined, 'nothing half-imported');
});

test.serial('an MCP server publishes like any package: its answer says kind mcp, it records its publisher, others get a 403', async (t) => {
  const dave = await svc.createUser();
  const source = 'npm:@modelcontextprotocol/server-sequential-thinking@2026.8.31';
  const res = await publish(dave.key, { source });
  t.is(res.status, 201, res.text);
  t.like(res.body.data.package, { name: '@modelcontextprotocol/server-sequential-thinking', kind: 'mcp' });
  t.deepEqual(
    res.body.data.tools.map((x: { name: string }) => x.name),
    ['sequentialthinking'],
  );
  const detail = await svc.request('GET', '/api/packages/@modelcontextprotocol/server-sequential-thinking');
  t.is(detail.body.data.publisher, dave.username, 'the publisher is recorded for an MCP server too');
  const other = await publish(alice.key, { source: 'npm:@modelcontextprotocol/server-sequential-thinking@latest' });
  t.is(other.status, 403, other.text);
});

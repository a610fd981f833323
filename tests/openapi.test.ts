/**
 * `GET /api/openapi.json` is a valid OpenAPI 3.1 document (checked by a real OpenAPI validator), describes every
 * route the app mounts, and `/docs` renders it in a real browser (Debian's Chromium, its headless shell, through playwright-core).
 */
import test from 'ava';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { launchBrowser } from './browser/helpers.js';
import { startService, type Service } from './helpers/service.js';
import { createContractChecker, loadContract, readRunContract, writeRunContract } from './helpers/contract.js';
import { SOURCE_ROOT } from './helpers/source-root.js';
import { openApiPath } from '../api/openapi.js';
import { createApp } from '../api/app.js';

let svc: Service;
test.before(async () => {
  svc = await startService({ worker: false });
});
test.after.always(async () => {
  await svc?.close();
});

test('the document is valid OpenAPI 3.1', async (t) => {
  const res = await svc.request('GET', '/api/openapi.json');
  t.is(res.status, 200);
  t.is(res.body.openapi, '3.1.0');
  const result = await new Validator().validate(res.body);
  t.true(result.valid, JSON.stringify(result.errors, null, 1)?.slice(0, 2000));
});

// Serial, so it runs before the others and alone: it compiles the whole document's validators three times and writes
// their module, seconds of synchronous CPU that would hold the service's answers (the /docs page load) meanwhile.
test.serial('the check every test response goes through refuses what drifts from the document, down to a nested field', async (t) => {
  const doc = (await svc.request('GET', '/api/openapi.json')).body;
  const check = createContractChecker(doc);
  const res = await fetch(`${svc.url}/api/admin/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'contract_probe', tier: 'free' }),
  });
  const body = await res.json();
  const type = res.headers.get('content-type');
  t.is(res.status, 201);
  t.is(check('POST', '/api/admin/users', 201, type, body), undefined);
  const wrongType = structuredClone(body);
  wrongType.data.user.username = 42;
  t.regex(check('POST', '/api/admin/users', 201, type, wrongType) ?? '', /body does not match the document: body\/data\/user\/username must be string/);
  const missing = structuredClone(body);
  delete missing.data.apiKey;
  t.regex(check('POST', '/api/admin/users', 201, type, missing) ?? '', /must have required property 'apiKey'/);
  t.regex(check('POST', '/api/admin/users', 299, type, body) ?? '', /status not declared/);
  // A second checker of the same document in this process (another service of the file) checks the same way.
  t.regex(createContractChecker(doc)('POST', '/api/admin/users', 201, type, wrongType) ?? '', /username must be string/);
  // So does the checker `npm test` gives every test file: validators compiled once for the run into a module.
  const dir = path.join(SOURCE_ROOT, '.build', `contract-${process.pid}`);
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  writeRunContract(doc, dir);
  const written = loadContract(dir);
  t.deepEqual(written.doc, doc);
  const precompiled = createContractChecker(written.doc, written.validators);
  t.is(precompiled('POST', '/api/admin/users', 201, type, body), undefined);
  t.is(precompiled('POST', '/api/admin/users', 201, type, wrongType), check('POST', '/api/admin/users', 201, type, wrongType));
  t.is(precompiled('POST', '/api/admin/users', 201, type, missing), check('POST', '/api/admin/users', 201, type, missing));
  t.regex(precompiled('POST', '/api/admin/users', 299, type, body) ?? '', /status not declared/);
});

test('under `npm test`, the document every response is checked against is the one the service serves', async (t) => {
  const run = readRunContract();
  if (!run) return t.pass('not under npm test: each service fetches its own document');
  t.deepEqual(run.doc, (await svc.request('GET', '/api/openapi.json')).body);
});

test('every route the app mounts is in the document, with the same methods', async (t) => {
  const doc = (await svc.request('GET', '/api/openapi.json')).body;
  const dispatch = createApp(svc.api.deps).middleware.find((m) => 'router' in m) as unknown as { router: { stack: { methods: string[]; path: string }[] } };
  const router = dispatch.router;
  // The reference page and its assets are for browsers, not operations of the API.
  const routes = router.stack.filter((l) => !l.path.startsWith('/docs') && !l.path.startsWith('/assets'));
  const missing: string[] = [];
  for (const layer of routes) {
    for (const method of layer.methods.filter((m) => m !== 'HEAD')) {
      if (!doc.paths[openApiPath(layer.path)]?.[method.toLowerCase()]) missing.push(`${method} ${layer.path}`);
    }
  }
  t.deepEqual(missing, [], 'routes without an operation in the document');
});

test('/docs renders the reference in Chromium, from our own process only', async (t) => {
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    const foreign: string[] = [];
    const problems: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(svc.url) && !r.url().startsWith('data:')) foreign.push(r.url());
    });
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    const res = await page.goto(`${svc.url}/docs`);
    t.is(res?.status(), 200);
    t.regex(res?.headers()['content-security-policy'] ?? '', /script-src 'self'/);
    // Swagger UI renders the whole document in the browser: generous on a loaded 2-core machine.
    await page.locator('.opblock').first().waitFor({ timeout: 90_000 });
    t.true((await page.locator('.opblock').count()) >= 1, 'operations are listed');
    const dir = path.resolve('tests/output');
    await fs.mkdir(dir, { recursive: true });
    await page.screenshot({ path: path.join(dir, 'docs.png'), fullPage: false });
    t.deepEqual(foreign, [], 'nothing is loaded from elsewhere');
    t.deepEqual(problems, [], 'no script errors (CSP violations show here)');
  } finally {
    await browser.close();
  }
});

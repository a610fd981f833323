/**
 * Packages that list no tools import as they are (issue 24): AI SDK tool packages (@tavily/ai-sdk, pinned as a
 * devDependency), Agentic packages (@agentic/calculator), TPMJS's current `tpmjs` field, and every export form the
 * sandbox discovers. Their tools run through the real sandbox.
 */
import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { enqueue } from '../core/infra/jobs.js';
import { waitUntil } from './helpers/wait.js';
import { mcpFixturePackage } from './helpers/mcp-fixture.js';
import fs from 'node:fs/promises';
import os from 'node:os';

/** `${NAME}`, as an import names a variable in its options. */
const variable = (name: string) => `\${${name}}`;

const NODE_MODULES = path.resolve(new URL('../node_modules', import.meta.url).pathname);

let svc: Service;
test.before(async () => {
  svc = await startService({ env: { EXECUTION_TIMEOUT_MS: '20000' } });
});
test.after.always(() => svc?.close());

const fixture = (name: string) => `path:${path.join(FIXTURES_DIR, 'packages', name)}`;
const execute = (slug: string, body: unknown) => svc.request('POST', `/api/tools/execute/${slug}`, { body });
const byName = (tools: { name: string }[]) => Object.fromEntries(tools.map((x) => [x.name, x]));

test.serial('@tavily/ai-sdk (from node_modules) imports all four factory tools; a call without a real key is a TOOL_ERROR', async (t) => {
  const res = await svc.importPackage(`path:${path.join(NODE_MODULES, '@tavily/ai-sdk')}`);
  t.is(res.status, 201, res.text);
  t.is(res.body.data.package.name, '@tavily/ai-sdk');
  const names = res.body.data.tools.map((x: { name: string }) => x.name).sort();
  t.deepEqual(names, ['tavilyCrawl', 'tavilyExtract', 'tavilyMap', 'tavilySearch']);
  t.deepEqual(res.body.data.discovery.tools.map((x: { name: string; how: string }) => `${x.name}:${x.how}`).sort(), [
    'tavilyCrawl:factory',
    'tavilyExtract:factory',
    'tavilyMap:factory',
    'tavilySearch:factory',
  ]);
  t.deepEqual(res.body.data.discovery.envRead, ['TAVILY_API_KEY'], 'the key the factories read is found');
  for (const tool of res.body.data.tools) t.not(tool.healthStatus, 'BROKEN', tool.name);
  const search = await svc.request('GET', '/api/tools/@tavily/ai-sdk/tavilySearch');
  t.is(search.body.data.inputSchema.properties.query.type, 'string', 'the zod 4 schema is converted to JSON Schema');
  t.deepEqual(search.body.data.inputSchema.required, ['query']);

  const run = await execute('@tavily/ai-sdk/tavilySearch', { params: { query: 'toolshed' }, env: { TAVILY_API_KEY: 'tvly-not-a-real-key' } });
  t.is(run.status, 200, run.text);
  t.false(run.body.success);
  t.is(run.body.error.code, 'TOOL_ERROR');
  t.true(run.body.error.message.length > 0);
  t.false(run.text.includes('tvly-not-a-real-key'), 'the key is never echoed');
  t.is((await svc.request('GET', '/health')).status, 200, 'the service keeps answering');
});

test.serial('through the real npm: a tool with a prebuilt native addon (sharp and its libvips) runs in the gVisor sandbox', async (t) => {
  // sharp's libvips links glibc's libresolv, which node does not: the sandbox's root filesystem held only node's
  // libraries, and the import failed to load the package ("libresolv.so.2: cannot open shared object file").
  const res = await svc.importPackage(fixture('image-tools'));
  t.is(res.status, 201, res.text);
  const run = await execute('@fixtures/image-tools/makeImage', { params: { width: 3, height: 2 } });
  t.is(run.status, 200, run.text);
  t.true(run.body.success, run.text);
  t.like(run.body.result, { format: 'png', width: 3, height: 2 });
  t.true(run.body.result.pngBytes > 0);
});

test.serial('@agentic/calculator (from node_modules) imports its AIFunction, which computes', async (t) => {
  const res = await svc.importPackage(`path:${path.join(NODE_MODULES, '@agentic/calculator')}`);
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body.data.discovery.tools, [{ name: 'calculator', exportName: 'calculator', how: 'agentic-function' }]);
  const tool = await svc.request('GET', '/api/tools/@agentic/calculator/calculator');
  t.is(tool.body.data.inputSchema.properties.expr.type, 'string');
  const run = await execute('@agentic/calculator/calculator', { params: { expr: '1.5 * (2 + 4)' } });
  t.is(run.status, 200, run.text);
  t.true(run.body.success, run.text);
  t.is(run.body.result, 9);
});

test.serial('through the real npm: path, @exalabs/ai-sdk imports its webSearch factory (zod 3, converted by its AI SDK)', async (t) => {
  const res = await svc.importPackage('npm:@exalabs/ai-sdk@2.1.0');
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body.data.discovery.tools, [{ name: 'webSearch', exportName: 'webSearch', how: 'factory' }]);
  t.deepEqual(res.body.data.discovery.envRead, ['EXA_API_KEY']);
  const tool = await svc.request('GET', '/api/tools/@exalabs/ai-sdk/webSearch');
  t.like(tool.body.data.inputSchema.properties.query, { type: 'string', minLength: 1, maxLength: 500 });
  const run = await execute('@exalabs/ai-sdk/webSearch', { params: { query: 'x' } });
  t.is(run.body.error?.code, 'TOOL_ERROR', 'without a key the tool itself says so');
  t.regex(run.body.error.message, /EXA_API_KEY is required/);
});

test.serial('through the real npm: @agentic/polygon, whose client class has no AI functions, is a 400 that says so', async (t) => {
  const res = await svc.importPackage('npm:@agentic/polygon@7.6.9');
  t.is(res.status, 400, res.text);
  t.regex(res.body.error.message, /PolygonClient: an Agentic client class with no AI functions \(no @aiFunction methods\): it offers no tools/);
  t.notRegex(res.body.error.message, /runtime does not appear to support/, 'not the assertion that blames the runtime');
});

test.serial(
  'through the real npm: @agentic/searxng, whose client insists on a base URL, imports with only `query` required; a call without the URL says so',
  async (t) => {
    // Its constructor throws without SEARXNG_API_BASE_URL: while describing, an address-like variable reads as a placeholder URL.
    const res = await svc.importPackage('npm:@agentic/searxng@7.6.9');
    t.is(res.status, 201, res.text);
    t.deepEqual(res.body.data.discovery.tools, [{ name: 'searxng', exportName: 'SearxngClient#searxng', how: 'agentic-provider' }]);
    t.deepEqual(res.body.data.discovery.envRead, ['SEARXNG_API_BASE_URL']);
    // Its spec is in OpenAI's strict form (every parameter required, the optional ones nullable): only `query` is required.
    const tool = await svc.request('GET', '/api/tools/@agentic/searxng/searxng');
    t.deepEqual(tool.body.data.inputSchema.required, ['query']);
    t.deepEqual(Object.keys(tool.body.data.inputSchema.properties).sort(), ['categories', 'engines', 'language', 'pageno', 'query']);
    const run = await execute('@agentic/searxng/searxng', { params: { query: 'toolshed' } });
    t.is(run.body.error?.code, 'TOOL_ERROR', run.text);
    t.regex(run.body.error.message, /SEARXNG_API_BASE_URL/);
  },
);

test.serial(
  'through the real npm: @agentic/google-custom-search, whose client insists on GOOGLE_CSE_ID (no credential-like name), imports with that variable declared',
  async (t) => {
    // Its constructor throws `missing required "cseId" (defaults to "GOOGLE_CSE_ID")`: a name the failure gives, that the
    // package read, reads as a placeholder too, and the class is made again. It was a 400 "declares no tools".
    const res = await svc.importPackage('npm:@agentic/google-custom-search@7.6.9');
    t.is(res.status, 201, res.text);
    t.deepEqual(res.body.data.discovery.tools, [
      { name: 'google_custom_search', exportName: 'GoogleCustomSearchClient#google_custom_search', how: 'agentic-provider' },
    ]);
    t.deepEqual(res.body.data.discovery.envRead, ['GOOGLE_API_KEY', 'GOOGLE_CSE_ID']);
    const versions = await svc.api.deps.db('package_versions').whereRaw("manifest->>'name' = ?", ['@agentic/google-custom-search']);
    t.like(versions[0].env, [
      { name: 'GOOGLE_API_KEY', required: false },
      { name: 'GOOGLE_CSE_ID', required: false },
    ]);
    const run = await execute('@agentic/google-custom-search/google_custom_search', { params: { query: 'toolshed' }, env: { GOOGLE_API_KEY: 'k-1' } });
    t.is(run.body.error?.code, 'TOOL_ERROR', run.text);
    t.regex(run.body.error.message, /missing required "cseId" \(defaults to "GOOGLE_CSE_ID"\)/, 'a call without it says what it misses');
  },
);

test.serial("TPMJS's current field: tools[].name and legacy exportName, a TPMJS category mapped onto ours, env defaults", async (t) => {
  const res = await svc.importPackage(fixture('tpmjs-current'));
  t.is(res.status, 201, res.text);
  t.is(res.body.data.package.category, 'web-scraping', "TPMJS's 'research' maps onto web-scraping");
  t.is(res.body.data.discovery, null, 'the tools are listed, not discovered');
  const tools = byName(res.body.data.tools);
  t.deepEqual(Object.keys(tools).sort(), ['countWords', 'lookupNote']);
  t.is((tools.lookupNote as { description?: string }).description, 'Looks up a note by its title.');
  const noted = await execute('@fixtures/tpmjs-current/lookupNote', { params: { title: 'plan' } });
  t.true(noted.body.success, noted.text);
  t.deepEqual(noted.body.result, { title: 'plan', region: 'EU-WEST' }, 'a required variable with a default runs without being sent');
  const own = await execute('@fixtures/tpmjs-current/lookupNote', { params: { title: 'plan' }, env: { NOTES_REGION: 'us-east' } });
  t.deepEqual(own.body.result, { title: 'plan', region: 'US-EAST' });
  const counted = await execute('@fixtures/tpmjs-current/countWords', { params: { text: 'one two three' } });
  t.deepEqual(counted.body.result, { words: 3 });
});

test.serial('a package without a manifest: every export form is discovered and says how; factories and classes run with the caller env', async (t) => {
  const res = await svc.importPackage(fixture('discover-mixed'));
  t.is(res.status, 201, res.text);
  t.is(res.body.data.package.category, 'api-integration');
  const how = Object.fromEntries(
    res.body.data.discovery.tools.map((x: { name: string; how: string; exportName: string }) => [x.name, `${x.how} ${x.exportName}`]),
  );
  t.deepEqual(how, {
    shout: 'ai-sdk-tool shout',
    forecast: 'factory-record weatherTools#forecast',
    alerts: 'factory-record weatherTools#alerts',
    multiply_numbers: 'agentic-function multiply',
    add_numbers: 'agentic-provider MathClient#add_numbers',
    find_papers: 'agentic-provider PaperClient#find_papers',
    reverse: 'record textTools#reverse',
    scrape: 'ai-sdk-tool scrape',
  });
  t.deepEqual(res.body.data.discovery.envRead, ['MATH_API_KEY', 'WEATHER_API_KEY']);
  // The key `scrape` reads only when it runs is named in the code: declared (optional), so that callers see it.
  const scrapeId = res.body.data.tools.find((x: { name: string }) => x.name === 'scrape').id;
  const detail = await svc.request('GET', `/api/tools/${scrapeId}`);
  t.deepEqual(
    detail.body.data.package.envVars.map((v: { name: string; required: boolean }) => [v.name, v.required]),
    [
      ['MATH_API_KEY', false],
      ['WEATHER_API_KEY', false],
      ['SCRAPER_API_KEY', false],
    ],
  );
  t.deepEqual(res.body.data.discovery.notes, ['neverReturns: neverReturns() did not return within 5 s']);
  for (const tool of res.body.data.tools) t.not(tool.healthStatus, 'BROKEN', tool.name);

  const forecast = await execute('@fixtures/discover-mixed/forecast', { params: { city: 'Oslo' }, env: { WEATHER_API_KEY: 'abcd' } });
  t.deepEqual(forecast.body.result, { city: 'Oslo', sky: 'clear', keyLength: 4 }, 'the factory ran with the real key');
  const keyless = await execute('@fixtures/discover-mixed/forecast', { params: { city: 'Oslo' } });
  t.is(keyless.body.error?.code, 'TOOL_ERROR', 'without the key the factory refuses, as a tool error');
  t.regex(keyless.body.error.message, /WEATHER_API_KEY is required/);
  const added = await execute('@fixtures/discover-mixed/add_numbers', { params: { a: 2, b: 3 }, env: { MATH_API_KEY: 'xyz' } });
  t.deepEqual(added.body.result, { sum: 5, keyLength: 3 });
  t.is((await execute('@fixtures/discover-mixed/multiply_numbers', { params: { a: 6, b: 7 } })).body.result, 42);
  t.is((await execute('@fixtures/discover-mixed/reverse', { params: { text: 'abc' } })).body.result, 'cba');
  const papers = await execute('@fixtures/discover-mixed/find_papers', { params: { topic: 'gVisor' } });
  t.deepEqual(papers.body.result, { topic: 'gVisor', from: 'https://papers.example' }, 'a client that needs new C({}) runs too');
  t.is((await execute('@fixtures/discover-mixed/shout', { params: { text: 'hi' } })).body.result, 'HI');
  const scraped = await execute('@fixtures/discover-mixed/scrape', { params: { url: 'https://a.example' }, env: { SCRAPER_API_KEY: 'k3y' } });
  t.deepEqual(scraped.body.result, { url: 'https://a.example', keyLength: 3 }, 'a function carrying a tool runs as that tool');
  const invalid = await execute('@fixtures/discover-mixed/add_numbers', { params: { a: 'two' }, env: { MATH_API_KEY: 'xyz' } });
  t.is(invalid.status, 400, 'params are checked against the discovered schema');
});

test.serial(
  'a toolkit configured by arguments in a subpath export: a 400 names what takes arguments; with `options` its tools import, each call makes it with the caller’s key',
  async (t) => {
    // As @paypal/agent-toolkit/ai-sdk (`new PayPalAgentToolkit({ clientId, clientSecret, configuration }).getTools()`) and
    // @supermemory/tools/ai-sdk (`searchMemoriesTool(apiKey)`): nothing was found, and the 400 did not say why.
    const admin = { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` };
    const importWith = (extra: Record<string, unknown>) =>
      svc.request('POST', '/api/admin/packages', { headers: admin, body: { source: fixture('discover-toolkit'), ...extra } });
    const bare = await importWith({});
    t.is(bare.status, 400, bare.text);
    t.regex(bare.body.error.message, /\.\/ai-sdk: exports made with arguments were not called: weatherTool\(1 argument\), new AcmeToolkit\(…\)/);
    t.regex(bare.body.error.message, /`options`/);

    const refused: [Record<string, unknown>, string][] = [
      [{ options: 'key' }, 'options'],
      [{ options: [] }, 'options'],
      [{ entry: '../outside' }, 'entry'],
      [{ entry: 'ai-sdk' }, 'entry'],
      [{ options: [{ deep: [[[[[[[[['x']]]]]]]]] }] }, 'options'],
      [{ options: [Array.from({ length: 21 }, (_, i) => variable(`KEY_${i}`)).join(' ')] }, 'options'],
    ];
    for (const [extra, path] of refused) {
      const res = await importWith(extra);
      t.is(res.status, 400, `${JSON.stringify(extra)}: ${res.text}`);
      t.true(
        res.body.error.details.some((d: { path: string }) => d.path.endsWith(path)),
        `${JSON.stringify(extra)} names ${path}: ${res.text}`,
      );
    }
    const noSuchEntry = await importWith({ entry: './nope', options: ['x'] });
    t.is(noSuchEntry.status, 400, noSuchEntry.text);
    t.regex(noSuchEntry.body.error.message, /"exports" has no "\.\/nope" entry/);
    t.is(await svc.api.deps.db('packages').where({ name: '@fixtures/discover-toolkit' }).first(), undefined, 'nothing was recorded');

    const options = [{ apiKey: variable('ACME_API_KEY'), configuration: { actions: { weather: true, alerts: true } } }];
    const res = await importWith({ options });
    t.is(res.status, 201, res.text);
    t.deepEqual(
      res.body.data.discovery.tools.map((x: { name: string; how: string; exportName: string }) => [x.name, x.how, JSON.parse(x.exportName).entry]),
      [
        ['get_weather', 'toolkit', './ai-sdk'],
        ['send_alert', 'toolkit', './ai-sdk'],
        ['get_forecast', 'toolkit', './ai-sdk'],
      ],
      'the subpath was found; weatherTool(…) makes the same tool as the toolkit, which names it; a toolkit’s allTools()',
    );
    for (const tool of res.body.data.tools) t.deepEqual(tool.package.env, ['ACME_API_KEY'], 'the variable the options name is required');

    const run = await execute('@fixtures/discover-toolkit/get_weather', { params: { city: 'Oslo' }, env: { ACME_API_KEY: 'caller-key-1' } });
    t.deepEqual(run.body.result, { city: 'Oslo', sky: 'clear', keyLength: 12 }, run.text);
    const other = await execute('@fixtures/discover-toolkit/send_alert', { params: { text: 'storm' }, env: { ACME_API_KEY: 'k2' } });
    t.deepEqual(other.body.result, { sent: 'storm', keyLength: 2 }, 'each call makes the toolkit with its own key');
    const forecast = await execute('@fixtures/discover-toolkit/get_forecast', { params: { city: 'Oslo' }, env: { ACME_API_KEY: 'k-3' } });
    t.deepEqual(forecast.body.result, { city: 'Oslo', tomorrow: 'rain', keyLength: 3 }, forecast.text);
    const keyless = await execute('@fixtures/discover-toolkit/get_weather', { params: { city: 'Oslo' } });
    t.is(keyless.status, 422, keyless.text);
    t.is(keyless.body.error.code, 'TOOL_UNAVAILABLE');

    // A health check describes the tool again from its locator, with a placeholder key.
    const id = res.body.data.tools[0].id;
    const before = Number((await svc.api.deps.db('health_checks').where({ tool_id: id }).count('* as n').first())!.n);
    await enqueue(svc.api.deps.db, 'health_check', { toolId: id });
    const rows = await waitUntil(
      () => svc.api.deps.db('health_checks').where({ tool_id: id }).orderBy('id', 'desc'),
      (r) => r.length > before,
      'the health check to be written',
    );
    t.true(rows[0].passed, String(rows[0].error));

    const listed = await svc.request('POST', '/api/admin/packages', {
      headers: admin,
      body: { source: `path:${path.join(FIXTURES_DIR, 'packages', 'mcp-tools')}`, options: ['x'] },
    });
    t.is(listed.status, 400, listed.text);
    t.regex(listed.body.error.message, /applies to packages whose tools are discovered; this one lists its tools/);
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'toolkit-mcp-'));
    const onServer = await svc.request('POST', '/api/admin/packages', {
      headers: admin,
      body: { source: `path:${await mcpFixturePackage(root, 'good')}`, options: ['x'] },
    });
    t.is(onServer.status, 400, onServer.text);
    t.regex(onServer.body.error.message, /applies to packages of JS tools; this is an MCP server/);
    await fs.rm(root, { recursive: true, force: true });
  },
);

test.serial('bad packages without a manifest fail with the reason and leave nothing behind', async (t) => {
  const cases: [string, RegExp][] = [
    ['discover-throws', /refuses to load without its config/],
    ['discover-many', /5000 exports; at most 1000/],
  ];
  for (const [name, reason] of cases) {
    const res = await svc.importPackage(fixture(name));
    t.is(res.status, 400, `${name}: ${res.text}`);
    t.regex(res.body.error.message, reason);
    t.is(
      await svc.api.deps
        .db('packages')
        .where({ name: `@fixtures/${name}` })
        .first(),
      undefined,
      name,
    );
  }
  t.is((await svc.request('GET', '/health')).status, 200);
});

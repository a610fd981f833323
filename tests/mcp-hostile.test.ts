/**
 * MCP servers that misbehave, each a mode of one hand-written stdio server (fixtures/mcp-servers/server.cjs) copied
 * into a package of its own and imported with `args: [mode]`: every one ends with a clear error, the limits of
 * sandbox/mcp-client.ts hold, and the API and worker keep answering. Also the import rules a user meets: a server
 * that exits without its key at start, placeholders for declared variables, serverJson, paging, isError. A server that
 * never answers is tests/mcp-silent.test.ts (its own service, with a short describe limit).
 */
import test from 'ava';
import { serverSubcommand, undeclaredVariables } from '../worker/import/mcp-rules/index.js';
import { addressesRead, variablesNamed } from '../worker/env-named.js';
import { NETWORK_FAILURE } from '../worker/outcomes.js';
import { isMcpServer, planMcpServer } from '../core/packages/mcp-server.js';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { enqueue } from '../core/infra/jobs.js';
import { startService, type Service } from './helpers/service.js';
import { until } from './helpers/processes.js';
import { waitUntil } from './helpers/wait.js';
import { mcpFixturePackage } from './helpers/mcp-fixture.js';

let svc: Service;
let root: string;

test.before(async () => {
  svc = await startService({ env: { EXECUTION_TIMEOUT_MS: '20000' } });
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-fixtures-'));
});
test.after.always(async () => {
  await svc?.close();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

const fixturePackage = (mode: string) => mcpFixturePackage(root, mode);
/** An argument naming a declared variable, as an import writes it: `${NAME}`. */
const variable = (name: string) => `\${${name}}`;

const importMode = async (mode: string, extra: Record<string, unknown> = {}) =>
  svc.request('POST', '/api/admin/packages', {
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    body: { source: `path:${await fixturePackage(mode)}`, args: [mode], ...extra },
  });
const execute = (mode: string, tool: string, params: unknown = {}, env?: Record<string, string>) =>
  svc.request('POST', `/api/tools/execute/@fixtures/mcp-${mode}/${tool}`, { body: { params, ...(env ? { env } : {}) } });

/**
 * The `startup` record of the last import of a fixture mode, as its package_imports row keeps it (GET
 * /api/package-imports/:id shows it to the requester; these imports are the admin's).
 */
async function startupOf(mode: string) {
  const row = await svc.api.deps.db('package_imports').whereLike('source', `%/${mode}`).orderBy('created_at', 'desc').first();
  return { refusal: null, ...row.startup };
}

async function stillServing(t: { is: (a: unknown, b: unknown, m?: string) => void }) {
  const health = await svc.request('GET', '/health');
  t.is(health.status, 200, 'the API keeps answering');
}

test('a well-behaved server: title, annotations and output schema are kept; structuredContent is the result; isError is TOOL_ERROR', async (t) => {
  const res = await importMode('good');
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body.data.tools.map((x: { name: string }) => x.name).sort(), ['fail', 'misbehave', 'shout']);
  const shout = await svc.request('GET', '/api/tools/@fixtures/mcp-good/shout');
  t.like(shout.body.data.outputSchema, { type: 'object' });
  const ok = await execute('good', 'shout', { text: 'quiet' });
  t.is(ok.status, 200, ok.text);
  t.deepEqual(ok.body.result, { text: 'QUIET' });
  const failed = await execute('good', 'fail', { text: 'this' });
  t.is(failed.body.error.code, 'TOOL_ERROR');
  t.is(failed.body.error.message, 'cannot do that with this');
});

test('a server with its MCP code bundled into its bin (no MCP library among its dependencies) imports as one, without `kind` or `args`', async (t) => {
  // One bundled file, no dependencies listed: its bin carries the protocol's method names.
  const res = await svc.request('POST', '/api/admin/packages', {
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    body: { source: `path:${await fixturePackage('bundled')}` },
  });
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body.data.tools.map((x: { name: string }) => x.name).sort(), ['fail', 'misbehave', 'shout']);
  const ok = await execute('bundled', 'shout', { text: 'found' });
  t.deepEqual(ok.body.result, { text: 'FOUND' }, ok.text);
});

test('tools/list is followed page by page (nextCursor)', async (t) => {
  const res = await importMode('paged');
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body.data.tools.map((x: { name: string }) => x.name).sort(), ['first', 'second', 'third']);
});

test('a server that exits at start naming the key it wants: the key is declared for it (required, secret) and it imports', async (t) => {
  // As airtable-mcp-server: "No API key provided. Set it in the `AIRTABLE_API_KEY` environment variable". It was a 400
  // until the importer declared the variable itself.
  const res = await importMode('needs-key');
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body.data.tools[0].package.env, ['FIXTURE_API_KEY']);
  const versions = await svc.api.deps.db('package_versions').where({ version: '1.0.0' }).whereRaw("manifest->>'name' = ?", ['@fixtures/mcp-needs-key']);
  t.like(versions[0].env, [{ name: 'FIXTURE_API_KEY', required: true, secret: true }]);
  const run = await execute('needs-key', 'shout', { text: 'with key' }, { FIXTURE_API_KEY: 'k-123' });
  t.is(run.status, 200, run.text);
  t.deepEqual(run.body.result, { text: 'WITH KEY' });
  t.false(run.text.includes('k-123'));
  const missing = await execute('needs-key', 'shout', { text: 'no key' });
  t.is(missing.status, 422, 'a required variable the caller does not pass is refused before the sandbox');
});

test("a user's import status says which start-up rules fired and why: the real airtable-mcp-server, which exits without its key", async (t) => {
  // Its transcript is tests/fixtures/mcp-transcripts/real-airtable-mcp-server.json (named-variables, then it lists).
  const user = await svc.createUser();
  const res = await svc.request('POST', '/api/packages', { key: user.key, body: { source: 'npm:airtable-mcp-server@1.14.0' } });
  // 201 when it finished within the request's wait, else 202 (a loaded machine, npm's registry): the status then.
  t.true(res.status === 201 || res.status === 202, res.text);
  const status = await waitUntil(
    () => svc.request('GET', `/api/package-imports/${res.body.data.importId}`, { key: user.key }),
    (r) => r.status !== 200 || !['queued', 'running'].includes(r.body.data.status),
    'the import to end',
  );
  t.is(status.status, 200, status.text);
  t.is(status.body.data.status, 'succeeded', status.text);
  const { startup } = status.body.data;
  t.deepEqual(
    startup.rules.map((r: { rule: string }) => r.rule),
    ['named-variables'],
  );
  t.regex(startup.rules[0].why, /AIRTABLE_API_KEY/);
  t.true(startup.starts >= 2 && startup.starts <= 6, String(startup.starts));
  t.is(startup.refusal, null);
});

test('a server that checks its variables one at a time: each named in turn is declared, and it imports', async (t) => {
  const res = await importMode('needs-two');
  t.is(res.status, 201, res.text);
  const versions = await svc.api.deps.db('package_versions').whereRaw("manifest->>'name' = ?", ['@fixtures/mcp-needs-two']);
  t.like(versions[0].env, [
    { name: 'FIXTURE_API_KEY', required: true, secret: true },
    { name: 'FIXTURE_WORKSPACE', required: true },
  ]);
  t.is(versions[0].env[1].secret, undefined, 'a workspace name is no secret');
  const run = await execute('needs-two', 'shout', { text: 'both' }, { FIXTURE_API_KEY: 'k-1', FIXTURE_WORKSPACE: 'w' });
  t.deepEqual(run.body.result, { text: 'BOTH' }, run.text);
  // The import's status says which start-up rules fired and why, and how many starts it took.
  const startup = await startupOf('needs-two');
  t.is(startup.starts, 3);
  t.deepEqual(
    startup.rules.map((r: { rule: string }) => r.rule),
    ['named-variables', 'named-variables'],
  );
  t.regex(startup.rules[1].why, /FIXTURE_WORKSPACE/);
  t.is(startup.refusal, null);
});

test('a server that wants an address without naming its variable is given those its code reads, and a caller’s address reaches it', async (t) => {
  // As @tiberriver256/mcp-server-azure-devops ("Organization URL is required"; its code reads AZURE_DEVOPS_ORG_URL):
  // refused before, though the server starts with any address.
  const res = await importMode('needs-address');
  t.is(res.status, 201, res.text);
  const versions = await svc.api.deps.db('package_versions').whereRaw("manifest->>'name' = ?", ['@fixtures/mcp-needs-address']);
  t.like(
    versions[0].env.find((v: { name: string }) => v.name === 'FIXTURE_ORG_URL'),
    { required: false, description: 'read by its code: the server would not start without an address' },
  );
  const run = await execute('needs-address', 'shout', { text: 'org' }, { FIXTURE_ORG_URL: 'https://dev.example.com/acme' });
  t.deepEqual(run.body.result, { text: 'ORG' }, run.text);
  const without = await execute('needs-address', 'shout', { text: 'org' });
  t.regex(without.text, /Organization URL is required/, 'a call without it meets the server’s own words');
});

test('after either of two ways, what a server names next belongs to one way: optional, and a call the other way is not refused', async (t) => {
  // As @ivotoby/contentful-management-mcp-server: given placeholders for its token and its private key, it wanted
  // APP_ID "when using PRIVATE_KEY" (no word of the environment), and the import stopped there.
  const res = await importMode('either-way');
  t.is(res.status, 201, res.text);
  const versions = await svc.api.deps.db('package_versions').whereRaw("manifest->>'name' = ?", ['@fixtures/mcp-either-way']);
  t.deepEqual(
    versions[0].env
      .filter((v: { description?: string }) => v.description === 'named by the server when it would not start')
      .map((v: { name: string; required: boolean }) => [v.name, v.required]),
    [
      ['FIXTURE_TOKEN', false],
      ['FIXTURE_PRIVATE_KEY', false],
      ['FIXTURE_APP_ID', false],
      ['FIXTURE_SPACE_ID', false],
    ],
  );
  const byToken = await execute('either-way', 'shout', { text: 'token way' }, { FIXTURE_TOKEN: 't-1' });
  t.deepEqual(byToken.body.result, { text: 'TOKEN WAY' }, byToken.text);
  const byKey = await execute('either-way', 'shout', { text: 'key way' }, { FIXTURE_PRIVATE_KEY: 'k', FIXTURE_APP_ID: 'a' });
  t.regex(byKey.text, /FIXTURE_SPACE_ID is required when using FIXTURE_PRIVATE_KEY/, 'the other way half given: the server’s own words');
  t.like(undeclaredVariables('APP_ID is required when using PRIVATE_KEY', []), [{ name: 'APP_ID', required: true }], 'said to be wanted, alone: required');
  t.like(undeclaredVariables('SPACE_ID must be set', []), [{ name: 'SPACE_ID', required: true }]);
  t.deepEqual(undeclaredVariables('Error: cannot start: DEBUG_MODE is set to verbose', []), [], 'a name said to be set is not wanted');
});

test('a package with a bin and a server’s name is an MCP server when its keywords or description say MCP', (t) => {
  const launcher = "require('node:child_process').spawn(binary, process.argv.slice(2), { stdio: 'inherit' })";
  const pkg = (o: Record<string, unknown>) => ({ name: '@digitalocean/mcp', version: '1.0.0', bin: './index.js', ...o });
  t.true(isMcpServer(pkg({ description: 'DigitalOcean MCP Implementation,' }), {}, launcher));
  t.true(isMcpServer(pkg({ keywords: ['digitalocean', 'mcp'] }), {}, launcher));
  t.true(isMcpServer(pkg({ description: 'A Model Context Protocol server' }), {}, launcher));
  t.false(isMcpServer(pkg({ description: 'Command-line helpers for DOMCPX' }), {}, launcher), 'MCP as a word');
  t.false(isMcpServer(pkg({ name: 'do-tools', description: 'An MCP server' }), {}, launcher), 'not a server’s name');
  t.false(isMcpServer(pkg({ description: 'DigitalOcean helpers' }), {}, launcher), 'nothing says MCP');
});

test('a server whose bin only starts a program it ships (its keywords say MCP) imports as an MCP server and runs', async (t) => {
  // As @digitalocean/mcp (a Go server for each platform): taken for a package of JS tools, "declares no tools".
  const dir = await mcpFixturePackage(root, 'good', { launched: true });
  const res = await svc.request('POST', '/api/admin/packages', {
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    body: { source: `path:${dir}` },
  });
  t.is(res.status, 201, res.text);
  t.is(res.body.data.package.kind, 'mcp');
  const run = await execute('good', 'shout', { text: 'launched' });
  t.deepEqual(run.body.result, { text: 'LAUNCHED' }, run.text);
});

test('an argument may name a variable (FIXTURE_TOKEN after `--token`): it is declared, and each call starts the server with the caller’s value there', async (t) => {
  // As @mondaydotcomorg/monday-api-mcp, which takes its token only as `--token`: before, a token had to be written into
  // the recorded arguments, shared by every caller.
  const res = await importMode('arg-token', { args: ['arg-token', '--token', variable('FIXTURE_TOKEN')] });
  t.is(res.status, 201, res.text);
  const versions = await svc.api.deps.db('package_versions').whereRaw("manifest->>'name' = ?", ['@fixtures/mcp-arg-token']);
  t.deepEqual(versions[0].manifest.mcp.args, ['arg-token', '--token', variable('FIXTURE_TOKEN')], 'the template is recorded, never a value');
  t.like(versions[0].env, [{ name: 'FIXTURE_TOKEN', required: true, secret: true }]);
  const mine = await execute('arg-token', 'whoami', {}, { FIXTURE_TOKEN: 'tok-123' });
  t.is(mine.body.result.token, '321-kot', mine.text);
  const theirs = await execute('arg-token', 'whoami', {}, { FIXTURE_TOKEN: 'other-9' });
  t.is(theirs.body.result.token, '9-rehto', 'another caller’s server has its own value');
  const none = await execute('arg-token', 'whoami', {});
  t.is(none.status, 422, 'a call without it is refused before the sandbox');
});

test("a key the server's code reads only when a tool runs is declared from its code, so the caller's value reaches it", async (t) => {
  // As @modelcontextprotocol/server-github (GITHUB_PERSONAL_ACCESS_TOKEN): undeclared, a server gets none of a
  // caller's variables (only declared ones reach it), so the token never reached it.
  const res = await importMode('instance');
  t.is(res.status, 201, res.text);
  const versions = await svc.api.deps.db('package_versions').whereRaw("manifest->>'name' = ?", ['@fixtures/mcp-instance']);
  t.like(
    versions[0].env.find((v: { name: string }) => v.name === 'FIXTURE_LAZY_TOKEN'),
    { required: false, secret: true, description: "Named in the package's code (process.env); read when a tool runs" },
  );
  const run = await execute('instance', 'whoami', {}, { FIXTURE_LAZY_TOKEN: 'lazy-42' });
  t.is(run.body.result.lazy, '24-yzal', run.text);
  // A setting of the same service its code reads (as @tiberriver256/mcp-server-azure-devops's AZURE_DEVOPS_AUTH_METHOD
  // beside AZURE_DEVOPS_PAT) is declared too, not secret, and reaches it.
  t.like(
    versions[0].env.find((v: { name: string }) => v.name === 'FIXTURE_VAR'),
    { required: false, description: "Named in the package's code (process.env); read when a tool runs" },
  );
  t.is(versions[0].env.find((v: { name: string }) => v.name === 'FIXTURE_VAR').secret, undefined);
  const set = await execute('instance', 'whoami', {}, { FIXTURE_VAR: 'pat' });
  t.is(set.body.result.var, 'tap', set.text);
});

test('what a package’s code reads: credentials (a personal access token too) first, then settings of the same service; addresses', async (t) => {
  // As @tiberriver256/mcp-server-azure-devops's code, and a dependency's file that must not be read.
  const dir = await fs.mkdtemp(path.join(root, 'named-'));
  await fs.mkdir(path.join(dir, 'dist'));
  await fs.writeFile(
    path.join(dir, 'dist', 'index.js'),
    'const m = process.env.AZURE_DEVOPS_AUTH_METHOD; if (process.env.NODE_ENV) {}\n' +
      'const c = { url: process.env.AZURE_DEVOPS_ORG_URL, pat: process.env["AZURE_DEVOPS_PAT"], p: process.env.AZURE_DEVOPS_DEFAULT_PROJECT };\n' +
      'const o = process.env.OTHER_SERVICE_REGION;',
  );
  await fs.mkdir(path.join(dir, 'node_modules', 'dep'), { recursive: true });
  await fs.writeFile(path.join(dir, 'node_modules', 'dep', 'index.js'), 'process.env.AZURE_DEVOPS_FROM_A_DEPENDENCY');
  t.deepEqual(await variablesNamed(dir), [
    { name: 'AZURE_DEVOPS_PAT', secret: true },
    { name: 'AZURE_DEVOPS_AUTH_METHOD', secret: false },
    { name: 'AZURE_DEVOPS_ORG_URL', secret: false },
    { name: 'AZURE_DEVOPS_DEFAULT_PROJECT', secret: false },
  ]);
  t.deepEqual(
    (await variablesNamed(dir, ['AZURE_DEVOPS_ORG_URL', 'OTHER_SERVICE_KEY'])).map((v) => v.name),
    ['AZURE_DEVOPS_PAT', 'AZURE_DEVOPS_AUTH_METHOD', 'AZURE_DEVOPS_DEFAULT_PROJECT', 'OTHER_SERVICE_REGION'],
    'a known variable is left out, and its service’s settings are in',
  );
  t.deepEqual(await addressesRead(dir), ['AZURE_DEVOPS_ORG_URL']);
});

test("serverJson: a secret or required argument without a value is the caller's to give: a variable in its place", (t) => {
  const planned = planMcpServer(
    { name: 'x', version: '1.0.0', bin: 'server.js' },
    {
      serverJson: {
        packages: [
          {
            registryType: 'npm',
            identifier: 'x',
            packageArguments: [
              { type: 'named', name: '--api-key', isSecret: true, isRequired: true },
              { type: 'named', name: '--workspace', valueHint: 'workspace_id', isRequired: true },
              { type: 'named', name: '--region', default: 'eu' },
            ],
          },
        ],
      },
    },
  );
  if (!('plan' in planned)) return t.fail(JSON.stringify(planned));
  t.deepEqual(planned.plan.args, ['--api-key', variable('API_KEY'), '--workspace', variable('WORKSPACE_ID'), '--region', 'eu']);
  t.deepEqual(
    planned.plan.env.map((v) => [v.name, v.required, v.secret]),
    [
      ['API_KEY', true, true],
      ['WORKSPACE_ID', true, false],
    ],
  );
});

test('arguments naming more variables than a server may declare are refused, not declared by the hundred', (t) => {
  // 50 arguments of up to 1,000 characters could name some 12,000 variables, every one of them required of each caller.
  const many = Array.from({ length: 50 }, (_, i) => Array.from({ length: 3 }, (_, j) => variable(`V${i}_${j}`)).join(','));
  const refused = planMcpServer({ name: 'x', version: '1.0.0', bin: 'server.js' }, { args: many });
  t.deepEqual(refused, { errors: [{ path: 'args', message: 'the arguments and env declare 150 variables; at most 100' }] });
  const fits = planMcpServer({ name: 'x', version: '1.0.0', bin: 'server.js' }, { args: many.slice(0, 33) });
  t.true('plan' in fits && fits.plan.env.length === 99);
});

test('the variables a start-up error names: one is required, several together too; several with an "or" among them (either may do) are optional; declared ones are left', (t) => {
  // As @modelcontextprotocol/server-slack: both were optional, so a call without them ran and failed in the server.
  t.deepEqual(
    undeclaredVariables('Please set SLACK_BOT_TOKEN and SLACK_TEAM_ID environment variables', []).map((v) => [v.name, v.required, v.secret ?? false]),
    [
      ['SLACK_BOT_TOKEN', true, true],
      ['SLACK_TEAM_ID', true, false],
    ],
  );
  // As @translated/lara-mcp: not a word of the environment; the key id is named beside the key's secret.
  t.deepEqual(
    undeclaredVariables('Error: LARA_ACCESS_KEY_ID and LARA_ACCESS_KEY_SECRET must be set when using stdio server', []).map((v) => [
      v.name,
      v.required,
      v.secret ?? false,
    ]),
    [
      ['LARA_ACCESS_KEY_ID', true, true],
      ['LARA_ACCESS_KEY_SECRET', true, true],
    ],
  );
  // As @brave/brave-search-mcp-server: its key file beside its key is not taken (a placeholder path is no file), so
  // the key stays required.
  t.deepEqual(
    undeclaredVariables('Error: A Brave API key is required via --brave-api-key, BRAVE_API_KEY, --brave-api-key-file, or BRAVE_API_KEY_FILE.', []).map((v) => [
      v.name,
      v.required,
    ]),
    [['BRAVE_API_KEY', true]],
  );
  t.deepEqual(
    undeclaredVariables('LARA_API_KEY is missing; see LARA_DOCS_PAGE or OTHER_THING', []).map((v) => v.name),
    ['LARA_API_KEY', 'LARA_DOCS_PAGE'],
    'only names of the same service as the credential',
  );
  t.like(undeclaredVariables('No API key provided. Set it in the `AIRTABLE_API_KEY` environment variable', []), [
    { name: 'AIRTABLE_API_KEY', required: true, secret: true },
  ]);
  const either = undeclaredVariables('Error: set GITHUB_TOKEN or GH_TOKEN (and GITHUB_API_URL for GitHub Enterprise)', []);
  t.deepEqual(
    either.map((v) => [v.name, v.required, v.secret ?? false, v.default]),
    [
      ['GITHUB_TOKEN', false, true, undefined],
      ['GH_TOKEN', false, true, undefined],
      ['GITHUB_API_URL', false, false, 'http://toolshed-placeholder.invalid'],
    ],
  );
  t.deepEqual(undeclaredVariables('FIXTURE_API_KEY environment variable is required', [{ name: 'FIXTURE_API_KEY', required: false }]), []);
  t.deepEqual(undeclaredVariables('Service URL cannot be empty', []), [], 'words, not variable names');
});

test('a start-up error that speaks of environment variables: the other capitalised names in it are variables too (not secret); Node error codes are not', (t) => {
  // As @upstash/mcp-server: UPSTASH_EMAIL is no credential-like name, yet the server would not start without it.
  const upstash = undeclaredVariables(
    'Missing required credentials. Provide --email and --api-key or set UPSTASH_EMAIL and UPSTASH_API_KEY environment variables.',
    [],
  );
  t.deepEqual(
    upstash.map((v) => [v.name, v.required, v.secret ?? false]),
    [
      ['UPSTASH_EMAIL', true, false],
      ['UPSTASH_API_KEY', true, true],
    ],
  );
  t.like(undeclaredVariables('the env variable SERVICE_REGION is not set', []), [{ name: 'SERVICE_REGION', required: true }]);
  t.deepEqual(undeclaredVariables("Error [ERR_MODULE_NOT_FOUND]: Cannot find package 'x' (set NODE_OPTIONS in the environment)", []), []);
  t.deepEqual(undeclaredVariables('Error: cannot read the configuration file CONFIG_FILE', []), [], 'capitals alone, without a word of the environment');
});

test('a command-line server that prints its usage when started bare is started with its `start` subcommand, which is recorded', async (t) => {
  // As @launchdarkly/mcp-server (Speakeasy's `mcp start`): it was a 400 "exited (code 0) without writing anything to stderr".
  const res = await svc.request('POST', '/api/admin/packages', {
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    body: { source: `path:${await mcpFixturePackage(root, 'cli', { bare: true })}` },
  });
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body.data.tools.map((x: { name: string }) => x.name).sort(), ['fail', 'misbehave', 'shout']);
  const versions = await svc.api.deps.db('package_versions').whereRaw("manifest->>'name' = ?", ['@fixtures/mcp-cli']);
  t.deepEqual(versions[0].manifest.mcp.args, ['start']);
  const run = await execute('cli', 'shout', { text: 'started' });
  t.is(run.status, 200, run.text);
  t.deepEqual(run.body.result, { text: 'STARTED' });
});

test('a command-line server that prints its usage on stderr and exits 1 when started bare is started with its `stdio` command', async (t) => {
  // As @pipedream/mcp (commander, `mcp stdio`): the usage went to stderr, and the 400 quoted its last lines.
  const res = await svc.request('POST', '/api/admin/packages', {
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    body: { source: `path:${await mcpFixturePackage(root, 'cli-stderr', { bare: true })}` },
  });
  t.is(res.status, 201, res.text);
  const versions = await svc.api.deps.db('package_versions').whereRaw("manifest->>'name' = ?", ['@fixtures/mcp-cli-stderr']);
  t.deepEqual(versions[0].manifest.mcp.args, ['stdio']);
  const run = await execute('cli-stderr', 'shout', { text: 'over stdio' });
  t.deepEqual(run.body.result, { text: 'OVER STDIO' }, run.text);
});

test('a server runs with invariant globalization, which a .NET server needs in a sandbox without ICU', async (t) => {
  // As @azure/mcp: "Couldn't find a valid ICU package installed on the system".
  const res = await importMode('needs-icu');
  t.is(res.status, 201, res.text);
  const run = await execute('needs-icu', 'shout', { text: 'dotnet' });
  t.deepEqual(run.body.result, { text: 'DOTNET' }, run.text);
});

test('a package without a bin, named as an MCP server and built with the SDK, is started from its main', async (t) => {
  // As @niledatabase/nile-mcp-server: it was taken for a package of JS tools, and its module, loaded, exited.
  const res = await svc.request('POST', '/api/admin/packages', {
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    body: { source: `path:${await mcpFixturePackage(root, 'binless', { binless: true })}` },
  });
  t.is(res.status, 201, res.text);
  t.is(res.body.data.package.kind, 'mcp');
  const run = await execute('binless', 'shout', { text: 'from main' });
  t.deepEqual(run.body.result, { text: 'FROM MAIN' }, run.text);
});

test("a server that prints a caller's value on stdout and exits: the TOOL_ERROR quotes what it printed, the value redacted", async (t) => {
  const res = await importMode('prints-env', { env: [{ name: 'FIXTURE_VAR', required: true, secret: true }] });
  t.is(res.status, 201, res.text);
  const run = await execute('prints-env', 'shout', { text: 'x' }, { FIXTURE_VAR: 's3cret-value-42' });
  t.is(run.body.error?.code, 'TOOL_ERROR', run.text);
  t.regex(run.body.error.message, /instead of MCP it printed: configured with FIXTURE_VAR=/);
  t.false(run.text.includes('s3cret-value-42'), 'the caller’s value is not in the answer');
});

// A server that exits printing something other than MCP on stdout (mode `prints`), one whose `start` fails too
// (`cli-fails`), one that exits naming no variable (`crashes`), one that prints its error then its usage
// (`usage-error`), one killed at start (`killed`) and one with a report over many lines (`bad-config`): their 400s are
// checked on their transcripts, recorded in gVisor (tests/mcp-transcripts.test.ts), without booting a sandbox here.
test('the subcommand a usage text names (the rule stdio-command)', (t) => {
  t.deepEqual(serverSubcommand('USAGE\n  mcp start [--transport stdio|sse]\n  mcp --help'), ['start']);
  t.deepEqual(serverSubcommand('Commands:\n  stdio    serve over stdio\n  http     serve over HTTP'), ['stdio']);
  t.is(serverSubcommand('my-tool v1.0\nrun me with --serve'), undefined);
  t.is(serverSubcommand('Usage: restart the server after changing its config'), undefined);
  t.deepEqual(
    serverSubcommand('  stdio [options]  Start the stdio server\n  sse [options]    Start the SSE server'),
    ['stdio'],
    'a command that speaks of a server, without the usage line',
  );
  t.is(serverSubcommand('start: 3 files watched\nerror: ENOENT'), undefined, 'a log line is no command');
  t.deepEqual(
    serverSubcommand('Usage: shadcn [options] [command]\nCommands:\n  add [options]  add a component\n  mcp [options]  MCP server and configuration commands'),
    ['mcp'],
    "shadcn's `mcp` command",
  );
  t.deepEqual(
    serverSubcommand(
      'Usage:\n  azmcp [command] [options]\n\nExamples:\n  azmcp storage account get --subscription "my-sub"\n  azmcp server start\n\nMCP:\n  server   MCP Server operations',
    ),
    ['server', 'start'],
    "@azure/mcp's `server start`",
  );
  t.is(serverSubcommand('Usage: x [command]\nCommands:\n  mcp  configure MCP clients'), undefined, 'an `mcp` command that is no server');
  t.deepEqual(
    serverSubcommand(
      'Usage: lark-mcp [options] [command]\n\nFeishu/Lark MCP Tool\n\nCommands:\n  whoami                     Print All User Sessions\n  login [options]            Login using OAuth\n  mcp [options]              Start Feishu/Lark MCP Service\n',
    ),
    ['mcp'],
    'an MCP service (@larksuiteoapi/lark-mcp)',
  );
  t.deepEqual(serverSubcommand('USAGE\n  mcp --help\n  mcp start [--transport stdio]'), ['start'], '`start` before `mcp`');
});

test('a server that wants the network while starting: the 400 says it was started without network, and what would give it one', async (t) => {
  // As @upstash/mcp-server and @sveltejs/mcp: the answer ended at `getaddrinfo EAI_AGAIN …`.
  const refused = await importMode('needs-network');
  t.is(refused.status, 400, refused.text);
  t.regex(refused.body.error.message, /cannot reach the service: getaddrinfo \w+ api\.fixture-service\.example/);
  t.regex(refused.body.error.message, /\(it was started without network: .* imports with `network: true` on a service with SANDBOX_NETWORK=egress\)$/);
  t.is((await startupOf('needs-network')).refusal, 'needs_network');
});

test("a server's call that finds no network says the server was imported without `network: true`", async (t) => {
  // As @modelcontextprotocol/server-github's search_repositories: the hint spoke of a toolshed field, which a server has not.
  const res = await importMode('calls-out');
  t.is(res.status, 201, res.text);
  const run = await execute('calls-out', 'lookup', {});
  t.is(run.body.error?.code, 'TOOL_ERROR', run.text);
  t.regex(run.body.error.message, /getaddrinfo \w+ api\.fixture-service\.example/);
  t.regex(run.body.error.message, /\(the tool ran without network: its MCP server was imported without `network: true`, so its sandbox has none/);
});

test('a request that found no network is recognised in the words of Node, Go and the C library (the hint follows it)', (t) => {
  for (const said of [
    'fetch failed',
    'getaddrinfo EAI_AGAIN api.example.com',
    'api error: Get "https://api.digitalocean.com/v2/account": dial tcp: lookup api.digitalocean.com on [::1]:53: read udp [::1]:35737->[::1]:53: read: connection refused',
    'Post "https://x.example/v1": dial tcp: lookup x.example: no such host',
    'HTTPSConnectionPool: [Errno -3] Temporary failure in name resolution',
  ])
    t.true(NETWORK_FAILURE.test(said), said);
  t.false(NETWORK_FAILURE.test('invalid token: 401 Unauthorized'));
});

test('a server that wants its key in words is given the credential its code reads, required, and a caller’s key reaches it', async (t) => {
  // As @shortcut/mcp ("A Shortcut api token is required"; its code reads SHORTCUT_API_TOKEN): refused before.
  const dir = await fixturePackage('key-in-words');
  await fs.writeFile(path.join(dir, 'token.cjs'), 'module.exports = () => process.env.FIXTURE_SERVICE_TOKEN;\n');
  const res = await svc.request('POST', '/api/admin/packages', {
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    body: { source: `path:${dir}`, args: ['key-in-words'] },
  });
  t.is(res.status, 201, res.text);
  const versions = await svc.api.deps.db('package_versions').whereRaw("manifest->>'name' = ?", ['@fixtures/mcp-key-in-words']);
  t.like(
    versions[0].env.find((v: { name: string }) => v.name === 'FIXTURE_SERVICE_TOKEN'),
    { required: true, secret: true, description: 'read by its code: the server would not start without its key' },
  );
  const run = await execute('key-in-words', 'shout', { text: 'keyed' }, { FIXTURE_SERVICE_TOKEN: 'tok' });
  t.deepEqual(run.body.result, { text: 'KEYED' }, run.text);
  t.is((await execute('key-in-words', 'shout', { text: 'x' })).status, 422, 'without it: refused before the sandbox');
});

test('serverJson (MCP Registry server.json) gives the arguments and variables', async (t) => {
  const dir = await fixturePackage('from-json');
  const res = await svc.request('POST', '/api/admin/packages', {
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    body: {
      source: `path:${dir}`,
      serverJson: {
        name: 'io.github.fixtures/needs-key',
        version: '1.0.0',
        packages: [
          {
            registryType: 'npm',
            identifier: '@fixtures/mcp-from-json',
            version: '1.0.0',
            transport: { type: 'stdio' },
            packageArguments: [{ type: 'positional', value: 'needs-key' }],
            environmentVariables: [{ name: 'FIXTURE_API_KEY', isRequired: true, isSecret: true, description: 'the key' }],
          },
        ],
      },
    },
  });
  t.is(res.status, 201, res.text);
  const tool = await svc.request('GET', '/api/tools/@fixtures/mcp-from-json/shout');
  t.true(JSON.stringify(tool.body.data).includes('FIXTURE_API_KEY'), 'the variable is declared on the package');
});

test("a server that reads stdin through 'readable' events, not 'data', imports and runs", async (t) => {
  // In the guest's process stdin is held until the server listens (guest/mcp-pipe.cjs); a server that never hears
  // initialize there is started as a child node instead (the import falls back after a time-out).
  const res = await importMode('readable');
  t.is(res.status, 201, res.text);
  const run = await execute('readable', 'shout', { text: 'heard' });
  t.is(run.status, 200, run.text);
  t.deepEqual(run.body.result, { text: 'HEARD' });
});

test('floods stdout with garbage: cut off with a clear error', async (t) => {
  const res = await importMode('flood');
  t.is(res.status, 400, res.text);
  t.regex(res.body.error.message, /not MCP messages|more than \d+ MiB to stdout/);
  await stillServing(t);
});

test('lists 10,000 tools: refused at the tools-per-server limit', async (t) => {
  const res = await importMode('many-tools');
  t.is(res.status, 400, res.text);
  t.regex(res.body.error.message, /more than 1000 tools/);
});

test('a 5 MB schema: refused at the message size limit', async (t) => {
  const res = await importMode('big-schema');
  t.is(res.status, 400, res.text);
  t.regex(res.body.error.message, /message over 4 MiB|schema of tool 'huge' is over/);
});

test('requests to the client (sampling, elicitation, roots) are answered "method not found"; the call ends', async (t) => {
  t.is((await importMode('asks')).status, 201);
  const res = await execute('asks', 'misbehave');
  t.is(res.body.error.code, 'TOOL_ERROR', res.text);
  t.regex(res.body.error.message, /sampling\/createMessage: .*not found.*elicitation\/create: .*not found.*roots\/list: .*not found/i);
});

test('a flood of notifications during a call: cut off at the message limit', async (t) => {
  t.is((await importMode('notifies')).status, 201);
  const res = await execute('notifies', 'misbehave');
  t.is(res.body.error.code, 'TOOL_ERROR', res.text);
  t.regex(res.body.error.message, /more than \d+ messages/);
});

test('exits in the middle of a call: TOOL_ERROR naming its exit and stderr', async (t) => {
  t.is((await importMode('exits')).status, 201);
  const res = await execute('exits', 'misbehave');
  t.is(res.body.error.code, 'TOOL_ERROR', res.text);
  t.regex(res.body.error.message, /exited \(code 3\).*giving up in the middle of a call/);
});

test('forks children and leaves them: the call answers, and the next call gets a fresh sandbox', async (t) => {
  t.is((await importMode('forks')).status, 201);
  const first = await execute('forks', 'misbehave');
  t.is(first.status, 200, first.text);
  t.deepEqual(first.body.result, { content: [{ type: 'text', text: 'left three children behind' }] });
  const second = await execute('forks', 'misbehave');
  t.is(second.status, 200, second.text);
  await stillServing(t);
});

/** Runs a health check job of the tool on the real worker and waits for its row. */
async function checkNow(toolId: string): Promise<{ passed: boolean; error: string | null }> {
  const db = svc.api.deps.db;
  const before = Number((await db('health_checks').where({ tool_id: toolId }).count('* as n').first())!.n);
  await enqueue(db, 'health_check', { toolId });
  return until(
    async () => {
      const rows = await db('health_checks').where({ tool_id: toolId }).orderBy('id', 'desc');
      return rows.length > before ? rows[0] : undefined;
    },
    120_000,
    'the health check',
  );
}

test('health: a server that starts and lists the same tools passes its check; one whose tools/list changed within a version is flagged', async (t) => {
  const good = await importMode('steady', { kind: 'mcp', args: ['good'] });
  t.is(good.status, 201, good.text);
  const shout = good.body.data.tools.find((x: { name: string }) => x.name === 'shout');
  const passed = await checkNow(shout.id);
  t.true(passed.passed, String(passed.error));
  const drifting = await importMode('unstable');
  t.is(drifting.status, 201, drifting.text);
  const check = await checkNow(drifting.body.data.tools[0].id);
  t.false(check.passed);
  t.regex(String(check.error), /tools\/list changed for version 1\.0\.0 since it was imported \(input schema\)/);
});

test('an input schema without `type` (server-gitlab as npm installs it today) imports as an object schema and runs; another type is refused naming the tool', async (t) => {
  const refused = await importMode('untyped', { env: [{ name: 'FIXTURE_STRING_INPUT', description: 'adds a tool whose input is a string' }] });
  t.is(refused.status, 400, refused.text);
  t.regex(refused.body.error.message, /the input schema of tool 'scalar' is of type "string": MCP tools take and give objects/);
  t.notRegex(refused.body.error.message, /invalid_value/, 'not a dump of the SDK schema issues');
  const res = await importMode('untyped');
  t.is(res.status, 201, res.text);
  const shout = await svc.request('GET', '/api/tools/@fixtures/mcp-untyped/shout');
  t.is(shout.body.data.inputSchema.type, 'object');
  const run = await execute('untyped', 'shout', { text: 'typed at last' });
  t.is(run.status, 200, run.text);
  t.deepEqual(run.body.result, { text: 'TYPED AT LAST' });
});

/**
 * The client package `clients/registry-tools` against a running Toolshed (real API, worker and gVisor sandbox) with
 * example tool packages: search shape, limit and category; execution and its errors; env values never in errors;
 * the example agent; and the package building and packing on its own.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Tool } from 'ai';
import { createRegistryTools, registryExecuteTool, registrySearchTool, RegistryToolError, type RegistryTools } from '../clients/registry-tools/src/index.js';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';
import { SOURCE_ROOT } from './helpers/source-root.js';

const run = promisify(execFile);
// The package's sources: its example runs through tsx, and tsc builds and npm packs it in place.
const ROOT = SOURCE_ROOT;
const PACKAGE_DIR = path.join(ROOT, 'clients/registry-tools');
const TEXT = '@toolshed-examples/text-tools';
const SIGNER = '@toolshed-examples/webhook-signer';

let svc: Service;
let tools: RegistryTools;

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  for (const dir of ['text-tools', 'data-tools', 'crypto-tools', 'webhook-signer']) {
    const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, dir)}`);
    if (res.status !== 201) throw new Error(`import ${dir}: ${res.text}`);
  }
  await svc.api.searchSync.flush();
  tools = createRegistryTools({ apiUrl: svc.url });
});
test.after.always(() => svc?.close());

/** Calls a tool the way the AI SDK does. */
async function call<I, O>(t: Tool<I, O>, input: I): Promise<O> {
  return (await t.execute!(input, { toolCallId: 'x', messages: [] })) as O;
}

/** A loopback port that nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

async function callError<I, O>(t: Tool<I, O>, input: I): Promise<RegistryToolError> {
  try {
    await call(t, input);
  } catch (err) {
    if (err instanceof RegistryToolError) return err;
    throw err;
  }
  throw new Error('expected the call to throw');
}

test('search: the seed item shape, default limit 5, matchCount', async (t) => {
  const res = await call(tools.registrySearchTool, { query: 'convert csv to json' });
  t.is(res.query, 'convert csv to json');
  t.true(res.tools.length > 0 && res.tools.length <= 5);
  t.is(res.matchCount, res.tools.length);
  const item = res.tools[0];
  t.deepEqual(Object.keys(item).sort(), ['category', 'description', 'healthStatus', 'name', 'package', 'qualityScore', 'requiredEnvVars', 'toolId']);
  t.like(item, {
    toolId: '@toolshed-examples/data-tools::csvToJson',
    name: 'csvToJson',
    package: '@toolshed-examples/data-tools',
    category: 'data-processing',
  });
  t.deepEqual(item.requiredEnvVars, []);
  t.is(typeof item.description, 'string');
  t.is(typeof item.qualityScore, 'number');
  t.is(typeof item.healthStatus, 'string');

  const broad = await svc.request('GET', '/api/tools/search?q=text%20json%20hash&limit=100');
  t.true(broad.body.results.tools.length > 5, 'the broad query has more than 5 hits');
  const capped = await call(tools.registrySearchTool, { query: 'text json hash' });
  t.is(capped.tools.length, 5, 'default limit');
  const two = await call(tools.registrySearchTool, { query: 'text json hash', limit: 2 });
  t.is(two.tools.length, 2);
  t.deepEqual(
    two.tools.map((x) => x.toolId),
    capped.tools.slice(0, 2).map((x) => x.toolId),
    'same ranking',
  );
});

test('search: category filters, and requiredEnvVars names the package env', async (t) => {
  const security = await call(tools.registrySearchTool, { query: 'text json hash', category: 'security', limit: 20 });
  t.true(security.tools.length > 0);
  t.true(security.tools.every((x) => x.category === 'security' && x.package === '@toolshed-examples/crypto-tools'));
  const signer = await call(tools.registrySearchTool, { query: 'sign webhook payload', category: 'communication' });
  t.like(signer.tools[0], { toolId: `${SIGNER}::signPayload`, requiredEnvVars: ['WEBHOOK_SECRET'] });
  const none = await call(tools.registrySearchTool, { query: 'csv', category: 'monitoring' });
  t.deepEqual(none, { query: 'csv', matchCount: 0, tools: [] });
});

test('search: a whole task description (over 200 characters) is a query; requiredEnvVars come from package.env names', async (t) => {
  const task = 'I receive webhook payloads from a partner and need to sign each JSON payload with our shared secret so that they can verify it. '.repeat(8);
  t.true(task.length > 900);
  const res = await call(tools.registrySearchTool, { query: task, limit: 3 });
  t.true(
    res.tools.some((x) => x.toolId === `${SIGNER}::signPayload`),
    JSON.stringify(res.tools.map((x) => x.toolId)),
  );
  t.deepEqual(res.tools.find((x) => x.toolId === `${SIGNER}::signPayload`)!.requiredEnvVars, ['WEBHOOK_SECRET']);
});

test('search: input outside the schema is refused before any request', async (t) => {
  const err = await callError(tools.registrySearchTool, { query: 'x', limit: 50 });
  t.is(err.code, 'VALIDATION_ERROR');
  t.regex(err.message, /limit/);
});

test('execute: runs the tool in the sandbox and returns its output', async (t) => {
  const res = await call(tools.registryExecuteTool, { toolId: `${TEXT}::slugify`, params: { text: 'Hello, World! Ça va?' } });
  t.is(res.toolId, `${TEXT}::slugify`);
  t.like(res.output as object, { slug: 'hello-world-ca-va' });
  t.true(Number.isInteger(res.executionTimeMs) && res.executionTimeMs >= 0);
  t.deepEqual(Object.keys(res).sort(), ['executionTimeMs', 'output', 'toolId']);
});

test('execute: a toolId may pin a version (<package>@<version>::<tool>); an unknown version is a 404', async (t) => {
  const { version } = (await svc.request('GET', `/api/packages/${TEXT}`)).body.data;
  const res = await call(tools.registryExecuteTool, { toolId: `${TEXT}@${version}::slugify`, params: { text: 'A B' } });
  t.like(res.output as object, { slug: 'a-b' });
  const err = await callError(tools.registryExecuteTool, { toolId: `${TEXT}@99.0.0::slugify`, params: { text: 'A B' } });
  t.like(err, { status: 404, code: 'NOT_FOUND' });
});

test('execute: env reaches the tool', async (t) => {
  const secret = crypto.randomBytes(16).toString('hex');
  const res = await call(tools.registryExecuteTool, { toolId: `${SIGNER}::signPayload`, params: { payload: '{"a":1}' }, env: { WEBHOOK_SECRET: secret } });
  const expected = crypto.createHmac('sha256', secret).update('{"a":1}').digest('hex');
  t.like(res.output as object, { digest: expected, signature: `sha256=${expected}` });
});

test('execute: a missing required env var is a clear error', async (t) => {
  const err = await callError(tools.registryExecuteTool, { toolId: `${SIGNER}::signPayload`, params: { payload: 'x' } });
  t.like(err, { status: 422, code: 'TOOL_UNAVAILABLE', toolId: `${SIGNER}::signPayload` });
  t.regex(err.message, /HTTP 422 TOOL_UNAVAILABLE/);
  t.regex(err.message, /WEBHOOK_SECRET/);
});

test('execute: an unknown toolId is a clear error', async (t) => {
  for (const toolId of [`${TEXT}::noSuchTool`, '@nobody/nothing::slugify', 'plain-package::tool']) {
    const err = await callError(tools.registryExecuteTool, { toolId, params: {} });
    t.like(err, { status: 404, code: 'NOT_FOUND' });
    t.regex(err.message, /HTTP 404 NOT_FOUND/);
    t.true(err.message.includes(toolId.split('::')[1]), err.message);
  }
  const malformed = await callError(tools.registryExecuteTool, { toolId: 'slugify', params: {} });
  t.is(malformed.code, 'VALIDATION_ERROR');
  t.regex(malformed.message, /<package>::<tool_name>/);
});

test('execute: invalid params are a clear error with the details', async (t) => {
  const err = await callError(tools.registryExecuteTool, { toolId: `${TEXT}::slugify`, params: { separator: '+' } });
  t.like(err, { status: 400, code: 'VALIDATION_ERROR' });
  t.regex(err.message, /HTTP 400 VALIDATION_ERROR/);
  t.regex(err.message, /params\.text is required/);
  t.regex(err.message, /params\.separator/);
  t.true(err.details!.some((d) => d.path === 'params.text'));
});

test('execute: a tool that throws is a clear error', async (t) => {
  const err = await callError(tools.registryExecuteTool, { toolId: `${TEXT}::testRegex`, params: { pattern: '(unclosed', text: 'x' } });
  t.like(err, { status: 200, code: 'TOOL_ERROR' });
  t.regex(err.message, /the tool threw an error \(TOOL_ERROR\)/);
  t.regex(err.message, /regular expression/i);
  t.truthy(err.executionId);
});

test('execute: env values never appear in errors', async (t) => {
  const secret = `s3cret-${crypto.randomBytes(12).toString('hex')}`;
  const env = { WEBHOOK_SECRET: secret };
  // Invalid params whose validation details echo the secret (as an unknown property name).
  const invalid = await callError(tools.registryExecuteTool, { toolId: `${SIGNER}::signPayload`, params: { payload: 42, [secret]: secret }, env });
  t.is(invalid.code, 'VALIDATION_ERROR');
  // A tool error whose message would echo it (the regex source).
  const thrown = await callError(tools.registryExecuteTool, { toolId: `${TEXT}::testRegex`, params: { pattern: `(${secret}`, text: 'x' }, env });
  t.is(thrown.code, 'TOOL_ERROR');
  // The registry's own refusal, and a network failure.
  const missing = await callError(tools.registryExecuteTool, { toolId: `${SIGNER}::signPayload`, params: { payload: 'x' }, env: { OTHER: secret } });
  const offline = createRegistryTools({ apiUrl: `http://127.0.0.1:${await closedPort()}` });
  const network = await callError(offline.registryExecuteTool, { toolId: `${TEXT}::slugify`, params: { text: secret }, env });
  t.is(network.code, 'NETWORK_ERROR');
  t.regex(network.message, /could not reach http:\/\/127\.0\.0\.1:\d+\/api\/tools\/execute\//);
  for (const err of [invalid, thrown, missing, network]) {
    t.false(err.message.includes(secret), err.message);
    t.false(JSON.stringify({ ...err, message: err.message }).includes(secret));
  }
  t.regex(invalid.message, /\[redacted\]/);
});

test('configuration: the environment is read at call time; apiKey and fetch options are used', async (t) => {
  process.env.REGISTRY_API_URL = svc.url;
  try {
    const res = await call(registrySearchTool, { query: 'slug', limit: 1 });
    t.is(res.tools[0].toolId, `${TEXT}::slugify`);
    const ran = await call(registryExecuteTool, { toolId: `${TEXT}::slugify`, params: { text: 'A B' } });
    t.like(ran.output as object, { slug: 'a-b' });
  } finally {
    delete process.env.REGISTRY_API_URL;
  }

  const user = await svc.createUser();
  const seen: string[] = [];
  const spy: typeof fetch = (input, init) => {
    seen.push(`${new Headers(init?.headers).get('authorization')} ${String(input)}`);
    return fetch(input, init);
  };
  const keyed = createRegistryTools({ apiUrl: 'http://127.0.0.1:9', executorUrl: svc.url, apiKey: user.key, fetch: spy });
  await call(keyed.registryExecuteTool, { toolId: `${TEXT}::slugify`, params: { text: 'x' } });
  t.deepEqual(seen, [`Bearer ${user.key} ${svc.url}/api/tools/execute/@toolshed-examples/text-tools/slugify`]);
});

test('responses the test service does not produce on demand: 504, 429, a non-JSON body', async (t) => {
  const secret = `s3cret-${crypto.randomBytes(8).toString('hex')}`;
  const answers: Record<string, [number, string]> = {
    slow: [504, JSON.stringify({ success: false, error: { code: 'EXECUTION_TIMEOUT', message: 'The execution timed out' }, executionId: 'e-1' })],
    busy: [429, JSON.stringify({ success: false, error: { code: 'RATE_LIMITED', message: 'Retry after 7 seconds' } })],
    proxy: [502, `<html>Bad gateway for ${secret}</html>`],
  };
  const stub: typeof fetch = async (input) => {
    const [status, body] = answers[String(input).split('/').pop()!];
    return new Response(body, { status, headers: { 'content-type': status === 502 ? 'text/html' : 'application/json' } });
  };
  const stubbed = createRegistryTools({ apiUrl: 'https://registry.example', fetch: stub });
  const exec = (tool: string) => callError(stubbed.registryExecuteTool, { toolId: `pkg::${tool}`, params: {}, env: { KEY: secret } });
  const slow = await exec('slow');
  t.like(slow, { status: 504, code: 'EXECUTION_TIMEOUT', executionId: 'e-1' });
  t.regex(slow.message, /HTTP 504 EXECUTION_TIMEOUT: The execution timed out\. It may still finish: GET https:\/\/registry\.example\/api\/executions\/e-1/);
  const busy = await exec('busy');
  t.like(busy, { status: 429, code: 'RATE_LIMITED' });
  t.regex(busy.message, /HTTP 429 RATE_LIMITED: Retry after 7 seconds/);
  const proxy = await exec('proxy');
  t.like(proxy, { status: 502, code: 'BAD_RESPONSE' });
  t.regex(proxy.message, /HTTP 502 from https:\/\/registry\.example\/api\/tools\/execute\/pkg\/proxy was not JSON: <html>Bad gateway for \[redacted\]/);
});

test('the example agent finds and runs a tool with a scripted model, then uses the tools directly', async (t) => {
  const { stdout } = await run('npx', ['tsx', path.join(PACKAGE_DIR, 'examples/agent.ts')], {
    cwd: ROOT,
    env: { ...process.env, REGISTRY_API_URL: svc.url, LLM_BASE_URL: '' },
    timeout: 120_000,
  });
  t.regex(stdout, /→ registrySearchTool /);
  t.regex(stdout, /→ registryExecuteTool \{"toolId":"@toolshed-examples\/text-tools::slugify"/);
  t.regex(stdout, /agent: I ran @toolshed-examples\/text-tools::slugify; it returned .*"slug":"hello-toolshed-agents"/);
  t.regex(stdout, /direct: @toolshed-examples\/crypto-tools::hashText in \d+ ms/);
});

test('the package builds on its own and packs only dist, README.md and package.json', async (t) => {
  await run('npx', ['tsc', '-p', path.join(PACKAGE_DIR, 'tsconfig.json')], { cwd: ROOT, timeout: 120_000 });
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json'], { cwd: PACKAGE_DIR, timeout: 120_000 });
  const [pack] = JSON.parse(stdout) as Array<{ name: string; files: Array<{ path: string }> }>;
  const files = pack.files.map((f) => f.path).sort();
  t.is(pack.name, '@toolshed/registry-tools');
  t.true(
    files.every((f) => f === 'README.md' || f === 'package.json' || f.startsWith('dist/')),
    files.join(', '),
  );
  for (const f of ['README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts']) t.true(files.includes(f), f);

  const manifest = (await import(path.join(PACKAGE_DIR, 'package.json'), { with: { type: 'json' } })).default;
  t.deepEqual(Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies }).sort(), ['ai', 'zod']);
  const built = await import(path.join(PACKAGE_DIR, 'dist/index.js'));
  t.is(typeof built.createRegistryTools, 'function');
  t.is(typeof built.registrySearchTool.execute, 'function');
  t.is(typeof built.registryExecuteTool.execute, 'function');
});

/**
 * An MCP server that never answers `initialize` (it listens on HTTP unless told `--stdio`): the import gives up after
 * the describe limit, in the guest's process and then as a child `node`, and says why with what the server wrote to
 * stderr. The limit is `MCP_DESCRIBE_TIMEOUT_MS`, lowered here so that the two waits take seconds, not a minute; it has
 * a file of its own so that no server that does answer (tests/mcp-hostile.test.ts) runs under the lowered limit. One
 * that listens on HTTP unless told `--stdio`, imported without arguments, is started once more with `--stdio`.
 */
import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startService, type Service } from './helpers/service.js';
import { mcpFixturePackage } from './helpers/mcp-fixture.js';

// Long enough for the fixture to start and write its stderr line on a loaded machine; the server never answers, so no
// wait depends on it otherwise.
const DESCRIBE_MS = 8000;
let svc: Service;
let root: string;

test.before(async () => {
  svc = await startService({ env: { MCP_DESCRIBE_TIMEOUT_MS: String(DESCRIBE_MS) } });
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-fixtures-'));
});
test.after.always(async () => {
  await svc?.close();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

test('never answers initialize: the import ends with a time-out error, and the service keeps answering', async (t) => {
  const res = await svc.request('POST', '/api/admin/packages', {
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    body: { source: `path:${await mcpFixturePackage(root, 'silent')}`, args: ['silent'] },
  });
  t.is(res.status, 400, res.text);
  t.regex(res.body.error.message, /did not list its tools within|did not answer in time/);
  t.true(res.body.error.message.includes(`did not list its tools within ${DESCRIBE_MS / 1000} s`), 'the limit is the configured one');
  // What it said on stderr meanwhile is in the answer (colour codes left out): here, why it never spoke MCP.
  t.regex(res.body.error.message, /\[INFO\] listening on http:\/\/127\.0\.0\.1:3333\/mcp \(pass --stdio for stdio\)/);
  const health = await svc.request('GET', '/health');
  t.is(health.status, 200, 'the API keeps answering');
});

test('a server that listens on HTTP unless told `--stdio`, imported without arguments, is started with `--stdio` (recorded), and the keys it then names are declared', async (t) => {
  // As @modelcontextprotocol/server-pdf ("Server is binding to 0.0.0.0 …" on stderr, silent on stdio) and
  // figma-developer-mcp (with --stdio: "Either FIGMA_API_KEY or FIGMA_OAUTH_TOKEN is required"): both were a 400.
  const res = await svc.request('POST', '/api/admin/packages', {
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    body: { source: `path:${await mcpFixturePackage(root, 'http-first', { bare: true })}` },
  });
  t.is(res.status, 201, res.text);
  const versions = await svc.api.deps.db('package_versions').whereRaw("manifest->>'name' = ?", ['@fixtures/mcp-http-first']);
  t.deepEqual(versions[0].manifest.mcp.args, ['--stdio']);
  t.deepEqual(
    versions[0].env.map((v: { name: string }) => v.name),
    // Those after the first two are named in the server's code, not by its error (a key read when a tool runs; the
    // fixture service's settings, `process.env.FIXTURE_…`): declared optional.
    ['FIXTURE_API_KEY', 'FIXTURE_OAUTH_TOKEN', 'FIXTURE_LAZY_TOKEN', 'FIXTURE_VAR', 'FIXTURE_ORG_URL', 'FIXTURE_STRING_INPUT'],
  );
  const run = await svc.request('POST', '/api/tools/execute/@fixtures/mcp-http-first/shout', {
    body: { params: { text: 'over stdio' }, env: { FIXTURE_API_KEY: 'k-1' } },
  });
  t.is(run.status, 200, run.text);
  t.deepEqual(run.body.result, { text: 'OVER STDIO' });
});

/**
 * Issue 46 item 5: a credentials *file* an MCP server wants (a Google Calendar server reads GOOGLE_OAUTH_CREDENTIALS,
 * the path of a JSON file). The import declares the variable `{ file: true, secret: true }`; a caller passes the
 * file's content per call like any secret; the guest writes it into a private file of the call's sandbox (its /tmp
 * tmpfs, mode 0600) and the server gets the path. The fixture server's `credentials-file` mode will not start without
 * the file and says what it read (a digest) and how the file is kept, in a real runsc sandbox.
 */
import test from 'ava';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { filesUnder, readIfThere } from './helpers/files.js';

let svc: Service;
test.before(async () => {
  svc = await startService({ env: { EXECUTION_TIMEOUT_MS: '30000' } });
});
test.after.always(() => svc?.close());

const NAME = '@fixtures/mcp-credentials-file';
const VARIABLE = 'GOOGLE_OAUTH_CREDENTIALS';
const PLACEHOLDER = '{"installed":{"client_id":"placeholder","client_secret":"placeholder","redirect_uris":["http://localhost"]}}';

function credentialsPackage(t: { teardown(fn: () => void): void }): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcp-credentials-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.chmodSync(dir, 0o755);
  fs.copyFileSync(path.join(FIXTURES_DIR, 'mcp-servers', 'server.cjs'), path.join(dir, 'server.cjs'));
  const pkg = { name: NAME, version: '1.0.0', fixtureMode: 'credentials-file', bin: { 'mcp-credentials': 'server.cjs' } };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(pkg));
  return dir;
}

const importWith = (dir: string, env: unknown[]) =>
  svc.request('POST', '/api/admin/packages', { headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` }, body: { source: `path:${dir}`, env } });

const call = (env?: Record<string, string>) => svc.request('POST', `/api/tools/execute/${NAME}/credentials`, { body: { params: {}, ...(env ? { env } : {}) } });

const digest = (s: string) => crypto.createHash('sha256').update(s).digest('hex');

/** Every file under `dir` whose bytes hold `needle` (the package cache is shared by a run's files: tests/helpers/files.ts). */
const filesHolding = (dir: string, needle: string) => filesUnder(dir).filter((f) => readIfThere(f)?.includes(needle));

test.serial('bad shapes of a file variable are a 400 naming the field, and nothing is recorded', async (t) => {
  const dir = credentialsPackage(t);
  const shapes: Array<[unknown, RegExp]> = [
    [{ name: VARIABLE, file: 'yes' }, /body\.env\.0\.file/],
    [{ name: VARIABLE, file: true, default: '{}' }, /a file has no default/],
    [{ name: VARIABLE, placeholder: '{}' }, /only a file \(file: true\) has a placeholder/],
    [{ name: VARIABLE, fiel: true }, /fiel/],
  ];
  for (const [variable, says] of shapes) {
    const res = await importWith(dir, [variable]);
    t.is(res.status, 400, `${JSON.stringify(variable)}: ${res.text}`);
    t.is(res.body.error.code, 'VALIDATION_ERROR', res.text);
    t.regex(JSON.stringify(res.body.error), says, res.text);
  }
  t.is(await svc.api.deps.db('packages').where({ name: NAME }).first(), undefined, 'nothing was recorded');
});

test.serial('a credentials file: each call gets its own content as a private file of its sandbox, the variable set to its path', async (t) => {
  const dir = credentialsPackage(t);
  const imported = await importWith(dir, [{ name: VARIABLE, file: true, secret: true, placeholder: PLACEHOLDER }]);
  t.is(imported.status, 201, imported.text);
  const row = await svc.api.deps.db('packages').where({ name: NAME }).first('env');
  t.like(
    (row.env as Array<{ name: string }>).find((v) => v.name === VARIABLE),
    { name: VARIABLE, required: true, secret: true, file: true },
  );

  const missing = await call();
  t.is(missing.status, 422, missing.text);
  t.regex(missing.body.error.message, new RegExp(`Missing required env: ${VARIABLE}`));

  const mine = JSON.stringify({ installed: { client_id: 'alice.apps.example', client_secret: `s-${crypto.randomUUID()}` } });
  const res = await call({ [VARIABLE]: mine });
  t.is(res.status, 200, res.text);
  t.true(res.body.success, res.text);
  const seen = res.body.result as { path: string; sha256: string; mode: string; dirMode: string; inPackage: boolean };
  t.is(seen.sha256, digest(mine), 'the server read the content the caller gave');
  t.is(seen.mode, '600');
  t.is(seen.dirMode, '700');
  t.false(seen.inPackage);
  t.regex(seen.path, /^\/tmp\/toolshed-files-[^/]+\/GOOGLE_OAUTH_CREDENTIALS$/);
  t.notRegex(JSON.stringify(res.body), new RegExp(mine.slice(20, 40)), 'the content is never answered');

  // Another caller's content reaches its own call only.
  const theirs = JSON.stringify({ installed: { client_id: 'bob.apps.example', client_secret: `s-${crypto.randomUUID()}` } });
  const other = await call({ [VARIABLE]: theirs });
  t.is(other.status, 200, other.text);
  t.is((other.body.result as { sha256: string }).sha256, digest(theirs));

  // Neither content is in the package, the package cache or the stored executions.
  const secret = JSON.parse(mine).installed.client_secret as string;
  t.deepEqual(filesHolding(dir, secret), []);
  t.deepEqual(filesHolding(svc.config.PACKAGE_CACHE_DIR, secret), []);
  const stored = await svc.api.deps.db('executions').select('result', 'error', 'params');
  t.notRegex(JSON.stringify(stored), new RegExp(secret));
});

test.serial('a server that needs the file is refused at import when the variable is not declared a file', async (t) => {
  const dir = credentialsPackage(t);
  const pkgFile = path.join(dir, 'package.json');
  fs.writeFileSync(pkgFile, JSON.stringify({ ...JSON.parse(fs.readFileSync(pkgFile, 'utf8')), name: `${NAME}-plain` }));
  const res = await importWith(dir, [{ name: VARIABLE, secret: true }]);
  t.is(res.status, 400, res.text);
  t.regex(res.text, /GOOGLE_OAUTH_CREDENTIALS/);
});

const CALENDAR = '@cocal/google-calendar-mcp';
const MODULES = path.resolve(new URL('../node_modules', import.meta.url).pathname);

test.serial("the real @cocal/google-calendar-mcp imports with its credentials file and a call's server reads the caller's file", async (t) => {
  // It will not start without the file ('Error loading OAuth keys'); with the placeholder it lists its 13 tools. The
  // package is copied without its own node_modules (most of its dependencies are hoisted beside it), so the import
  // installs them.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'google-calendar-mcp-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  fs.chmodSync(dir, 0o755);
  fs.cpSync(path.join(MODULES, CALENDAR), dir, { recursive: true, filter: (f) => !f.includes(`${CALENDAR}/node_modules`) });
  const imported = await svc.request('POST', '/api/admin/packages', {
    headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` },
    body: { source: `path:${dir}`, env: [{ name: VARIABLE, file: true, secret: true, placeholder: PLACEHOLDER }] },
  });
  t.is(imported.status, 201, imported.text);
  t.is(imported.body.data.tools.length, 13, imported.text);
  const clientId = `alice-${crypto.randomUUID()}.apps.googleusercontent.com`;
  const mine = JSON.stringify({ installed: { client_id: clientId, client_secret: `s-${crypto.randomUUID()}`, redirect_uris: ['http://localhost'] } });
  // Adding an account answers the OAuth address of the client the credentials file names (no network needed).
  const res = await svc.request('POST', `/api/tools/execute/${CALENDAR}/manage-accounts`, {
    body: { params: { action: 'add', account_id: 'work' }, env: { [VARIABLE]: mine } },
  });
  t.is(res.status, 200, res.text);
  t.true(res.body.success, res.text);
  t.regex(JSON.stringify(res.body.result), new RegExp(`client_id=${clientId.replace(/\./g, '\\.')}`));
  const missing = await svc.request('POST', `/api/tools/execute/${CALENDAR}/manage-accounts`, { body: { params: { action: 'list' } } });
  t.is(missing.status, 422, missing.text);
});

test.serial('a file variable on a package of JS tools is a 400 naming it, and nothing is recorded', async (t) => {
  const res = await importWith(path.join(FIXTURES_DIR, 'packages', 'echo-tools'), [{ name: 'ECHO_CREDENTIALS', file: true, secret: true }]);
  t.is(res.status, 400, res.text);
  t.is(res.body.error.code, 'VALIDATION_ERROR', res.text);
  t.deepEqual(res.body.error.details, [
    { path: 'env.0.file', message: 'a file variable (file: true) is for MCP servers; this package is imported as JS tools' },
  ]);
  const name = JSON.parse(fs.readFileSync(path.join(FIXTURES_DIR, 'packages', 'echo-tools', 'package.json'), 'utf8')).name;
  t.is(await svc.api.deps.db('packages').where({ name }).first(), undefined, 'nothing was recorded');
});

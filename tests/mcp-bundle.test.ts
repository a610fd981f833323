/**
 * MCP servers start from a bundle (one module and a few chunks) made at import (sandbox/mcp-bundle.ts): a real server
 * (@modelcontextprotocol/server-everything) and hand-written ones, in gVisor sandboxes with the official MCP client.
 * The bundle is used only when the server started from it lists the very same tools as from its bin; a server it
 * breaks runs as before, and a server reaching outside its package gets no bundle (no host file in it).
 */
import test from 'ava';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';

const MODULES = path.resolve(new URL('../node_modules', import.meta.url).pathname);
const EVERYTHING = '@modelcontextprotocol/server-everything';
const BUNDLE = '.toolshed-mcp-bundle/mcp-server.mjs';
let svc: Service;
let root: string;

test.before(async () => {
  svc = await startService();
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-bundle-'));
});
test.after.always(async () => {
  await svc?.close();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

const importPath = (dir: string, extra: Record<string, unknown> = {}) =>
  svc.request('POST', '/api/admin/packages', { headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` }, body: { source: `path:${dir}`, ...extra } });
const importServer = (dir: string, extra: Record<string, unknown> = {}) => importPath(dir, { kind: 'mcp', ...extra });
const execute = (slug: string, params: unknown) => svc.request('POST', `/api/tools/execute/${slug}`, { body: { params } });
const packageRow = (name: string) => svc.worker!.deps.db('packages').where({ name }).first();

/** A package holding `files`, with `server.cjs` as its bin. */
async function fixture(name: string, files: Record<string, string>): Promise<string> {
  const dir = path.join(root, name.replace('/', '+'));
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', description: name, bin: { server: 'server.cjs' } }));
  for (const [file, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await fs.writeFile(path.join(dir, file), text);
  }
  return dir;
}
const fixtureServer = () => fs.readFile(path.join(FIXTURES_DIR, 'mcp-servers', 'server.cjs'), 'utf8');

test('a real MCP server runs from the bundle made at import: the same tools, and its calls answer', async (t) => {
  const res = await importPath(path.join(MODULES, EVERYTHING));
  t.is(res.status, 201, res.text);
  const row = await packageRow(EVERYTHING);
  t.is(row.manifest.mcp.bundle, BUNDLE, 'the server starts from its bundle');
  t.true(existsSync(path.join(row.install_path, BUNDLE)));
  t.true(res.body.data.tools.some((x: { name: string }) => x.name === 'echo'));
  const echo = await execute(`${EVERYTHING}/echo`, { message: 'from the bundle' });
  t.is(echo.status, 200, echo.text);
  t.deepEqual(echo.body.result, { content: [{ type: 'text', text: 'Echo: from the bundle' }] });
  const sum = await execute(`${EVERYTHING}/get-sum`, { a: 2, b: 3 });
  t.is(sum.status, 200, sum.text);
  t.regex(JSON.stringify(sum.body.result), /5/);
});

test('a bundled server reads the files beside its module: its __dirname is its own, not the bundle’s', async (t) => {
  // Mode `from-file` lists the tools named in tools.json beside its module (alpha, beta, gamma when it finds none).
  const dir = await fixture('@fixtures/bundle-from-file', {
    'server.cjs': "require('./lib/impl.cjs');\n",
    'lib/impl.cjs': await fixtureServer(),
    'lib/tools.json': JSON.stringify([{ name: 'delta' }, { name: 'epsilon' }]),
  });
  const res = await importServer(dir, { args: ['from-file'] });
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body.data.tools.map((x: { name: string }) => x.name).sort(), ['delta', 'epsilon']);
  t.is((await packageRow('@fixtures/bundle-from-file')).manifest.mcp.bundle, BUNDLE);
  const call = await execute('@fixtures/bundle-from-file/delta', { text: 'x' });
  t.is(call.status, 200, call.text);
  t.deepEqual(call.body.result, { content: [{ type: 'text', text: 'ok' }] });
});

test('a server its bundle breaks (a require esbuild cannot follow) runs from its bin as before', async (t) => {
  // The module name is in a variable: the bundle's require looks for it beside the bundle, where it is not.
  const dir = await fixture('@fixtures/bundle-breaks', {
    'server.cjs': "require('./lib/noop.cjs');\nconst impl = ['.', 'lib', 'impl.cjs'].join('/');\nrequire(impl);\n",
    'lib/noop.cjs': 'module.exports = {};\n',
    'lib/impl.cjs': await fixtureServer(),
  });
  const res = await importServer(dir);
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body.data.tools.map((x: { name: string }) => x.name).sort(), ['fail', 'misbehave', 'shout']);
  const row = await packageRow('@fixtures/bundle-breaks');
  t.is(row.manifest.mcp.bundle, undefined, 'no bundle: it did not start from one');
  t.false(existsSync(path.join(row.install_path, BUNDLE)), 'the unused bundle is removed');
  const call = await execute('@fixtures/bundle-breaks/shout', { text: 'still runs' });
  t.is(call.status, 200, call.text);
  t.deepEqual(call.body.result, { text: 'STILL RUNS' });
});

test('a server that requires a file outside its package gets no bundle: no host file ends up where a sandbox reads', async (t) => {
  const secretFile = path.join(root, 'host-secret.js');
  await fs.writeFile(secretFile, "module.exports = 'HOST-ONLY-5f3a9c';\n");
  const dir = await fixture('@fixtures/bundle-outside', {
    'server.cjs': `try { process.env.SEEN = require(${JSON.stringify(secretFile)}); } catch {}\nrequire('./lib/impl.cjs');\n`,
    'lib/impl.cjs': await fixtureServer(),
  });
  const res = await importServer(dir);
  t.is(res.status, 201, res.text);
  const row = await packageRow('@fixtures/bundle-outside');
  t.is(row.manifest.mcp.bundle, undefined);
  t.false(existsSync(path.join(row.install_path, BUNDLE)));
  const call = await execute('@fixtures/bundle-outside/shout', { text: 'ok' });
  t.is(call.status, 200, call.text);
});

test('a package that ships a dir named like the bundle keeps its files and runs from its bin', async (t) => {
  const dir = await fixture('@fixtures/bundle-own-dir', {
    'server.cjs': "require('./lib/impl.cjs');\n",
    'lib/impl.cjs': await fixtureServer(),
    '.toolshed-mcp-bundle/notes.txt': 'the package’s own file',
  });
  const res = await importServer(dir);
  t.is(res.status, 201, res.text);
  const row = await packageRow('@fixtures/bundle-own-dir');
  t.is(row.manifest.mcp.bundle, undefined);
  t.is(await fs.readFile(path.join(row.install_path, '.toolshed-mcp-bundle/notes.txt'), 'utf8'), 'the package’s own file');
  const call = await execute('@fixtures/bundle-own-dir/shout', { text: 'mine' });
  t.is(call.status, 200, call.text);
});

test('a server of one file gets no bundle (nothing to save): it is not started twice at import', async (t) => {
  const dir = await fixture('@fixtures/bundle-one-file', { 'server.cjs': await fixtureServer() });
  const res = await importServer(dir);
  t.is(res.status, 201, res.text);
  const row = await packageRow('@fixtures/bundle-one-file');
  t.is(row.manifest.mcp.bundle, undefined);
  t.false(existsSync(path.join(row.install_path, BUNDLE)));
});

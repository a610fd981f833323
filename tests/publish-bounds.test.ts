/**
 * Bounds of publishing (issue 43 item 5): the daily quota is taken atomically with the import it counts; the import
 * answer names the package's publisher; hostile tarballs (a decompression bomb, 60,000 files) are 400s naming the
 * limit, nothing recorded, while a genuine package of 15,000 files imports. Packages are served by a scratch npm
 * registry (tests/helpers/npm-registry.ts); tarballs are built here, byte by byte.
 */
import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { installPackage, InstallError } from '../sandbox/packages.js';
import { startScratchRegistry, type ScratchRegistry } from './helpers/npm-registry.js';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';

const QUOTA = 20;
let root: string;
let registry: ScratchRegistry;
let svc: Service;

/** A ustar header for a regular file. */
function header(name: string, size: number): Buffer {
  const b = Buffer.alloc(512);
  b.write(name, 0);
  b.write('0000644\0', 100);
  b.write('0000000\0', 108);
  b.write('0000000\0', 116);
  b.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  b.write('00000000000\0', 136);
  b.write('        ', 148);
  b.write('0', 156);
  b.write('ustar\0', 257);
  b.write('00', 263);
  let sum = 0;
  for (const x of b) sum += x;
  b.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return b;
}
const entry = (name: string, content: Buffer) => [header(`package/${name}`, content.length), content, Buffer.alloc((512 - (content.length % 512)) % 512)];

const manifest = (name: string) => ({ name, version: '1.0.0', main: 'index.js', toolshed: { category: 'text-analysis', tools: [{ exportName: 'noop' }] } });
const INDEX = Buffer.from('exports.noop = { description: "does nothing", inputSchema: { type: "object" }, execute: () => ({ ok: true }) };\n');

/** A package tarball: package.json, index.js, and `extra` more entries. */
function tarball(name: string, extra: Buffer[][] = []): Buffer {
  const parts = [...entry('package.json', Buffer.from(JSON.stringify(manifest(name)))), ...entry('index.js', INDEX), ...extra.flat(), Buffer.alloc(1024)];
  return zlib.gzipSync(Buffer.concat(parts), { level: 9 });
}
const smallFiles = (n: number) => Array.from({ length: n }, (_, i) => entry(`lib/${Math.floor(i / 1000)}/m${i}.js`, Buffer.from(`module.exports = ${i};\n`)));

test.before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-bounds-'));
  registry = await startScratchRegistry();
  await registry.addTarball('bounds-plain', '1.0.0', tarball('bounds-plain'), manifest('bounds-plain'));
  await registry.addTarball('bounds-large', '1.0.0', tarball('bounds-large', smallFiles(15_000)), manifest('bounds-large'));
  await registry.addTarball('bounds-many', '1.0.0', tarball('bounds-many', smallFiles(60_000)), manifest('bounds-many'));
  // 140 MiB of zeros (under MAX_PACKAGE_UNPACKED_MB, 150) from a tarball of about 140 KiB: over a thousandfold.
  await registry.addTarball('bounds-bomb', '1.0.0', tarball('bounds-bomb', [entry('zeros.bin', Buffer.alloc(140 * 1024 * 1024))]), manifest('bounds-bomb'));
  svc = await startService({ sandbox: 'process', env: { NPM_USERCONFIG: registry.npmrc, PUBLISH_DAILY_QUOTA: String(QUOTA) } });
});
test.after.always(async () => {
  await svc?.close();
  await registry?.close();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

const admin = () => ({ authorization: `Bearer ${svc.config.ADMIN_TOKEN}` });

test('30 parallel publishes with a quota of 20: exactly 20 are accepted, the rest are 429 QUOTA_EXCEEDED', async (t) => {
  const user = await svc.createUser();
  const answers = await Promise.all(
    Array.from({ length: 30 }, (_, i) => svc.request('POST', '/api/packages?wait=false', { key: user.key, body: { source: `npm:bounds-quota-${i}@1.0.0` } })),
  );
  const statuses = answers.map((a) => a.status);
  t.is(statuses.filter((s) => s === 201 || s === 202).length, QUOTA, statuses.join(' '));
  t.is(statuses.filter((s) => s === 429).length, 30 - QUOTA, statuses.join(' '));
  for (const a of answers.filter((x) => x.status === 429)) t.is(a.body.error.code, 'QUOTA_EXCEEDED');
  const recorded = await svc.api.deps.db('package_imports').where({ requested_by: user.id }).count('* as n').first();
  t.is(Number(recorded!.n), QUOTA, 'a refused publish records no import');
});

test("the import answer names the package's publisher: the user's username, null for the admin's", async (t) => {
  const user = await svc.createUser();
  const mine = await svc.request('POST', '/api/packages', { key: user.key, body: { source: 'npm:bounds-plain@1.0.0' } });
  t.is(mine.status, 201, mine.text);
  t.like(mine.body.data.package, { name: 'bounds-plain', version: '1.0.0', kind: 'tools', publisher: user.username });
  const again = await svc.request('POST', '/api/packages', { key: user.key, body: { source: 'npm:bounds-plain@1.0.0' } });
  t.is(again.body.data.package.publisher, user.username, 'the answer from the record too');
  const theirs = await svc.request('POST', '/api/admin/packages', {
    headers: admin(),
    body: { source: `path:${path.join(FIXTURES_DIR, 'packages/echo-tools')}` },
  });
  t.is(theirs.status, 201, theirs.text);
  t.is(theirs.body.data.package.publisher, null);
});

test('a decompression bomb and a 60,000-file tarball are 400s naming the limit; nothing is recorded; the service answers', async (t) => {
  const bomb = await svc.request('POST', '/api/admin/packages', { headers: admin(), body: { source: 'npm:bounds-bomb@1.0.0' } });
  t.is(bomb.status, 400, bomb.text);
  t.is(bomb.body.error.code, 'VALIDATION_ERROR');
  t.regex(bomb.body.error.message, /bounds-bomb@1\.0\.0: .*inflates over 1000-fold \(a decompression bomb\)/);
  const many = await svc.request('POST', '/api/admin/packages', { headers: admin(), body: { source: 'npm:bounds-many@1.0.0' } });
  t.is(many.status, 400, many.text);
  t.regex(many.body.error.message, /bounds-many@1\.0\.0: it has 60002 files, over the limit of 50000 \(MAX_PACKAGE_FILES\)/);
  for (const name of ['bounds-bomb', 'bounds-many']) t.is(await svc.api.deps.db('packages').where({ name }).first(), undefined, `${name} not recorded`);
  t.is((await svc.request('GET', '/health')).status, 200);
});

test('a genuine package of 15,000 files imports and runs', async (t) => {
  const res = await svc.request('POST', '/api/admin/packages', { headers: admin(), body: { source: 'npm:bounds-large@1.0.0' } });
  t.is(res.status, 201, res.text);
  t.deepEqual(
    res.body.data.tools.map((x: { name: string }) => x.name),
    ['noop'],
  );
  const run = await svc.request('POST', '/api/tools/execute/bounds-large/noop', { body: { params: {} } });
  t.is(run.status, 200, run.text);
  t.deepEqual(run.body.result, { ok: true });
});

test('the installed tree is bounded with its dependencies: MAX_PACKAGE_FILES and MAX_PACKAGE_INSTALLED_MB name the limit', async (t) => {
  // A folder shipping its own node_modules (installed as shipped): 30 small dependency files, 2 MiB in one of them.
  const folder = path.join(root, 'with-deps');
  await fs.mkdir(path.join(folder, 'node_modules', 'dep'), { recursive: true });
  await fs.writeFile(path.join(folder, 'package.json'), JSON.stringify(manifest('bounds-deps')));
  await fs.writeFile(path.join(folder, 'index.js'), INDEX);
  for (let i = 0; i < 30; i++) await fs.writeFile(path.join(folder, 'node_modules', 'dep', `f${i}.js`), `module.exports = ${i};\n`);
  await fs.writeFile(path.join(folder, 'node_modules', 'dep', 'big.bin'), Buffer.alloc(2 * 1024 * 1024, 1));
  const cache = path.join(root, 'cache');
  const files = await installPackage(cache, { kind: 'path', dir: folder }, { maxFiles: 20 }).catch((e: unknown) => e);
  t.true(files instanceof InstallError && files.userError, String(files));
  t.regex((files as Error).message, /bounds-deps@1\.0\.0 with its dependencies has over 20 files and directories, the limit \(MAX_PACKAGE_FILES\)/);
  const bytes = await installPackage(cache, { kind: 'path', dir: folder }, { maxInstalledBytes: 1024 * 1024 }).catch((e: unknown) => e);
  t.regex(String((bytes as Error).message), /bounds-deps@1\.0\.0 with its dependencies is over 1\.0 MiB, the limit \(MAX_PACKAGE_INSTALLED_MB\)/);
  t.deepEqual(
    (await fs.readdir(cache)).filter((e) => !e.startsWith('.')),
    [],
    'nothing installed',
  );
  const ok = await installPackage(cache, { kind: 'path', dir: folder }, {});
  t.true(ok.dir.startsWith(cache), 'within the default limits it installs');
});

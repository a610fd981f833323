/**
 * Hostile packages through the real admin import API (real worker, real npm, real sandbox): symlinks to host files,
 * names and versions that climb out of the package cache, and dependencies that would make the worker host fetch
 * arbitrary URLs or link host directories.
 */
import test from 'ava';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { filesUnder, readIfThere } from '../helpers/files.js';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';

let svc: Service;
let scratch: string;
test.before(async () => {
  scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-sec-pkg-'));
  // A package cache of this file's own: the run's shared cache gets staging folders from the files running beside
  // this one, and the checks below look for what this file's imports left in it.
  svc = await startService({ env: { PACKAGE_CACHE_DIR: path.join(scratch, 'package-cache') } });
});
test.after.always(async () => {
  await svc?.close();
  if (scratch) await fs.rm(scratch, { recursive: true, force: true });
});

const rand = () => crypto.randomBytes(4).toString('hex');
const TOOL = `export const echo = { description: 'Echoes its input', inputSchema: { type: 'object' }, execute: async (p) => p };\n`;

/** A tool package in a fresh folder; `extra` overrides package.json fields. */
async function makePackage(extra: Record<string, unknown> = {}, files: Record<string, string> = { 'index.js': TOOL }): Promise<string> {
  const dir = await fs.mkdtemp(path.join(scratch, 'pkg-'));
  const pkg = {
    name: `sec-fixture-${rand()}`,
    version: '1.0.0',
    type: 'module',
    main: 'index.js',
    toolshed: { category: 'automation', tools: ['echo'] },
    ...extra,
  };
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify(pkg));
  for (const [name, body] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, name)), { recursive: true });
    await fs.writeFile(path.join(dir, name), body);
  }
  return dir;
}

/** The package cache's files that hold `text` (links not followed; a file an install removed meanwhile is skipped). */
function cacheHolds(text: string): string[] {
  return filesUnder(svc.config.PACKAGE_CACHE_DIR).filter((f) => readIfThere(f)?.includes(text));
}

async function hostSecret(): Promise<{ file: string; value: string }> {
  const dir = await fs.mkdtemp(path.join(scratch, 'host-'));
  const value = `HOST-SECRET-${rand()}${rand()}`;
  const file = path.join(dir, 'secret.txt');
  await fs.writeFile(file, value, { mode: 0o600 });
  return { file, value };
}

test('a symlink to a host file is refused by name, and no copy of the file lands in the cache', async (t) => {
  const secret = await hostSecret();
  const absolute = await makePackage();
  await fs.symlink(secret.file, path.join(absolute, 'notes.txt'));
  const relative = await makePackage();
  await fs.mkdir(path.join(relative, 'docs'));
  await fs.symlink(path.relative(path.join(relative, 'docs'), secret.file), path.join(relative, 'docs', 'notes.txt'));
  const manifestLink = await makePackage();
  await fs.rm(path.join(manifestLink, 'package.json'));
  await fs.symlink(secret.file, path.join(manifestLink, 'package.json'));
  const dirLink = await makePackage();
  await fs.symlink(path.dirname(secret.file), path.join(dirLink, 'vendor'));

  for (const [dir, link] of [
    [absolute, 'notes.txt'],
    [relative, 'docs/notes.txt'],
    [manifestLink, 'package.json'],
    [dirLink, 'vendor'],
  ]) {
    const res = await svc.importPackage(`path:${dir}`);
    t.is(res.status, 400, `${link}: ${res.text}`);
    t.is(res.body.error.code, 'VALIDATION_ERROR');
    t.true(res.body.error.message.includes(link) && /outside the package/.test(res.body.error.message), res.body.error.message);
    t.false(res.text.includes(secret.value), 'the secret is not echoed');
  }
  t.deepEqual(cacheHolds(secret.value), [], 'no cached file holds the host file content');
});

test('links that stay inside the package are kept and work', async (t) => {
  const dir = await makePackage(
    { main: 'entry.js', toolshed: { category: 'automation', tools: [{ exportName: 'echo', healthExample: { params: { a: 1 }, expect: { a: 1 } } }] } },
    { 'lib/tool.js': TOOL },
  );
  await fs.symlink('lib/tool.js', path.join(dir, 'entry.js'));
  const res = await svc.importPackage(`path:${dir}`);
  t.is(res.status, 201, res.text);
  t.is(res.body.data.tools[0].healthStatus, 'HEALTHY');
  const row = await svc.api.deps.db('packages').where({ name: res.body.data.package.name }).first();
  t.is(await fs.readlink(path.join(row.install_path, 'entry.js')), 'lib/tool.js', 'kept as a relative link inside the cached package');
});

test('a package name or version that climbs out of the cache is a 400 and nothing is written outside it', async (t) => {
  const cacheParent = path.dirname(svc.config.PACKAGE_CACHE_DIR);
  const escapedName = `toolshed-escape-${rand()}`;
  const byName = await makePackage({ name: `a/../../../${escapedName}` });
  const escapedVersion = `toolshed-escape-${rand()}`;
  const byVersion = await makePackage({ version: `1.0.0/../../${escapedVersion}` });
  const leftovers = async () => (await fs.readdir(cacheParent)).filter((n) => n.startsWith(escapedName) || n.startsWith(escapedVersion));
  try {
    const res = await svc.importPackage(`path:${byName}`);
    t.is(res.status, 400, res.text);
    t.is(res.body.error.code, 'VALIDATION_ERROR');
    t.true(
      res.body.error.details.some((d: { path: string; message: string }) => d.path === 'package.json.name' && /URL-friendly/.test(d.message)),
      res.text,
    );
    const v = await svc.importPackage(`path:${byVersion}`);
    t.is(v.status, 400, v.text);
    t.true(
      v.body.error.details.some((d: { path: string }) => d.path === 'package.json.version'),
      v.text,
    );
    t.deepEqual(await leftovers(), [], 'no directory was published next to the cache');
  } finally {
    for (const n of await leftovers()) await fs.rm(path.join(cacheParent, n), { recursive: true, force: true });
  }
  t.is(await svc.api.deps.db('packages').where('name', 'like', `%${escapedName}%`).first(), undefined);
});

// Serial (AVA runs serial tests before the others): the file's other imports stage folders in the cache meanwhile.
test.serial('a path: import of a folder that holds the package cache, or lies inside it, is a 400 naming the source', async (t) => {
  const cache = svc.config.PACKAGE_CACHE_DIR;
  const installed = (await fs.readdir(cache)).find((n) => !n.startsWith('.'));
  for (const dir of [path.dirname(cache), cache, ...(installed ? [path.join(cache, installed)] : [])]) {
    const res = await svc.importPackage(`path:${dir}`);
    t.is(res.status, 400, `${dir}: ${res.text}`);
    t.is(res.body.error.code, 'VALIDATION_ERROR');
    t.deepEqual(res.body.error.details, [{ path: 'source', message: 'is, holds or is inside the package cache' }]);
    t.false(res.text.includes('.staging-'), 'no internal path in the answer');
  }
  t.deepEqual(
    (await fs.readdir(cache)).filter((n) => n.startsWith('.staging-')),
    [],
    'no staging folder is left behind',
  );
});

test("npm: sources are checked with npm's own name rules", async (t) => {
  for (const [source, rule] of [
    ['npm:node_modules', /node_modules is not a valid package name/],
    ['npm:_private', /cannot start with an underscore/],
    ['npm:@scope/.hidden', /cannot start with a period/],
  ] as const) {
    const res = await svc.importPackage(source);
    t.is(res.status, 400, source);
    t.is(res.body.error.code, 'VALIDATION_ERROR');
    t.regex(JSON.stringify(res.body.error.details), rule, source);
  }
});

/** A local HTTP server standing for "anywhere the worker host can reach"; records every request made to it. */
async function witness(t: { teardown: (fn: () => Promise<void>) => void }): Promise<{ origin: string; requests: string[] }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.statusCode = 404;
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { origin: `127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

test('non-registry dependencies are refused by name before npm runs: nothing is fetched and no host folder is linked', async (t) => {
  const { origin, requests } = await witness(t);
  const cases: [field: string, name: string, spec: string][] = [
    ['dependencies', 'evil-tarball', `http://${origin}/evil.tgz`],
    ['dependencies', 'evil-tls', `https://${origin}/evil.tgz`],
    ['optionalDependencies', 'evil-git', `git+http://${origin}/evil.git`],
    ['peerDependencies', 'evil-peer', `http://${origin}/peer.tgz`],
    ['dependencies', 'evil-gitproto', `git://${origin}/evil.git`],
    ['dependencies', 'host-etc', 'file:/etc'],
    ['dependencies', 'host-link', 'link:/etc'],
    ['dependencies', 'alias-url', `npm:left-pad@http://${origin}/x.tgz`],
  ];
  for (const [field, name, spec] of cases) {
    const dir = await makePackage({ [field]: { [name]: spec } });
    const res = await svc.importPackage(`path:${dir}`);
    t.is(res.status, 400, `${field}.${name}: ${res.text}`);
    t.is(res.body.error?.code, 'VALIDATION_ERROR');
    t.true(
      res.body.error?.details?.some((d: { path: string }) => d.path === `package.json.${field}.${name}`),
      res.text,
    );
  }
  t.deepEqual(requests, [], 'the worker host made no request to the URLs');
  const linked = (await fs.readdir(svc.config.PACKAGE_CACHE_DIR)).filter((n) => n.startsWith('sec-fixture-'));
  for (const n of linked) {
    for (const dep of ['host-etc', 'host-link']) t.false(existsSync(path.join(svc.config.PACKAGE_CACHE_DIR, n, 'node_modules', dep)), `${n} links ${dep}`);
  }
});

test('the package cannot steer npm: its own .npmrc and its devDependencies are not used', async (t) => {
  const { origin, requests } = await witness(t);
  const dir = await makePackage(
    {
      dependencies: { 'is-number': '7.0.0' },
      devDependencies: { 'dev-only': `http://${origin}/dev-only.tgz` },
      overrides: { 'is-number': `http://${origin}/override.tgz` },
      toolshed: { category: 'automation', tools: [{ exportName: 'echo', healthExample: { params: { a: 1 }, expect: { a: 1 } } }] },
    },
    { 'index.js': TOOL, '.npmrc': `registry=http://${origin}/registry/\n` },
  );
  const res = await svc.importPackage(`path:${dir}`);
  t.is(res.status, 201, res.text);
  t.is(res.body.data.tools[0].healthStatus, 'HEALTHY');
  t.deepEqual(requests, [], "npm used neither the package's registry, its devDependencies nor its overrides");
  const row = await svc.api.deps.db('packages').where({ name: res.body.data.package.name }).first();
  t.true(existsSync(path.join(row.install_path, 'node_modules', 'is-number', 'package.json')), 'the registry dependency is installed');
});

test('git host shorthands are refused without contacting the host', async (t) => {
  for (const spec of ['github:someone/evil', 'someone/evil', 'gitlab:someone/evil', 'bitbucket:someone/evil#main']) {
    const dir = await makePackage({ dependencies: { evil: spec } });
    const started = Date.now();
    const res = await svc.importPackage(`path:${dir}`);
    t.is(res.status, 400, `${spec}: ${res.text}`);
    t.true(
      res.body.error.details.some((d: { path: string; message: string }) => d.path === 'package.json.dependencies.evil' && /registry/.test(d.message)),
      res.text,
    );
    t.true(Date.now() - started < 30_000, 'answered without a network round trip to a git host');
  }
});

test('registry dependencies (versions, ranges, tags and npm: aliases) still install and work', async (t) => {
  const dir = path.join(FIXTURES_DIR, 'security', 'packages-registry-deps');
  const res = await svc.importPackage(`path:${dir}`);
  t.is(res.status, 201, res.text);
  t.is(res.body.data.tools[0].healthStatus, 'HEALTHY', res.text);
  const row = await svc.api.deps.db('packages').where({ name: res.body.data.package.name }).first();
  for (const dep of ['is-number', 'number-alias']) t.true(existsSync(path.join(row.install_path, 'node_modules', dep, 'package.json')), dep);
  const st = await fs.stat(path.join(row.install_path, 'node_modules', 'is-number', 'index.js'));
  t.is(st.mode & 0o7777, 0o644, 'installed dependency files are world-readable, not writable');
});

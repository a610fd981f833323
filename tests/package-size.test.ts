/**
 * A package over the size limits (MAX_PACKAGE_TARBALL_MB, MAX_PACKAGE_UNPACKED_MB; issue 24 item 5) is a 400 naming
 * its size and the limit, nothing of it is recorded, and the service keeps answering. Served by a stand-in npm
 * registry (tests/helpers/npm-registry.ts) with 1 MiB limits: version 1.0.0 holds 1.5 MiB of text that compresses to
 * almost nothing (over the unpacked limit only), 2.0.0 holds 1.5 MiB of random bytes (its tarball is over too).
 */
import test from 'ava';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startNpmRegistry, type StandInRegistry } from './helpers/npm-registry.js';
import { startService, type Service } from './helpers/service.js';

const PKG = 'toolshed-size-fixture';
let root: string;
let registry: StandInRegistry;
let svc: Service;

async function folder(version: string, content: Buffer | string): Promise<string> {
  const dir = path.join(root, version);
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ name: PKG, version, main: 'index.js', toolshed: { category: 'text-analysis', tools: [{ exportName: 'noop' }] } }),
  );
  await fs.writeFile(path.join(dir, 'index.js'), 'exports.noop = { description: "does nothing", inputSchema: { type: "object" }, execute: () => ({}) };\n');
  await fs.writeFile(path.join(dir, 'filler.bin'), content);
  return dir;
}

test.before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-size-'));
  const size = 1.5 * 1024 * 1024;
  registry = await startNpmRegistry(PKG, {
    '1.0.0': await folder('1.0.0', 'a'.repeat(size)),
    '2.0.0': await folder('2.0.0', crypto.randomBytes(size)),
  });
  await registry.publish('1.0.0');
  await registry.publish('2.0.0');
  svc = await startService({ env: { NPM_USERCONFIG: registry.npmrc, MAX_PACKAGE_TARBALL_MB: '1', MAX_PACKAGE_UNPACKED_MB: '1' } });
});
test.after.always(async () => {
  await svc?.close();
  await registry?.close();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

test('a package over the size limits is a 400 naming its size and the limit; nothing is recorded', async (t) => {
  const admin = { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` };
  const unpacked = await svc.request('POST', '/api/admin/packages', { headers: admin, body: { source: `npm:${PKG}@1.0.0` } });
  t.is(unpacked.status, 400, unpacked.text);
  t.is(unpacked.body.error.code, 'VALIDATION_ERROR');
  t.regex(unpacked.body.error.message, /toolshed-size-fixture@1\.0\.0: its unpacked size is 1\.5 MiB, over the limit of 1\.0 MiB \(MAX_PACKAGE_UNPACKED_MB\)/);
  const tarball = await svc.request('POST', '/api/admin/packages', { headers: admin, body: { source: `npm:${PKG}@2.0.0` } });
  t.is(tarball.status, 400, tarball.text);
  t.regex(tarball.body.error.message, /toolshed-size-fixture@2\.0\.0: its tarball is 1\.\d MiB, over the limit of 1\.0 MiB \(MAX_PACKAGE_TARBALL_MB\)/);
  t.is(await svc.api.deps.db('packages').where({ name: PKG }).first(), undefined, 'nothing half-imported');
  t.is((await svc.request('GET', '/health')).status, 200);
});

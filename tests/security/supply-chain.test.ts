/**
 * Supply chain (issue 43 items 1 and 2), tried as an attacker would with plain user keys and a scratch npm registry
 * on 127.0.0.1 (tests/helpers/npm-registry.ts) serving what a hostile registry entry can hold:
 * - a tarball that names another package (an ordinary user's, and an official one) in its package.json;
 * - a dist.integrity that is not the tarball's;
 * - a recorded version served again with other bytes;
 * - another user's import of a name, checked by the recorder (not only the API), and two first publishes at once.
 * Each is refused with nothing changed; the owner keeps the name until the admin transfers it; a run refuses an
 * install whose marker names other bytes than the recorded version's.
 */
import test from 'ava';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startScratchRegistry, type ScratchRegistry } from '../helpers/npm-registry.js';
import { EXAMPLES_DIR, startService, type Service } from '../helpers/service.js';
import { importPackage } from '../../worker/import/index.js';

type User = { id: string; username: string; key: string };
let root: string;
let registry: ScratchRegistry;
let svc: Service;
let victim: User;
let mallory: User;

/** A one-tool package folder whose `echo` says who wrote it. */
async function folder(name: string, version: string, author: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(root, 'pkg-'));
  await fs.writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ name, version, main: 'index.js', toolshed: { category: 'text-analysis', tools: [{ exportName: 'echo' }] } }),
  );
  await fs.writeFile(
    path.join(dir, 'index.js'),
    `exports.echo = { description: 'Echoes its text', inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, execute: ({ text }) => ({ text, by: ${JSON.stringify(author)} }) };\n`,
  );
  return dir;
}

const publish = (user: User, source: string) => svc.request('POST', '/api/packages', { key: user.key, body: { source } });
const admin = () => ({ authorization: `Bearer ${svc.config.ADMIN_TOKEN}` });
const run = (ref: string) => svc.request('POST', `/api/tools/execute/${ref}`, { body: { params: { text: 'hi' } } });
/** What is recorded of a package: its latest, owner and official flag, and each version's install and integrity. */
async function recorded(name: string) {
  const db = svc.api.deps.db;
  const p = await db('packages').where({ name }).first('id', 'version', 'published_by', 'official', 'install_path');
  const versions = p
    ? await db('package_versions').where({ package_id: p.id }).orderBy('version').select('version', 'install_path', 'integrity', 'published_by')
    : [];
  return { p, versions };
}

test.before(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-supply-'));
  registry = await startScratchRegistry();
  await registry.add('victim-tools', '1.0.0', await folder('victim-tools', '1.0.0', 'victim'));
  svc = await startService({ sandbox: 'process', env: { NPM_USERCONFIG: registry.npmrc } });
  victim = await svc.createUser();
  mallory = await svc.createUser();
  const first = await publish(victim, 'npm:victim-tools@1.0.0');
  if (first.status !== 201) throw new Error(`victim's publish: ${first.text}`);
  const official = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'crypto-tools')}`, { official: true });
  if (official.status !== 201) throw new Error(`official import: ${official.text}`);
});
test.after.always(async () => {
  await svc?.close();
  await registry?.close();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

test.serial("a tarball that names another package is a 400 naming both; the victim's package does not change", async (t) => {
  const before = await recorded('victim-tools');
  await registry.add('attacker-tools', '1.0.1', await folder('victim-tools', '1.0.1', 'mallory'));
  const res = await publish(mallory, 'npm:attacker-tools@1.0.1');
  t.is(res.status, 400, res.text);
  t.is(res.body.error.code, 'VALIDATION_ERROR');
  t.regex(res.body.error.message, /attacker-tools@1\.0\.1 says it is victim-tools@1\.0\.1/);
  t.deepEqual(await recorded('victim-tools'), before, 'the victim keeps its latest, owner and versions');
  t.is((await recorded('attacker-tools')).p, undefined, 'nothing is recorded under either name');
  t.is((await run('victim-tools/echo')).body.result?.by, 'victim', 'unpinned calls still run the victim’s code');
});

test.serial('the same against an official package: its callers keep running the official code', async (t) => {
  const name = '@toolshed-examples/crypto-tools';
  const before = await recorded(name);
  await registry.add('crypto-tools-plus', '9.0.0', await folder(name, '9.0.0', 'mallory'));
  const renamed = await publish(mallory, 'npm:crypto-tools-plus@9.0.0');
  t.is(renamed.status, 400, renamed.text);
  t.regex(renamed.body.error.message, /says it is @toolshed-examples\/crypto-tools@9\.0\.0/);
  // Served under its own name, a higher version of the official package is still not a plain user's to record.
  await registry.add(name, '9.0.0', await folder(name, '9.0.0', 'mallory'));
  const direct = await publish(mallory, `npm:${name}@9.0.0`);
  t.is(direct.status, 403, direct.text);
  t.is(direct.body.error.code, 'FORBIDDEN');
  t.deepEqual(await recorded(name), before);
  t.true(before.p.official);
});

test.serial('the recorder checks the owner by the recorded name, not only the API: another user’s import is FORBIDDEN', async (t) => {
  await registry.add('victim-tools', '1.0.2', await folder('victim-tools', '1.0.2', 'mallory'));
  const before = await recorded('victim-tools');
  // The worker's own import, as the job runs it for a request the API let through (or the CLI, or a poll).
  const result = await importPackage(svc.worker!.deps, { source: 'npm:victim-tools@1.0.2', official: false, publishedBy: mallory.id });
  t.false(result.ok);
  t.like(result, { error: { code: 'FORBIDDEN' } });
  t.regex(!result.ok ? result.error.message : '', new RegExp(`belongs to the user ${victim.username}`));
  t.deepEqual(await recorded('victim-tools'), before);
});

test.serial("a tarball whose bytes are not the registry's dist.integrity is a 400 naming both; nothing is recorded", async (t) => {
  const claimed = `sha512-${Buffer.alloc(64, 7).toString('base64')}`;
  const real = await registry.add('liar-tools', '1.0.0', await folder('liar-tools', '1.0.0', 'mallory'), { integrity: claimed });
  const res = await publish(mallory, 'npm:liar-tools@1.0.0');
  t.is(res.status, 400, res.text);
  t.true(res.body.error.message.includes(claimed), res.body.error.message);
  t.true(res.body.error.message.includes(real), res.body.error.message);
  t.is((await recorded('liar-tools')).p, undefined);
});

test.serial('a recorded version never changes: other bytes for it are a 409, pinned calls run what was recorded', async (t) => {
  const before = await recorded('victim-tools');
  t.regex(before.versions[0].integrity, /^sha512-/, 'the version records the integrity of its tarball');
  t.true(
    before.versions[0].install_path.endsWith(Buffer.from(before.versions[0].integrity.slice(7), 'base64').toString('hex').slice(0, 16)),
    'the cache is named by it',
  );
  // The registry now serves other bytes as victim-tools@1.0.0 (a republish some registries allow).
  await registry.add('victim-tools', '1.0.0', await folder('victim-tools', '1.0.0', 'mallory'));
  const byAdmin = await svc.request('POST', '/api/admin/packages', { headers: admin(), body: { source: 'npm:victim-tools@1.0.0' } });
  t.is(byAdmin.status, 409, byAdmin.text);
  t.is(byAdmin.body.error.code, 'CONFLICT');
  t.regex(byAdmin.body.error.message, /victim-tools@1\.0\.0 is recorded already from other bytes/);
  // The owner's publish of that exact version answers from the record, without fetching anything.
  const byOwner = await publish(victim, 'npm:victim-tools@1.0.0');
  t.is(byOwner.status, 201, byOwner.text);
  t.is(byOwner.body.data.importId, null);
  // An import that does fetch them for the owner (a range resolved by a poll, the CLI) is refused the same way.
  const fetched = await importPackage(svc.worker!.deps, { source: 'npm:victim-tools@1.0.0', official: false, publishedBy: victim.id });
  t.like(fetched, { ok: false, error: { code: 'CONFLICT' } });
  t.deepEqual(await recorded('victim-tools'), before, 'nothing changed');
  t.is((await run('victim-tools@1.0.0::echo')).body.result?.by, 'victim');
});

test.serial('a run refuses an install whose marker names other bytes than the recorded version', async (t) => {
  const { versions } = await recorded('victim-tools');
  const marker = path.join(versions[0].install_path, '.toolshed-installed');
  const original = await fs.readFile(marker, 'utf8');
  await fs.writeFile(marker, JSON.stringify({ integrity: `sha512-${Buffer.alloc(64, 9).toString('base64')}` }));
  try {
    const res = await run('victim-tools@1.0.0::echo');
    t.false(res.body.success, res.text);
    t.regex(res.body.error?.message ?? '', /not the one recorded for this version/);
    const execution = await svc.request('GET', `/api/executions/${res.body.executionId}`);
    t.is(execution.body.data.status, 'failed', 'the execution is recorded as failed, its tool not run');
  } finally {
    await fs.writeFile(marker, original);
  }
  t.is((await run('victim-tools@1.0.0::echo')).body.result?.by, 'victim', 'the recorded install runs again');
});

test.serial('two users publishing a new name at once: one owns it, the other is refused, one version is recorded', async (t) => {
  await registry.add('contested-tools', '1.0.0', await folder('contested-tools', '1.0.0', 'either'));
  const [a, b] = await Promise.all([publish(victim, 'npm:contested-tools@1.0.0'), publish(mallory, 'npm:contested-tools@1.0.0')]);
  const statuses = [a.status, b.status].sort();
  t.true(statuses[0] === 201 && (statuses[1] === 403 || statuses[1] === 201), `${a.status} ${a.text.slice(0, 200)} / ${b.status} ${b.text.slice(0, 200)}`);
  const { p, versions } = await recorded('contested-tools');
  t.is(versions.length, 1);
  const winner = a.status === 201 && b.status !== 201 ? victim : b.status === 201 && a.status !== 201 ? mallory : undefined;
  // Both 201 is the second answered from the first's record (its version known): only if both are the same owner.
  t.not(winner, undefined, 'exactly one publish succeeds');
  t.is(p.published_by, winner!.id);
});

test.serial('the admin transfers a name: the new owner publishes, the old one is refused', async (t) => {
  const noSuch = await svc.request('POST', '/api/admin/packages/victim-tools/transfer', { headers: admin(), body: { to: 'nobody-here' } });
  t.is(noSuch.status, 404);
  t.is((await svc.request('POST', '/api/admin/packages/victim-tools/transfer', { key: mallory.key, body: { to: mallory.username } })).status, 401);
  const moved = await svc.request('POST', '/api/admin/packages/victim-tools/transfer', { headers: admin(), body: { to: mallory.username } });
  t.is(moved.status, 200, moved.text);
  t.deepEqual(moved.body.data, { name: 'victim-tools', publisher: mallory.username });
  await registry.add('victim-tools', '1.1.0', await folder('victim-tools', '1.1.0', 'mallory'));
  t.is((await publish(victim, 'npm:victim-tools@1.1.0')).status, 403);
  const res = await publish(mallory, 'npm:victim-tools@1.1.0');
  t.is(res.status, 201, res.text);
  t.is((await run('victim-tools/echo')).body.result?.by, 'mallory');
  t.is((await run('victim-tools@1.0.0::echo')).body.result?.by, 'victim', 'the versions recorded before keep their bytes');
});

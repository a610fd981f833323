/**
 * The parameters field end to end on Postgres: listSearchDocuments turns a tool's input schema into the document's
 * `parameters` text, the search sync indexes it at start and re-reads it when a re-import changes the schema.
 */
import test from 'ava';
import { createDb } from '../core/infra/db.js';
import { createLogger } from '../core/infra/logger.js';
import { createNotifier } from '../core/infra/notify.js';
import { upsertTool } from '../core/repos/packages.js';
import { listSearchDocuments } from '../core/repos/tools.js';
import { createEmbeddedSearch } from '../core/search/embedded.js';
import { startSearchSync } from '../core/search/sync.js';
import { createTestDatabase } from './helpers/postgres.js';
import { settle } from './helpers/wait.js';

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

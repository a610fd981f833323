/**
 * The Meilisearch engine against a real server, with the same behaviour checks as the embedded engine. Needs
 * MEILI_HOST (and MEILI_API_KEY if the server has a master key); without it the file says so and runs nothing else.
 * Each check gets its own index, deleted afterwards.
 */
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { createMeiliSearch } from '../core/search/meilisearch.js';
import { BEHAVIOUR_DOCS, registerEngineBehaviour } from './fixtures/search/engine-behaviour.js';

const host = process.env.MEILI_HOST;
const apiKey = process.env.MEILI_API_KEY || undefined;

if (!host) {
  // Reported as skipped (not passed): nothing was checked against Meilisearch on this machine.
  test.skip('Meilisearch engine tests (MEILI_HOST not set: no Meilisearch server to test against)', () => undefined);
} else {
  const created: string[] = [];

  registerEngineBehaviour(test, 'meilisearch', async () => {
    const indexName = `toolshed_test_${randomUUID().slice(0, 8)}`;
    created.push(indexName);
    const engine = createMeiliSearch({ host, apiKey, indexName });
    await engine.replaceAll(BEHAVIOUR_DOCS);
    return engine;
  });

  test('meilisearch: status() reports the server healthy with its document count', async (t) => {
    const indexName = `toolshed_test_${randomUUID().slice(0, 8)}`;
    created.push(indexName);
    const engine = createMeiliSearch({ host, apiKey, indexName });
    await engine.upsert(BEHAVIOUR_DOCS);
    const status = await engine.status();
    t.true(status.ok);
    t.is(status.engine, 'meilisearch');
    t.is(status.documents, BEHAVIOUR_DOCS.length);
  });

  test('meilisearch: status() reports an unreachable server as not ok', async (t) => {
    const status = await createMeiliSearch({ host: 'http://127.0.0.1:9', indexName: 'unused' }).status();
    t.false(status.ok);
    t.truthy(status.detail);
  });

  test.after.always('delete the test indexes', async () => {
    const headers: Record<string, string> = apiKey ? { Authorization: `Bearer ${apiKey}` } : {};
    const base = host.startsWith('http') ? host : `http://${host}`;
    await Promise.all(created.map((uid) => fetch(`${base.replace(/\/$/, '')}/indexes/${uid}`, { method: 'DELETE', headers }).catch(() => undefined)));
  });
}

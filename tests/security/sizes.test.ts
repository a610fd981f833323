import test from 'ava';
import path from 'node:path';
import { countTokens, TOKEN_MEMO_MAX_BYTES, tokenMemoBytes } from '../../core/text/tokens.js';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from '../helpers/service.js';

// What one caller can make the service store or keep in memory is bounded: tool descriptions, collections per user,
// tools per collection, and the token-count memo.
let svc: Service;
const TEXT = '@toolshed-examples/text-tools';

test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { MAX_COLLECTIONS_PER_USER: '3', MAX_TOOLS_PER_COLLECTION: '2' } });
  const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, 'text-tools')}`);
  if (res.status !== 201) throw new Error(res.text);
});
test.after.always(() => svc?.close());

const count = async (table: string, where: Record<string, unknown> = {}) => Number((await svc.api.deps.db(table).where(where).count('* as n'))[0].n);

test('a package whose tool has a 900,000-character description is refused at import (400), and nothing is recorded', async (t) => {
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'huge-description')}`);
  t.is(res.status, 400, res.text.slice(0, 500));
  t.is(res.body.error.code, 'VALIDATION_ERROR');
  t.deepEqual(
    res.body.error.details.map((d: { path: string }) => d.path),
    ['tools.huge.description'],
  );
  t.regex(res.body.error.message, /at most 10000 characters: huge has 900000/);
  t.is(await count('packages', { name: '@fixtures/huge-description' }), 0);
  const list = await svc.request('GET', '/api/tools?limit=100');
  t.false(list.text.includes('spam spam'), 'the list carries no part of it');
});

test('a user may own MAX_COLLECTIONS_PER_USER collections; the next is a 409, even in a parallel burst', async (t) => {
  const user = await svc.createUser();
  const create = (i: number) => svc.request('POST', '/api/collections', { key: user.key, body: { name: `Mine ${i}` } });
  const burst = await Promise.all(Array.from({ length: 6 }, (_, i) => create(i)));
  t.is(burst.filter((r) => r.status === 201).length, 3, burst.map((r) => r.status).join(','));
  const refused = burst.filter((r) => r.status !== 201);
  t.true(
    refused.every((r) => r.status === 409 && r.body.error.code === 'CONFLICT'),
    refused.map((r) => r.text).join('\n'),
  );
  t.regex(refused[0].body.error.message, /at most 3 collections/);
  t.is(await count('collections', { owner_id: user.id }), 3);
  // Deleting one makes room again.
  const mine = burst.find((r) => r.status === 201)!.body.data.uid;
  t.is((await svc.request('DELETE', `/api/collections/${mine}`, { key: user.key })).status, 200);
  t.is((await create(9)).status, 201);
});

test('a collection may hold MAX_TOOLS_PER_COLLECTION tools; the next add is a 409, even in a parallel burst', async (t) => {
  const user = await svc.createUser();
  const c = await svc.createCollection(user.key, { name: 'Full one' });
  const tools = ['slugify', 'convertCase', 'textStatistics', 'diffText'].map((n) => `${TEXT}/${n}`);
  const burst = await Promise.all(tools.map((toolId) => svc.request('POST', `/api/collections/${c.uid}/tools`, { key: user.key, body: { toolId } })));
  t.is(burst.filter((r) => r.status === 201).length, 2, burst.map((r) => r.text).join('\n'));
  const refused = burst.filter((r) => r.status !== 201);
  t.true(
    refused.every((r) => r.status === 409 && /at most 2 tools/.test(r.body.error.message)),
    refused.map((r) => r.text).join('\n'),
  );
  t.is(await count('collection_tools', { collection_id: c.id }), 2);
  const detail = await svc.request('GET', `/api/collections/${c.uid}`, { key: user.key });
  t.is(detail.body.data.tools.length, 2);
});

test('the token-count memo is bounded by bytes, not entries: 20 MB of distinct definitions leave it within its bound', (t) => {
  for (let i = 0; i < 200; i++) countTokens(`${i} ${'abc '.repeat(25_000)}`);
  t.true(tokenMemoBytes() <= TOKEN_MEMO_MAX_BYTES, `${tokenMemoBytes()} bytes`);
  t.true(tokenMemoBytes() > TOKEN_MEMO_MAX_BYTES / 2, 'it still memoises');
  t.is(countTokens('abc abc'), countTokens('abc abc'));
});

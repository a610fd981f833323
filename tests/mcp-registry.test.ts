/**
 * The MCP Registry v0.1 read API (api/registry/routes.ts), checked against the official registry's own OpenAPI document
 * (tests/fixtures/mcp-registry/openapi.yaml): every response body is validated with its schemas.
 */
import test from 'ava';
import fs from 'node:fs/promises';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Validator } from '@seriousme/openapi-schema-validator';
import { createDb } from '../core/infra/db.js';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { createTestDatabase } from './helpers/postgres.js';

type User = { key: string; id: string; username: string };
let svc: Service;
let ada: User;
let bob: User;
let openapi: Record<string, any>;
let serverList: ValidateFunction;
let serverResponse: ValidateFunction;
const NS = 'tools.example.test';
const RDNS = 'test.example.tools';
const META = `${RDNS}/toolshed`;
const TEXT = '@toolshed-examples/text-tools';
const SIGNER = '@toolshed-examples/webhook-signer';

test.before(async () => {
  openapi = parseYaml(await fs.readFile(path.join(FIXTURES_DIR, 'mcp-registry', 'openapi.yaml'), 'utf8'));
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  (addFormats as unknown as (a: Ajv2020) => void)(ajv);
  ajv.addSchema(openapi, 'registry');
  serverList = ajv.getSchema('registry#/components/schemas/ServerList')!;
  serverResponse = ajv.getSchema('registry#/components/schemas/ServerResponse')!;
  svc = await startService({ sandbox: 'process', env: { REGISTRY_NAMESPACE: NS } });
  for (const dir of ['text-tools', 'webhook-signer']) {
    const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, dir)}`);
    if (res.status !== 201) throw new Error(`import ${dir}: ${res.text}`);
  }
  ada = await svc.createUser({ username: 'ada' });
  bob = await svc.createUser({ username: 'bob' });
});
test.after.always(() => svc?.close());

const makeCollection = (owner: User, body: Record<string, unknown>, toolRefs: string[] = []) => svc.createCollection(owner.key, body, toolRefs);

const enc = (name: string) => encodeURIComponent(name);
const valid = (t: any, fn: ValidateFunction, body: unknown, what: string) => {
  const ok = fn(body);
  t.true(ok, `${what}: ${JSON.stringify(fn.errors?.slice(0, 3))} ${JSON.stringify(body).slice(0, 400)}`);
};

test('the fixture is a valid OpenAPI 3.1 document with the three v0.1 read operations', async (t) => {
  // Upstream's document carries a top-level `$id`, which the OpenAPI 3.1 meta-schema does not allow; the rest is valid.
  const { $id, ...document } = openapi;
  t.is(typeof $id, 'string');
  const result = await new Validator().validate(document);
  t.true(result.valid, JSON.stringify(result.errors ?? null).slice(0, 500));
  for (const p of ['/v0.1/servers', '/v0.1/servers/{serverName}/versions', '/v0.1/servers/{serverName}/versions/{version}']) {
    t.truthy(openapi.paths[p]?.get, p);
  }
});

test('a collection is a server: name, remote, headers, version, ≤100-character description, Toolshed meta', async (t) => {
  const long = `Slugs and signatures. ${'A very long description that keeps going. '.repeat(5)}`;
  const c = await makeCollection(ada, { name: 'Writer kit', uid: 'writer-kit', description: long }, [`${TEXT}::slugify`, `${SIGNER}::signPayload`]);
  const name = `${RDNS}/ada.writer-kit`;
  const res = await svc.request('GET', `/v0.1/servers/${enc(name)}/versions/latest`);
  t.is(res.status, 200, res.text);
  valid(t, serverResponse, res.body, 'ServerResponse');
  const { server, _meta } = res.body;
  t.is(server.name, name);
  t.is(server.title, 'Writer kit');
  t.true(server.description.length <= 100);
  t.true(server.description.startsWith('Slugs and signatures.'));
  t.regex(server.version, /^1\.0\.\d+$/);
  t.is(server.remotes.length, 1);
  const remote = server.remotes[0];
  t.is(remote.type, 'streamable-http');
  t.is(remote.url, `${svc.url}/api/mcp/ada/writer-kit/mcp`);
  const auth = remote.headers.find((h: any) => h.name === 'Authorization');
  t.like(auth, { isSecret: true, isRequired: false });
  const secretHeader = remote.headers.find((h: any) => h.name === 'X-Tool-Env-WEBHOOK_SECRET');
  // Only signPayload needs it: a client without it still uses slugify (issue 44 item 3), and the entry says which tool.
  t.like(secretHeader, { isSecret: true, isRequired: false });
  t.regex(secretHeader.description, /needed by signPayload only/);

  const meta = _meta[META];
  t.like(meta, { status: 'active', isLatest: true, toolCount: 2, tokenEncoding: 'o200k_base' });
  t.deepEqual(meta.requiredEnv, ['WEBHOOK_SECRET']);
  t.is(meta.collection.id, c.id);
  t.is(meta.scenarios.scenarios, 0);
  t.is(meta.scenarios.passRate, null);
  t.true(['HEALTHY', 'BROKEN', 'UNKNOWN'].includes(meta.health.status));
  t.deepEqual(meta.tools.map((x: any) => x.name).sort(), ['signPayload', 'slugify']);
  const slugify = meta.tools.find((x: any) => x.name === 'slugify');
  const detail = (await svc.request('GET', `/api/tools/${TEXT}/slugify`)).body.data;
  t.deepEqual(slugify.inputSchema, detail.inputSchema);
  t.true(slugify.tokenCount > 10);
  t.true(meta.tokenCount > slugify.tokenCount, 'the listing weighs more than one of its tools');
  // The same weights in the REST API (additive fields), and the permissions and annotations as served over MCP.
  t.is(detail.tokenCount, slugify.tokenCount);
  const col = (await svc.request('GET', '/api/collections/writer-kit', { key: ada.key })).body.data;
  t.is(col.tokenCount, meta.tokenCount);
  t.deepEqual(slugify.annotations, { readOnlyHint: true, idempotentHint: true, openWorldHint: false }, 'what its manifest declares, no more');
  t.like(
    meta.tools.find((x: any) => x.name === 'signPayload'),
    { permissions: { secrets: ['WEBHOOK_SECRET'] }, requiredEnv: ['WEBHOOK_SECRET'] },
  );
  t.is(meta.publishedAt, new Date(meta.publishedAt).toISOString());
});

test('versions: the list holds the latest; an exact version, `latest`, an unknown version, unknown servers', async (t) => {
  await makeCollection(ada, { name: 'Versioned', uid: 'versioned' }, [`${TEXT}::slugify`]);
  const name = `${RDNS}/ada.versioned`;
  const list = await svc.request('GET', `/v0.1/servers/${enc(name)}/versions`);
  t.is(list.status, 200);
  valid(t, serverList, list.body, 'ServerList');
  t.is(list.body.servers.length, 1);
  t.is(list.body.metadata.count, 1);
  const version = list.body.servers[0].server.version;
  const exact = await svc.request('GET', `/v0.1/servers/${enc(name)}/versions/${enc(version)}`);
  t.is(exact.status, 200);
  t.deepEqual(exact.body, list.body.servers[0]);
  // The name's slash may also come unencoded; the username is matched case-insensitively.
  t.is((await svc.request('GET', `/v0.1/servers/${name}/versions/latest`)).status, 200);
  t.is((await svc.request('GET', `/v0.1/servers/${enc(`${RDNS}/ADA.versioned`)}/versions/latest`)).status, 200);

  for (const [p, status] of [
    [`/v0.1/servers/${enc(name)}/versions/9.9.9`, 404],
    [`/v0.1/servers/${enc(`${RDNS}/ada.nope`)}/versions`, 404],
    [`/v0.1/servers/${enc(`com.other/ada.versioned`)}/versions/latest`, 404],
    [`/v0.1/servers/${enc(`${RDNS}/adaversioned`)}/versions/latest`, 404],
  ] as const) {
    const res = await svc.request('GET', p);
    t.is(res.status, status, p);
    t.is(typeof res.body.error, 'string', p);
  }
});

test('the revision (version) changes with the collection and its tools, not with likes', async (t) => {
  const c = await makeCollection(ada, { name: 'Moving', uid: 'moving' }, [`${TEXT}::slugify`]);
  const name = enc(`${RDNS}/ada.moving`);
  const read = async () => (await svc.request('GET', `/v0.1/servers/${name}/versions/latest`)).body;
  const v = async () => (await read()).server.version as string;
  const seen = [await v()];
  await svc.request('POST', `/api/collections/${c.uid}/like`, { key: bob.key });
  t.is(await v(), seen[0], 'a like is not a new version');
  await svc.request('PATCH', `/api/collections/${c.uid}`, { key: ada.key, body: { description: 'Now with a description' } });
  seen.push(await v());
  await svc.request('POST', `/api/collections/${c.uid}/tools`, { key: ada.key, body: { toolId: `${SIGNER}::signPayload` } });
  seen.push(await v());
  const signer = (await svc.request('GET', `/api/tools/${SIGNER}/signPayload`)).body.data;
  await svc.request('DELETE', `/api/collections/${c.uid}/tools/${signer.id}`, { key: ada.key });
  seen.push(await v());
  t.is(new Set(seen).size, 4, `versions: ${seen.join(', ')}`);
  const revs = seen.map((s) => Number(s.split('.')[2]));
  t.deepEqual(
    revs,
    [...revs].sort((a, b) => a - b),
    'increasing',
  );
  // A tool's definition changing (as a package re-import does) bumps every collection holding it.
  const db = createDb(svc.databaseUrl, { max: 1 });
  try {
    const before = await v();
    await db('tools').where({ id: signer.id }).update({ description: 'changed' });
    t.is(await v(), before, 'a tool the collection no longer holds');
    const slug = (await svc.request('GET', `/api/tools/${TEXT}/slugify`)).body.data;
    const oldDescription = slug.description;
    await db('tools').where({ id: slug.id }).update({ health_status: 'HEALTHY', execution_count: 99 });
    t.is(await v(), before, 'health and counters are not a new version');
    await db('tools')
      .where({ id: slug.id })
      .update({ description: `${oldDescription} ` });
    t.not(await v(), before);
    await db('tools').where({ id: slug.id }).update({ description: oldDescription });
  } finally {
    await db.destroy();
  }
  // Deleting the collection (its tools rows cascade through the trigger) works and the server is gone.
  t.is((await svc.request('DELETE', `/api/collections/${c.uid}`, { key: ada.key })).status, 200);
  t.is((await svc.request('GET', `/v0.1/servers/${name}/versions`)).status, 404);
});

test('private collections: hidden from others, listed for their owner with the Authorization header required', async (t) => {
  await makeCollection(bob, { name: 'Bob secret', uid: 'bob-secret', isPublic: false }, [`${TEXT}::slugify`]);
  const name = enc(`${RDNS}/bob.bob-secret`);
  t.is((await svc.request('GET', `/v0.1/servers/${name}/versions/latest`)).status, 404);
  t.is((await svc.request('GET', `/v0.1/servers/${name}/versions/latest`, { key: ada.key })).status, 404);
  const own = await svc.request('GET', `/v0.1/servers/${name}/versions/latest`, { key: bob.key });
  t.is(own.status, 200);
  valid(t, serverResponse, own.body, 'ServerResponse');
  t.like(
    own.body.server.remotes[0].headers.find((h: any) => h.name === 'Authorization'),
    { isRequired: true, isSecret: true },
  );
  const anon = await svc.request('GET', `/v0.1/servers?search=bob-secret`);
  t.is(anon.body.servers.length, 0);
  const mine = await svc.request('GET', `/v0.1/servers?search=bob-secret`, { key: bob.key });
  t.is(mine.body.servers.length, 1);
});

test("bad query parameters are 400s in the registry's { error } shape", async (t) => {
  for (const q of [
    'limit=0',
    'limit=abc',
    'limit=-3',
    'cursor=nonsense',
    'updated_since=yesterday',
    'updated_since=2025-13-45T00:00:00Z',
    // Dates that Date.parse rolls over: not instants anybody wrote.
    'updated_since=2020-02-31T00:00:00Z',
    'updated_since=2021-02-29T00:00:00Z',
    'updated_since=2020-01-01T24:00:00Z',
    // Refused before the handler (a NUL, a broken escape): still the registry's shape.
    'search=%00',
    'search=%E0%A4%A',
  ]) {
    const res = await svc.request('GET', `/v0.1/servers?${q}`);
    t.is(res.status, 400, q);
    t.is(typeof res.body.error, 'string', q);
  }
  const clamped = await svc.request('GET', '/v0.1/servers?limit=100000');
  t.is(clamped.status, 200);
  t.true(clamped.body.servers.length <= 100);
});

test('cursor paging and updated_since over a few hundred collections', async (t) => {
  const owner = await svc.createUser({ username: 'bulkowner' });
  const db = createDb(svc.databaseUrl, { max: 2 });
  const base = Date.parse('2024-01-01T00:00:00Z');
  const N = 320;
  const rows = Array.from({ length: N }, (_, i) => ({
    uid: `bulk-${String(i).padStart(3, '0')}`,
    owner_id: owner.id,
    name: `Bulk ${i}`,
    description: i % 2 ? `Bulk collection number ${i}` : null,
    is_public: i % 10 !== 9,
    created_at: new Date(base),
    updated_at: new Date(base + i * 1000),
  }));
  try {
    await db.batchInsert('collections', rows, 100);
  } finally {
    await db.destroy();
  }
  const publicUids = Array.from({ length: N }, (_, i) => i)
    .filter((i) => i % 10 !== 9)
    .map((i) => `bulk-${String(i).padStart(3, '0')}`);

  async function walk(query: string, limit: number, key?: string) {
    const names: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const res = await svc.request('GET', `/v0.1/servers?${query}&limit=${limit}${cursor ? `&cursor=${enc(cursor)}` : ''}`, { key });
      t.is(res.status, 200, res.text);
      valid(t, serverList, res.body, `ServerList page ${pages}`);
      t.is(res.body.metadata.count, res.body.servers.length);
      t.true(res.body.servers.length <= limit);
      names.push(...res.body.servers.map((s: any) => s.server.name));
      cursor = res.body.metadata.nextCursor;
      pages++;
      if (cursor) t.is(res.body.servers.length, limit, 'only the last page is short');
    } while (cursor && pages < 100);
    return { names, pages };
  }

  const all = await walk('search=bulkowner', 37);
  t.is(all.names.length, publicUids.length);
  t.is(new Set(all.names).size, all.names.length, 'no server twice');
  t.deepEqual(
    all.names,
    publicUids.map((u) => `${RDNS}/bulkowner.${u}`),
    'in name order, private ones left out',
  );
  t.is(all.pages, Math.ceil(publicUids.length / 37));

  // Their owner, with a key, walks every one of them, the private ones in their places in name order; another user
  // with a key walks the public ones only.
  const allUids = rows.map((r) => r.uid);
  const owned = await walk('search=bulkowner', 37, owner.key);
  t.deepEqual(
    owned.names,
    allUids.map((u) => `${RDNS}/bulkowner.${u}`),
    'in name order, private ones included',
  );
  t.is(owned.pages, Math.ceil(N / 37));
  t.deepEqual((await walk('search=bulkowner', 37, ada.key)).names, all.names, 'another user sees the public ones only');

  // updated_since is exclusive: rows updated strictly after it.
  const since = new Date(base + 199_500).toISOString();
  const recent = await walk(`search=bulkowner&updated_since=${enc(since)}`, 25);
  const expected = publicUids.filter((u) => Number(u.slice(5)) >= 200);
  t.deepEqual(
    recent.names,
    expected.map((u) => `${RDNS}/bulkowner.${u}`),
  );

  // A change after that moment brings an older collection back into the window.
  await svc.request('PATCH', '/api/collections/bulk-003', { key: owner.key, body: { name: 'Bulk three, renamed' } });
  const again = await walk(`search=bulkowner&updated_since=${enc(since)}`, 100);
  t.true(again.names.includes(`${RDNS}/bulkowner.bulk-003`));
  t.is(again.names.length, expected.length + 1);

  // version=latest is every server; an exact version filters; across all owners the list pages the same way.
  const v1 = await svc.request('GET', `/v0.1/servers?search=bulkowner&version=1.0.1&limit=100`);
  t.is(v1.body.servers.length, 100);
  t.false(v1.body.servers.some((s: any) => s.server.name.endsWith('bulk-003')));
  const whole = await walk('version=latest', 100);
  t.true(whole.names.length >= publicUids.length);
  const key = (n: string) => {
    const [user, uid] = n.slice(RDNS.length + 1).split(/\.(.*)/s);
    return [user.toLowerCase(), uid];
  };
  const byKey = (a: string, b: string) => {
    const [x, y] = [key(a), key(b)];
    return x[0] !== y[0] ? (x[0] < y[0] ? -1 : 1) : x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0;
  };
  t.deepEqual(whole.names, [...whole.names].sort(byKey), 'in (username, uid) order');
});

test("this issue's migrations roll back and forward (revision triggers, tool declarations, MCP mode)", async (t) => {
  const database = await createTestDatabase();
  const db = createDb(database.url, { max: 2 });
  const columns = async (table: string) =>
    (await db.raw(`select column_name from information_schema.columns where table_name = ?`, [table])).rows.map((r: { column_name: string }) => r.column_name);
  try {
    await db.migrate.rollback(undefined, true);
    await db.migrate.latest();
    t.true((await columns('collections')).includes('revision'));
    t.true((await columns('collections')).includes('mcp_mode'));
    t.true((await columns('tools')).includes('permissions'));
    // The triggers work after a round trip: a rename is a new revision.
    const [user] = await db('users').insert({ username: 'roundtrip' }).returning('id');
    const [c] = await db('collections').insert({ uid: 'round-trip', owner_id: user.id, name: 'Round trip' }).returning(['id', 'revision']);
    await db('collections').where({ id: c.id }).update({ name: 'Renamed' });
    t.is((await db('collections').where({ id: c.id }).first()).revision, c.revision + 1);
    await db('collections').where({ id: c.id }).update({ like_count: 5 });
    t.is((await db('collections').where({ id: c.id }).first()).revision, c.revision + 1, 'a counter is not a revision');
  } finally {
    await db.destroy();
    await database.drop();
  }
});

test('descriptions are cut to 100 characters between characters, never inside an emoji; versions are exact', async (t) => {
  await makeCollection(ada, { name: 'Emoji kit', uid: 'emoji-kit', description: 'ab😀'.repeat(60) }, [`${TEXT}::slugify`]);
  const name = `${RDNS}/ada.emoji-kit`;
  const res = await svc.request('GET', `/v0.1/servers/${enc(name)}/versions/latest`);
  const d: string = res.body.server.description;
  t.true(d.length <= 100);
  t.true(d.endsWith('…'));
  t.false(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(d), 'no half of a surrogate pair');
  t.true(res.text.includes('😀…') || res.text.includes('b…'), d.slice(-4));
  const version: string = res.body.server.version;
  const padded = version.replace(/\.(\d+)$/, '.0$1');
  const listed = await svc.request('GET', `/v0.1/servers?search=emoji&version=${padded}`);
  t.is(listed.body.servers.length, 0, `${padded} is not ${version}`);
  t.is((await svc.request('GET', `/v0.1/servers/${enc(name)}/versions/${padded}`)).status, 404);
  t.is((await svc.request('GET', `/v0.1/servers?search=emoji&version=${version}`)).body.servers.length, 1);
});

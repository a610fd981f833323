import test from 'ava';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';

// The authorization matrix: anonymous / another user / the admin token / the owner, against every write and every
// private read. Refusals change nothing, which the last test checks by reading everything back. The admin token is
// the operator's, not a user's: it opens the admin routes only, and reads like an anonymous caller elsewhere.
let svc: Service;
let owner: { id: string; username: string; key: string };
let other: { id: string; username: string; key: string };
const ids: Record<string, string> = {};
const TOOL = '@fixtures/nul-tools/slow';

test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { SCENARIO_DAILY_QUOTA: '100' } });
  const imp = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'nul-tools')}`);
  if (imp.status !== 201) throw new Error(imp.text);
  owner = await svc.createUser({ tier: 'pro' });
  other = await svc.createUser({ tier: 'pro' });
  const k = owner.key;
  const must = async (res: Promise<{ status: number; body: any; text: string }>, status: number) => {
    const r = await res;
    if (r.status !== status) throw new Error(`setup: ${r.status} ${r.text}`);
    return r.body;
  };
  await must(svc.request('POST', '/api/collections', { key: k, body: { name: 'Private', uid: 'mx-private', isPublic: false } }), 201);
  await must(svc.request('POST', '/api/collections', { key: k, body: { name: 'Public', uid: 'mx-public', isPublic: true } }), 201);
  for (const uid of ['mx-private', 'mx-public']) await must(svc.request('POST', `/api/collections/${uid}/tools`, { key: k, body: { toolId: TOOL } }), 201);
  const pub = await must(svc.request('GET', '/api/collections/mx-public', { key: k }), 200);
  const priv = await must(svc.request('GET', '/api/collections/mx-private', { key: k }), 200);
  ids.publicCollection = pub.data.id;
  ids.privateCollection = priv.data.id;
  const prompt = 'Wait for 5 milliseconds and tell me how long you waited.';
  ids.publicScenario = (await must(svc.request('POST', '/api/scenarios', { key: k, body: { collectionId: ids.publicCollection, prompt } }), 201)).data.id;
  ids.privateScenario = (await must(svc.request('POST', '/api/scenarios', { key: k, body: { collectionId: ids.privateCollection, prompt } }), 201)).data.id;
  ids.privateRun =
    (await must(svc.request('POST', `/api/scenarios/${ids.privateScenario}/run?wait=false`, { key: k }), 202)).data?.runId ??
    (await svc.api.deps.db('scenario_runs').where({ scenario_id: ids.privateScenario }).first()).id;
  ids.agent = (await must(svc.request('POST', '/api/agents', { key: k, body: { name: 'Mine', collectionIds: [ids.privateCollection] } }), 201)).data.id;
  ids.execution = (await must(svc.request('POST', `/api/tools/execute/${TOOL}?wait=false`, { key: k, body: { params: { ms: 1 } } }), 202)).data.executionId;
  ids.key = (await must(svc.request('GET', '/api/keys', { key: k }), 200)).data[0].id;
  // The owner published the fixture package, and has an import of theirs (set here: a real npm import is slow).
  await svc.api.deps.db('packages').where({ name: '@fixtures/nul-tools' }).update({ published_by: owner.id });
  ids.import = (await svc.api.deps.db('package_imports').insert({ source: 'npm:@fixtures/nul-tools@1.0.0', requested_by: owner.id }).returning('id'))[0].id;
});
test.after.always(() => svc?.close());

type Actor = 'anonymous' | 'other' | 'admin';
const auth = (a: Actor): string | undefined => (a === 'anonymous' ? undefined : a === 'other' ? other.key : svc.config.ADMIN_TOKEN);

interface Case {
  method: string;
  path: () => string;
  body?: () => unknown;
  /** What each non-owner actor must get. */
  expect: Record<Actor, number>;
}

const W = (anonymous: number, otherUser: number): Record<Actor, number> => ({ anonymous, other: otherUser, admin: 401 });
const CASES: Case[] = [
  { method: 'GET', path: () => '/api/collections/mx-private', expect: { anonymous: 404, other: 404, admin: 404 } },
  { method: 'PATCH', path: () => '/api/collections/mx-private', body: () => ({ name: 'pwned' }), expect: W(401, 404) },
  { method: 'PATCH', path: () => '/api/collections/mx-public', body: () => ({ name: 'pwned', isPublic: false }), expect: W(401, 403) },
  { method: 'POST', path: () => '/api/collections/mx-public/tools', body: () => ({ toolId: '@fixtures/nul-tools/nulOutput' }), expect: W(401, 403) },
  { method: 'DELETE', path: () => `/api/collections/mx-public/tools/${TOOL}`, expect: W(401, 403) },
  { method: 'DELETE', path: () => '/api/collections/mx-public', expect: W(401, 403) },
  { method: 'DELETE', path: () => '/api/collections/mx-private', expect: W(401, 404) },
  { method: 'POST', path: () => '/api/collections/mx-private/like', expect: W(401, 404) },
  // Accepting a held version's notice (issue 43 item 3) is the owner's change.
  {
    method: 'POST',
    path: () => '/api/collections/mx-public/notices/accept',
    body: () => ({ package: '@fixtures/nul-tools', to: '1.0.0' }),
    expect: W(401, 403),
  },
  {
    method: 'POST',
    path: () => '/api/collections/mx-private/notices/accept',
    body: () => ({ package: '@fixtures/nul-tools', to: '1.0.0' }),
    expect: W(401, 404),
  },
  // Without credentials a private collection is 401 with the OAuth challenge (as an unknown one is); 404 to others.
  { method: 'GET', path: () => `/api/mcp/${owner.username}/mx-private/http`, expect: { anonymous: 401, other: 404, admin: 404 } },
  {
    method: 'POST',
    path: () => `/api/mcp/${owner.username}/mx-private/http`,
    body: () => ({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    expect: { anonymous: 401, other: 404, admin: 404 },
  },
  { method: 'GET', path: () => '/api/collections/mx-private/scenarios', expect: { anonymous: 404, other: 404, admin: 404 } },
  { method: 'GET', path: () => '/api/collections/mx-private/scenario-batches', expect: { anonymous: 404, other: 404, admin: 404 } },
  {
    method: 'POST',
    path: () => '/api/scenarios',
    body: () => ({ collectionId: ids.publicCollection, prompt: 'A scenario planted by someone else entirely.' }),
    expect: W(401, 403),
  },
  {
    method: 'POST',
    path: () => '/api/scenarios',
    body: () => ({ collectionId: ids.privateCollection, prompt: 'A scenario planted by someone else entirely.' }),
    expect: W(401, 404),
  },
  { method: 'PATCH', path: () => `/api/scenarios/${ids.publicScenario}`, body: () => ({ name: 'pwned' }), expect: W(401, 403) },
  { method: 'DELETE', path: () => `/api/scenarios/${ids.publicScenario}`, expect: W(401, 403) },
  { method: 'GET', path: () => `/api/scenarios/${ids.privateScenario}`, expect: { anonymous: 404, other: 404, admin: 404 } },
  { method: 'POST', path: () => `/api/scenarios/${ids.privateScenario}/run?wait=false`, expect: W(401, 404) },
  { method: 'GET', path: () => `/api/scenarios/${ids.privateScenario}/runs`, expect: { anonymous: 404, other: 404, admin: 404 } },
  { method: 'GET', path: () => `/api/scenario-runs/${ids.privateRun}`, expect: { anonymous: 404, other: 404, admin: 404 } },
  // Anyone with a key may run a public collection's scenarios, on their own quota; their runs do not move the
  // scenario's public statistics (tests/security/leaks*.test.ts).
  { method: 'POST', path: () => '/api/collections/mx-public/scenarios/run-all', expect: W(401, 202) },
  { method: 'POST', path: () => '/api/collections/mx-private/scenarios/run-all', expect: W(401, 404) },
  { method: 'POST', path: () => '/api/collections/mx-public/scenarios/generate', body: () => ({ count: 1 }), expect: W(401, 403) },
  {
    method: 'POST',
    path: () => '/api/scenarios/check-similarity',
    body: () => ({ collectionId: ids.privateCollection, prompt: 'Wait for a while please' }),
    expect: W(401, 404),
  },
  { method: 'GET', path: () => `/api/agents/${ids.agent}`, expect: W(401, 404) },
  { method: 'POST', path: () => `/api/agents/${ids.agent}/chat`, body: () => ({ message: 'hello' }), expect: W(401, 404) },
  { method: 'GET', path: () => `/api/executions/${ids.execution}`, expect: { anonymous: 404, other: 404, admin: 404 } },
  { method: 'GET', path: () => `/api/executions/${ids.execution}/events`, expect: { anonymous: 404, other: 404, admin: 404 } },
  { method: 'DELETE', path: () => `/api/keys/${ids.key}`, expect: W(401, 404) },
  { method: 'GET', path: () => '/api/keys', expect: W(401, 200) },
  { method: 'POST', path: () => '/api/collections', body: () => ({ name: 'By the admin token' }), expect: W(401, 201) },
  // Added with the web app, on-demand MCP and the registry API.
  { method: 'GET', path: () => '/api/auth/me', expect: W(401, 200) },
  { method: 'GET', path: () => '/api/auth/me/collections', expect: W(401, 200) },
  {
    method: 'POST',
    path: () => `/api/mcp/${owner.username}/mx-private/http?mode=search`,
    body: () => ({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    expect: { anonymous: 401, other: 404, admin: 404 },
  },
  // Publishing: a package is its publisher's to hide, deprecate and import versions of; an import is its requester's.
  { method: 'PATCH', path: () => '/api/packages/@fixtures/nul-tools', body: () => ({ hidden: true, deprecated: 'pwned' }), expect: W(401, 403) },
  { method: 'POST', path: () => '/api/packages', body: () => ({ source: 'npm:@fixtures/nul-tools@1.0.0' }), expect: W(401, 403) },
  { method: 'GET', path: () => `/api/package-imports/${ids.import}`, expect: W(401, 404) },
  {
    method: 'GET',
    path: () => `/v0.1/servers/${encodeURIComponent(`local.toolshed/${owner.username}.mx-private`)}/versions`,
    expect: { anonymous: 404, other: 404, admin: 404 },
  },
  {
    method: 'GET',
    path: () => `/v0.1/servers/local.toolshed/${owner.username}.mx-private/versions/latest`,
    expect: { anonymous: 404, other: 404, admin: 404 },
  },
];

for (const [i, c] of CASES.entries()) {
  const shown = c.path
    .toString()
    .replace(/^\(\)\s*=>\s*/, '')
    .replace(/["`]/g, '');
  test.serial(`#${i + 1} ${c.method} ${shown}: refused to everyone but the owner`, async (t) => {
    for (const actor of ['anonymous', 'other', 'admin'] as Actor[]) {
      const res = await svc.request(c.method, c.path(), {
        key: auth(actor),
        ...(c.body ? { body: c.body() } : {}),
        headers: { accept: 'application/json, text/event-stream' },
      });
      t.is(res.status, c.expect[actor], `${actor}: ${res.text.slice(0, 200)}`);
      // The registry API answers in the MCP Registry's own error shape, `{ error }`.
      if (res.status >= 400 && c.path().startsWith('/v0.1/')) t.is(typeof res.body?.error, 'string', `${actor}: an error in the registry's shape`);
      else if (res.status >= 400) t.is(res.body?.success, false, `${actor}: an error in the contract's shape`);
      if (actor === 'other' && c.path() === '/api/auth/me/collections') {
        t.false(
          res.body.data.some((col: { uid: string }) => col.uid.startsWith('mx-')),
          "another user's collections are not listed as theirs",
        );
      }
      if (actor === 'other' && c.method === 'GET' && c.path() === '/api/keys') {
        t.false(
          res.body.data.some((k: { id: string }) => k.id === ids.key),
          "another user's keys are not listed",
        );
      }
    }
  });
}

test.serial('the registry lists a private collection to its owner only', async (t) => {
  const name = `local.toolshed/${owner.username}.mx-private`;
  for (const actor of ['anonymous', 'other', 'admin'] as Actor[]) {
    const res = await svc.request('GET', '/v0.1/servers?search=mx-private', { key: auth(actor) });
    t.is(res.status, 200, actor);
    t.false(
      res.body.servers.some((s: any) => s.server.name === name),
      `${actor} sees the private server`,
    );
  }
  const own = await svc.request('GET', '/v0.1/servers?search=mx-private', { key: owner.key });
  t.true(
    own.body.servers.some((s: any) => s.server.name === name),
    'the owner sees it',
  );
  const versions = await svc.request('GET', `/v0.1/servers/${encodeURIComponent(name)}/versions`, { key: owner.key });
  t.is(versions.status, 200);
});

test.serial('nothing that was refused changed anything', async (t) => {
  const db = svc.api.deps.db;
  const cols = await db('collections').whereIn('uid', ['mx-private', 'mx-public']).orderBy('uid');
  t.deepEqual(
    cols.map((c) => [c.uid, c.name, c.is_public]),
    [
      ['mx-private', 'Private', false],
      ['mx-public', 'Public', true],
    ],
  );
  const tools = await db('collection_tools').whereIn('collection_id', [ids.privateCollection, ids.publicCollection]).count('* as n');
  t.is(Number(tools[0].n), 2);
  const scenarios = await db('scenarios').whereIn('collection_id', [ids.privateCollection, ids.publicCollection]);
  t.deepEqual(scenarios.map((s) => s.id).sort(), [ids.publicScenario, ids.privateScenario].sort());
  t.false(scenarios.some((s) => s.name === 'pwned'));
  t.is(Number((await db('collection_likes').count('* as n'))[0].n), 0);
  t.is((await svc.request('GET', '/api/keys', { key: owner.key })).status, 200, "the owner's key still works");
  t.like(await db('packages').where({ name: '@fixtures/nul-tools' }).first(), { hidden: false, deprecated: null, published_by: owner.id });
  t.is(Number((await db('package_imports').whereNot({ requested_by: owner.id }).whereNotNull('requested_by').count('* as n'))[0].n), 0);
  const runs = await db('scenario_runs').where({ scenario_id: ids.privateScenario }).count('* as n');
  t.is(Number(runs[0].n), 1, "only the owner's run of the private scenario exists");
});

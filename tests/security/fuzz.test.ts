import test from 'ava';
import fc from 'fast-check';
import path from 'node:path';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';
import { waitUntil } from '../helpers/wait.js';
import { createApp } from '../../api/app.js';
import { rawRequest } from './raw-http.js';
import { bodyFor, pathSegment, queryFor, rawBodies } from './fuzz-inputs.js';

// Issue 11, item 5: bad input never reaches Postgres as a 500. Every route gets generated path segments, query
// strings and bodies, as anonymous, as a user, with the admin token and with a bad token; every answer must be below
// 500, a 4xx must be in the contract's shape, and a refused request must change no row count. The seed is fixed
// (FUZZ_SEED overrides it, FUZZ_RUNS the runs per route); fast-check prints seed and path of a failure.
const SEED = Number(process.env.FUZZ_SEED ?? 1105);
const RUNS = Number(process.env.FUZZ_RUNS ?? 25);
const TOOL = '@fixtures/nul-tools/slow';
const TABLES = [
  'users',
  'api_keys',
  'collections',
  'collection_tools',
  'collection_likes',
  'scenarios',
  'scenario_runs',
  'agents',
  'tool_ratings',
  'tool_reviews',
  'executions',
  'package_imports',
] as const;

let svc: Service;
type User = { id: string; username: string; key: string };
let alice: User;
let bob: User;
const ids: Record<string, string> = {};

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  const imp = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'security', 'nul-tools')}`);
  if (imp.status !== 201) throw new Error(imp.text);
  ids.tool = imp.body.data.tools.find((t: { name: string }) => t.name === 'slow').id;
  alice = await svc.createUser();
  bob = await svc.createUser();
  const must = async (p: Promise<{ status: number; body: any; text: string }>) => {
    const r = await p;
    if (r.status >= 300) throw new Error(`setup: ${r.status} ${r.text}`);
    return r.body.data;
  };
  const post = (key: string, p: string, body: unknown) => must(svc.request('POST', p, { key, body }));
  ids.collection = (await post(alice.key, '/api/collections', { name: 'Fuzz', uid: 'fuzz-tools' })).id;
  await post(alice.key, '/api/collections/fuzz-tools/tools', { toolId: TOOL });
  ids.empty = (await post(alice.key, '/api/collections', { name: 'Empty', uid: 'fuzz-empty' })).id;
  await post(alice.key, '/api/collections', { name: 'Add to', uid: 'fuzz-add' });
  ids.bobPrivate = (await post(bob.key, '/api/collections', { name: 'Hidden', uid: 'bob-hidden', isPublic: false })).id;
  const prompt = 'Wait for 5 milliseconds and tell me how long you waited.';
  ids.scenario = (await post(alice.key, '/api/scenarios', { collectionId: ids.collection, prompt })).id;
  ids.bobScenario = (await post(bob.key, '/api/scenarios', { collectionId: ids.bobPrivate, prompt })).id;
  ids.agent = (await post(alice.key, '/api/agents', { name: 'Fuzz agent' })).id;
  ids.execution = (await must(svc.request('POST', `/api/tools/execute/${TOOL}?wait=false`, { body: { params: { ms: 1 } } }))).executionId;
  ids.bobKey = (await must(svc.request('GET', '/api/keys', { key: bob.key })))[0].id;
  // The execution must be final, so that its event stream replays and ends.
  await waitUntil(
    () => must(svc.request('GET', `/api/executions/${ids.execution}`)),
    (e) => !['queued', 'running'].includes(e.status),
    'the execution to be final',
  );
});
test.after.always(() => svc?.close());

type Auth = 'anonymous' | 'user' | 'admin' | 'badToken';
const token = (a: Auth) => (a === 'user' ? alice.key : a === 'admin' ? svc.config.ADMIN_TOKEN : a === 'badToken' ? 'tsk_' + 'x'.repeat(40) : undefined);

interface Route {
  method: string;
  /** `:name` segments and a trailing `*name` are filled from `real` (values that exist) or generated segments. */
  path: string;
  real?: Record<string, () => string[]>;
  query?: string[];
  body?: () => Record<string, unknown>;
  admin?: boolean;
}

const ref = () => [TOOL, ids.tool, '@fixtures/nul-tools', `@fixtures/nul-tools::slow`];
const ROUTES: Route[] = [
  { method: 'GET', path: '/health', query: ['verbose'] },
  { method: 'POST', path: '/api/admin/users', admin: true, body: () => ({ username: 'fuzzer', name: 'F', tier: 'pro' }) },
  { method: 'POST', path: '/api/admin/packages', admin: true, body: () => ({ source: 'path:/nonexistent/fuzz', official: true }) },
  {
    method: 'POST',
    path: '/api/admin/packages/*name/transfer',
    admin: true,
    real: { name: () => ['no-such-package'] },
    body: () => ({ to: null }),
  },
  { method: 'POST', path: '/api/admin/tools/:id/risks/clear', admin: true, real: { id: () => ['00000000-0000-4000-8000-000000000000'] } },
  // Publishing: a path: source is refused before anything is queued (a real npm import per fuzz case would be slow).
  {
    method: 'POST',
    path: '/api/packages',
    query: ['wait'],
    body: () => ({ source: 'path:/nonexistent/fuzz', category: 'automation', env: [{ name: 'A_KEY' }] }),
  },
  { method: 'GET', path: '/api/packages', query: ['limit', 'offset'] },
  { method: 'GET', path: '/api/packages/*name', real: { name: () => ['@fixtures/nul-tools', 'no-such-package'] } },
  { method: 'PATCH', path: '/api/packages/*name', real: { name: () => ['@fixtures/nul-tools', 'no-such-package'] }, body: () => ({ hidden: false }) },
  {
    method: 'GET',
    path: '/api/packages/*name/versions/:version',
    real: { name: () => ['@fixtures/nul-tools', 'no-such-package'], version: () => ['1.0.0', '9.9.9'] },
  },
  {
    method: 'PATCH',
    path: '/api/packages/*name/versions/:version',
    real: { name: () => ['@fixtures/nul-tools', 'no-such-package'], version: () => ['1.0.0', '9.9.9'] },
    body: () => ({ deprecated: null }),
  },
  { method: 'GET', path: '/api/auth/me/packages', query: ['limit', 'offset'] },
  { method: 'GET', path: '/api/package-imports/:id', real: { id: () => ['00000000-0000-4000-8000-000000000000'] } },
  { method: 'POST', path: '/api/keys', body: () => ({ name: 'k' }) },
  { method: 'GET', path: '/api/keys' },
  { method: 'DELETE', path: '/api/keys/:id', real: { id: () => [ids.bobKey] } },
  // MCP sign-in (OAuth): a made-up interaction is 404 (never another's), a made-up grant too.
  { method: 'GET', path: '/api/auth/oauth/interactions/:uid' },
  { method: 'GET', path: '/api/auth/oauth/interactions/:uid/details' },
  { method: 'POST', path: '/api/auth/oauth/interactions/:uid/consent', body: () => ({ approve: true }) },
  // Env asked for by an MCP call (api/operations/mcp-env.ts): a made-up token is 404 (never another's request).
  { method: 'GET', path: '/api/mcp-env/:token' },
  { method: 'POST', path: '/api/mcp-env/:token', body: () => ({ env: { API_TOKEN: 'v' } }) },
  { method: 'GET', path: '/api/auth/me/oauth-grants' },
  { method: 'DELETE', path: '/api/auth/me/oauth-grants/:id' },
  { method: 'POST', path: '/api/tools/execute/*slug', real: { slug: ref }, query: ['wait'], body: () => ({ params: { ms: 1 }, env: { A: 'b' } }) },
  { method: 'POST', path: '/api/tools/execute/*slug', real: { slug: ref }, body: () => ({ prompt: 'wait 1 ms', parameters: { ms: 1 } }) },
  { method: 'GET', path: '/api/executions/:id', real: { id: () => [ids.execution] } },
  { method: 'GET', path: '/api/executions/:id/events', real: { id: () => [ids.execution] } },
  { method: 'POST', path: '/api/executions/:id/cancel', real: { id: () => [ids.execution] } },
  { method: 'GET', path: '/api/tools', query: ['category', 'q', 'official'] },
  { method: 'GET', path: '/api/tools/search', query: ['q', 'category'] },
  { method: 'GET', path: '/api/tools/trending', query: ['period', 'category'] },
  { method: 'GET', path: '/api/tools/reliability', query: ['ids'] },
  { method: 'POST', path: '/api/tools/*ref/rate', real: { ref }, body: () => ({ rating: 4 }) },
  { method: 'GET', path: '/api/tools/*ref', real: { ref } },
  { method: 'POST', path: '/api/tools/*ref/reviews', real: { ref }, body: () => ({ rating: 3, title: 't', body: 'fine' }) },
  { method: 'GET', path: '/api/tools/*ref/reviews', real: { ref } },
  { method: 'GET', path: '/api/tools/*ref/stats', real: { ref }, query: ['window'] },
  { method: 'GET', path: '/api/collections', query: ['q'] },
  { method: 'GET', path: '/api/collections/:uid', real: { uid: () => ['fuzz-tools', ids.collection, ids.bobPrivate] } },
  { method: 'POST', path: '/api/collections', body: () => ({ name: 'N', uid: 'fuzz-new', description: 'd', isPublic: true }) },
  {
    method: 'PATCH',
    path: '/api/collections/:uid',
    real: { uid: () => ['fuzz-tools', ids.bobPrivate] },
    body: () => ({ name: 'N', description: null, isPublic: true }),
  },
  { method: 'DELETE', path: '/api/collections/:uid', real: { uid: () => [ids.bobPrivate, 'bob-hidden'] } },
  { method: 'POST', path: '/api/collections/:uid/tools', real: { uid: () => ['fuzz-add', ids.bobPrivate] }, body: () => ({ toolId: TOOL }) },
  { method: 'DELETE', path: '/api/collections/:uid/tools/*toolId', real: { uid: () => ['fuzz-add', ids.bobPrivate], toolId: ref } },
  { method: 'POST', path: '/api/collections/:uid/like', real: { uid: () => ['fuzz-tools', ids.bobPrivate] } },
  {
    method: 'POST',
    path: '/api/collections/:uid/notices/accept',
    real: { uid: () => ['fuzz-tools', ids.bobPrivate] },
    body: () => ({ package: '@fixtures/nul-tools', to: '1.0.0' }),
  },
  { method: 'GET', path: '/api/mcp/:username/:slug/mcp', real: { username: () => [alice.username], slug: () => ['fuzz-tools'] } },
  { method: 'DELETE', path: '/api/mcp/:username/:slug/mcp', real: { username: () => [alice.username], slug: () => ['fuzz-tools'] } },
  {
    method: 'POST',
    path: '/api/mcp/:username/:slug/mcp',
    real: { username: () => [alice.username, bob.username], slug: () => ['fuzz-tools', 'bob-hidden'] },
    body: () => ({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  },
  { method: 'GET', path: '/api/mcp/:username/:slug/http', real: { username: () => [alice.username], slug: () => ['fuzz-tools'] } },
  { method: 'DELETE', path: '/api/mcp/:username/:slug/http', real: { username: () => [alice.username], slug: () => ['fuzz-tools'] } },
  {
    method: 'POST',
    path: '/api/mcp/:username/:slug/http',
    real: { username: () => [alice.username, bob.username], slug: () => ['fuzz-tools', 'bob-hidden'] },
    body: () => ({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  },
  { method: 'GET', path: '/api/scenarios', query: ['collectionId', 'tags', 'sortBy'] },
  { method: 'GET', path: '/api/scenarios/featured' },
  { method: 'GET', path: '/api/scenarios/:id', real: { id: () => [ids.scenario, ids.bobScenario] } },
  {
    method: 'POST',
    path: '/api/scenarios',
    body: () => ({
      collectionId: ids.collection,
      prompt: 'Wait for 7 milliseconds please.',
      name: 'n',
      description: 'd',
      tags: ['a'],
      assertions: [{ type: 'noToolErrors' }],
    }),
  },
  {
    method: 'PATCH',
    path: '/api/scenarios/:id',
    real: { id: () => [ids.scenario, ids.bobScenario] },
    body: () => ({ name: 'n', tags: ['b'], assertions: null }),
  },
  { method: 'DELETE', path: '/api/scenarios/:id', real: { id: () => [ids.bobScenario] } },
  // A run of an existing scenario would be queued and judged: only another user's private one exists here (404).
  { method: 'POST', path: '/api/scenarios/:id/run', real: { id: () => [ids.bobScenario] }, query: ['wait'] },
  { method: 'GET', path: '/api/scenarios/:id/runs', real: { id: () => [ids.scenario, ids.bobScenario] } },
  { method: 'GET', path: '/api/scenario-runs/:id' },
  { method: 'GET', path: '/api/scenario-runs/:id/events' },
  { method: 'GET', path: '/api/collections/:id/scenarios', real: { id: () => ['fuzz-tools', ids.bobPrivate] }, query: ['tags', 'sortBy'] },
  {
    method: 'POST',
    path: '/api/collections/:id/scenarios/generate',
    real: { id: () => ['fuzz-empty', ids.bobPrivate] },
    body: () => ({ count: 2, skipSimilarityCheck: true }),
  },
  { method: 'POST', path: '/api/scenarios/check-similarity', body: () => ({ prompt: 'Wait for 9 milliseconds please.', collectionId: ids.collection }) },
  // fuzz-empty has no scenarios (400); a batch of fuzz-tools would queue runs.
  { method: 'POST', path: '/api/collections/:id/scenarios/run-all', real: { id: () => ['fuzz-empty', ids.bobPrivate] } },
  { method: 'GET', path: '/api/scenario-batches/:id' },
  { method: 'GET', path: '/api/scenario-batches/:id/events' },
  { method: 'GET', path: '/api/scenario-batches/:id/compare/:otherId', query: ['threshold'] },
  { method: 'GET', path: '/api/collections/:id/scenario-batches', real: { id: () => ['fuzz-tools', ids.bobPrivate] }, query: ['limit', 'offset'] },
  { method: 'POST', path: '/api/agents', body: () => ({ name: 'A', description: 'd', systemPrompt: 's', collectionIds: ['fuzz-tools'], model: null }) },
  { method: 'GET', path: '/api/agents' },
  { method: 'GET', path: '/api/agents/:id', real: { id: () => [ids.agent] } },
  { method: 'POST', path: '/api/agents/:id/chat', real: { id: () => [ids.agent] }, body: () => ({ message: 'hello', env: { A: 'b' } }) },
  { method: 'GET', path: '/api/auth/options' },
  { method: 'POST', path: '/api/auth/signup', body: () => ({ username: 'fuzzsign', password: 'correct horse battery staple', name: 'F' }) },
  { method: 'POST', path: '/api/auth/login', body: () => ({ username: 'fuzzsign', password: 'correct horse battery staple' }) },
  { method: 'POST', path: '/api/auth/logout' },
  { method: 'POST', path: '/api/auth/logout-all' },
  { method: 'GET', path: '/api/auth/me' },
  { method: 'GET', path: '/api/auth/me/collections' },
  { method: 'GET', path: '/api/auth/oidc/start', query: ['next'] },
  { method: 'GET', path: '/api/auth/oidc/callback', query: ['code', 'state'] },
  { method: 'POST', path: '/api/admin/invitations', admin: true, body: () => ({}) },
  { method: 'GET', path: '/api/admin/operations', admin: true },
  { method: 'GET', path: '/api/openapi.json' },
  { method: 'GET', path: '/v0.1/servers', query: ['cursor', 'limit', 'search', 'updated_since', 'version'] },
  { method: 'GET', path: '/v0.1/servers/:name/versions' },
  { method: 'GET', path: '/v0.1/servers/:name/versions/:version', real: { version: () => ['latest', '1.0.1'] } },
  { method: 'GET', path: '/v0.1/servers/:ns/:server/versions' },
  { method: 'GET', path: '/v0.1/servers/:ns/:server/versions/:version', real: { version: () => ['latest', '1.0.1'] } },
  { method: 'GET', path: '/docs' },
  { method: 'GET', path: '/docs/init.js' },
  { method: 'GET', path: '/docs/assets/:file', real: { file: () => ['swagger-ui.css', 'favicon-32x32.png'] } },
];

test.serial('the fuzz table covers every route the app mounts', (t) => {
  // koa-router's middleware carries its router: its stack is every route, as mounted.
  const dispatch = createApp(svc.api.deps).middleware.find((m) => 'router' in m) as unknown as { router: { stack: { methods: string[]; path: string }[] } };
  const mounted = dispatch.router.stack.flatMap((l) => l.methods.filter((m) => m !== 'HEAD').map((m) => `${m} ${l.path}`));
  const fuzzed = new Set(ROUTES.map((r) => `${r.method} ${r.path}`));
  t.deepEqual(
    mounted.filter((r) => !fuzzed.has(r)),
    [],
  );
  t.true(mounted.length >= 40, `${mounted.length} routes`);
});

/** Scenario operations answer in shape B (SPEC, Errors); everything else in shape A. */
const SCENARIO_PATH = /^\/api\/(?:scenarios|scenario-runs|scenario-batches)(?:\/|$|\?)|^\/api\/collections\/[^/?]+\/scenario(?:s|-batches)(?:\/|$|\?)/;
const REGISTRY_PATH = /^\/v0\.1\//;
const SHAPE_B_WORDS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Rate Limit Exceeded',
};

export interface FuzzRequest {
  method: string;
  path: string;
  auth: Auth;
  body?: unknown;
  raw?: { text: string | Buffer; contentType?: string };
}

async function send(r: FuzzRequest) {
  const headers: Record<string, string> = {};
  const t = token(r.auth);
  if (t) headers.authorization = `Bearer ${t}`;
  // What an MCP client sends (the SDK answers 406 without it, before reading the message).
  if (r.path.startsWith('/api/mcp/')) headers.accept = 'application/json, text/event-stream';
  let body: string | Buffer | undefined;
  if (r.raw) {
    body = r.raw.text;
    headers['content-type'] = r.raw.contentType ?? 'application/json';
  } else if (r.body !== undefined) {
    body = JSON.stringify(r.body);
    headers['content-type'] = 'application/json';
  }
  // fetch normalises dot segments and some escapes, and refuses some methods: those requests go out byte for byte.
  const normalised = new URL(r.path, svc.url);
  const fetchable = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'].includes(r.method);
  if (!fetchable || (body !== undefined && typeof body !== 'string') || normalised.pathname + normalised.search !== r.path) {
    // node:http sends a DELETE's body without a length or chunking unless told its length.
    if (body !== undefined) headers['content-length'] = String(Buffer.byteLength(body));
    return rawRequest(svc.url, r.method, r.path, { headers, body });
  }
  const res = await svc.request(r.method, r.path, { headers, rawBody: body });
  return { status: res.status, headers: Object.fromEntries(res.headers), text: res.text, body: res.body };
}

async function counts(): Promise<Record<string, number>> {
  const cols = TABLES.map((t) => `(select count(*)::int from ${t}) as ${t}`).join(', ');
  return (await svc.api.deps.db.raw(`select ${cols}`)).rows[0];
}

/** The reason a response breaks the contract, or undefined. */
function problem(r: FuzzRequest, res: { status: number; body: any; text: string }): string | undefined {
  if (res.status >= 500) return `a ${res.status}`;
  if (res.status < 400 || r.method === 'HEAD') return undefined;
  const b = res.body;
  if (!b || typeof b !== 'object') return 'a 4xx without a JSON body';
  // The MCP endpoint speaks JSON-RPC: the SDK's own errors are JSON-RPC error objects.
  if (r.path.startsWith('/api/mcp/') && b.jsonrpc === '2.0' && typeof b.error?.code === 'number' && typeof b.error?.message === 'string') return undefined;
  const shapeA =
    b.success === false &&
    typeof b.error?.code === 'string' &&
    typeof b.error?.message === 'string' &&
    (b.error.details === undefined ||
      (Array.isArray(b.error.details) && b.error.details.every((d: any) => typeof d.path === 'string' && typeof d.message === 'string')));
  const shapeB = b.success === false && b.error === SHAPE_B_WORDS[res.status] && typeof b.message === 'string';
  // The MCP Registry API answers its own errors in the registry's `{ error }` shape (authentication and rate limits: A).
  if (REGISTRY_PATH.test(r.path) && typeof b.error === 'string' && Object.keys(b).length === 1) return undefined;
  if (!SCENARIO_PATH.test(r.path)) return shapeA ? undefined : 'a 4xx not in shape A';
  // On scenario routes: shape B, except a bad token (401) and the per-key rate limit (429), which are shape A.
  const aAllowed = (res.status === 401 && r.auth === 'badToken') || (res.status === 429 && b.error?.code === 'RATE_LIMITED');
  if (aAllowed) return shapeA ? undefined : 'an authentication or rate-limit error not in shape A';
  return shapeB ? undefined : 'a 4xx on a scenario route not in shape B';
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function holdsLoneSurrogate(r: FuzzRequest): boolean {
  let parsed: unknown = r.body;
  if (r.raw) {
    try {
      parsed = JSON.parse(r.raw.text.toString());
    } catch {
      return false;
    }
  }
  const walk = (v: unknown): boolean =>
    typeof v === 'string' ? LONE_SURROGATE.test(v) : !!v && typeof v === 'object' && Object.entries(v).some(([k, x]) => LONE_SURROGATE.test(k) || walk(x));
  return walk(parsed);
}

/** Sends one request; a broken contract, or a refused request that changed a row count, fails with the request. */
async function check(r: FuzzRequest): Promise<number> {
  const before = await counts();
  const res = await send(r);
  const why = problem(r, res);
  const show = () => `${r.method} ${r.path.slice(0, 300)} as ${r.auth} → ${res.status} ${res.text.slice(0, 400)}`;
  if (process.env.FUZZ_LOG) console.log(show());
  if (why) throw new Error(`${why}: ${show()}`);
  if (res.status >= 200 && res.status < 300) {
    // UTF-8 cannot carry it: accepted, it would be stored as U+FFFD (text) or refused by Postgres later (jsonb).
    // OPTIONS answers `Allow` and reads no body: nothing of it is accepted or stored.
    if (r.method !== 'OPTIONS' && holdsLoneSurrogate(r)) throw new Error(`a body with a lone surrogate was accepted: ${show()}`);
    return res.status;
  }
  const after = await counts();
  // A package import that passed validation is recorded before it runs (a slow one answers 202 with the id to poll),
  // so one that failed (400 naming its `source`, not `body.source`) leaves its one row behind: the record of the try.
  const importTried = r.path === '/api/admin/packages' && r.auth === 'admin' && res.body?.error?.details?.[0]?.path === 'source';
  const changed = TABLES.filter((t) => before[t] !== after[t] && !(t === 'package_imports' && importTried && after[t] === before[t] + 1));
  if (changed.length > 0) throw new Error(`a refused request changed ${changed.join(', ')}: ${show()}`);
  return res.status;
}

function routeArbitrary(route: Route): fc.Arbitrary<FuzzRequest> {
  const parts = route.path.split('/').map((seg) => {
    if (!seg.startsWith(':') && !seg.startsWith('*')) return fc.constant(seg);
    const real = route.real?.[seg.slice(1)];
    const generated = seg.startsWith('*')
      ? fc.oneof(
          pathSegment,
          fc.tuple(pathSegment, pathSegment).map((p) => p.join('/')),
        )
      : pathSegment;
    if (!real) return generated;
    const existing = fc.constantFrom(0, 1, 2, 3).map((i) => {
      const values = real();
      return values[i % values.length].split('/').map(encodeURIComponent).join('/');
    });
    return fc.oneof(existing, generated);
  });
  const auths: Auth[] = route.admin ? ['admin', 'admin', 'anonymous', 'user', 'badToken'] : ['user', 'user', 'anonymous', 'admin', 'badToken'];
  const body =
    route.method === 'GET'
      ? fc.constant(undefined)
      : fc.oneof({ weight: 4, arbitrary: bodyFor(route.body?.()) }, { weight: 1, arbitrary: fc.constant(undefined) });
  const raw = route.method === 'GET' ? fc.constant(undefined) : fc.option(rawBodies, { freq: 4 });
  return fc
    .record({ parts: fc.tuple(...parts), query: fc.option(queryFor(route.query ?? []), { freq: 2 }), auth: fc.constantFrom(...auths), body, raw })
    .map((g) => ({
      method: route.method,
      path: g.parts.join('/') + (g.query === null ? '' : `?${g.query}`),
      auth: g.auth,
      ...(g.raw ? { raw: g.raw } : { body: g.body }),
    }));
}

ROUTES.forEach((route, i) => {
  test.serial(`fuzz ${route.method} ${route.path}${route.body && route.path.includes('execute') ? ` (${Object.keys(route.body())[0]})` : ''}`, async (t) => {
    let sent = 0;
    const property = fc.asyncProperty(routeArbitrary(route), async (r) => {
      sent++;
      await check(r);
    });
    await fc.assert(property, { numRuns: RUNS, seed: SEED + i, includeErrorInReport: true });
    t.true(sent >= RUNS, `${sent} requests sent`);
  });
});

// Every path with every method, known to the router or not: a 405 (or 404) in the contract's shape, never a 501.
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PURGE', 'PROPFIND', 'LOCK', 'SEARCH', 'TRACE'];
test.serial('fuzz methods on every path', async (t) => {
  let sent = 0;
  const requests = fc.tuple(fc.oneof(...ROUTES.map(routeArbitrary)), fc.constantFrom(...METHODS)).map(([r, method]) => {
    const bodiless = method === 'GET' || method === 'HEAD';
    return { ...r, method, ...(bodiless ? { body: undefined, raw: undefined } : {}) };
  });
  await fc.assert(
    fc.asyncProperty(requests, async (r) => {
      sent++;
      await check(r);
    }),
    { numRuns: RUNS * 4, seed: SEED - 1, includeErrorInReport: true },
  );
  t.true(sent >= RUNS * 4, `${sent} requests sent`);
});

/** Inputs the fuzzer found, or that are known to hurt, kept by name (see docs/security-notes/fuzz.md). */
const KNOWN: { name: string; request: () => FuzzRequest; status?: number }[] = [
  { name: 'DELETE with a body, sent byte for byte', request: () => ({ method: 'DELETE', path: '/api/keys/..', auth: 'user', body: '' }) },
  {
    name: 'lone surrogate in a text column',
    request: () => ({ method: 'POST', path: '/api/collections', auth: 'user', body: { name: '\uD800' } }),
    status: 400,
  },
  {
    name: 'lone surrogate as a key',
    request: () => ({ method: 'POST', path: `/api/tools/execute/${TOOL}?wait=false`, auth: 'anonymous', body: { params: { '\uDC00': 1 } } }),
    status: 400,
  },
  {
    name: 'lone surrogate in execution params',
    request: () => ({ method: 'POST', path: `/api/tools/execute/${TOOL}?wait=false`, auth: 'user', body: { params: { ms: '\uD800' } } }),
    status: 400,
  },
  {
    name: 'lone surrogate escape in raw JSON',
    request: () => ({ method: 'POST', path: '/api/agents', auth: 'user', raw: { text: '{"name":"\\udfff"}' } }),
    status: 400,
  },
  {
    name: 'lone surrogate in a jsonb assertion',
    request: () => ({
      method: 'POST',
      path: '/api/scenarios',
      auth: 'user',
      body: { collectionId: ids.collection, prompt: 'Wait for 3 ms \uD800 please', assertions: [{ type: 'outputContains', text: '\uD800' }] },
    }),
    status: 400,
  },
  {
    name: 'lone surrogate in a review',
    request: () => ({ method: 'POST', path: `/api/tools/${TOOL}/reviews`, auth: 'user', body: { rating: 3, body: 'ok \uDBFF' } }),
    status: 400,
  },
  {
    name: 'lone surrogate in a chat message',
    request: () => ({ method: 'POST', path: `/api/agents/${ids.agent}/chat`, auth: 'user', body: { message: '\uD800' } }),
    status: 400,
  },
  {
    name: 'lone surrogate in an env value',
    request: () => ({ method: 'POST', path: `/api/tools/execute/${TOOL}?wait=false`, auth: 'user', body: { params: { ms: 1 }, env: { A: '\uD800' } } }),
    status: 400,
  },
  {
    name: 'lone surrogate in a username',
    request: () => ({ method: 'POST', path: '/api/admin/users', auth: 'admin', body: { username: 'surrogate', name: '\uD800' } }),
    status: 400,
  },
  {
    name: 'lone surrogate in MCP tools/call arguments',
    request: () => ({
      method: 'POST',
      path: `/api/mcp/${alice.username}/fuzz-tools/http`,
      auth: 'user',
      body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'slow', arguments: { ms: '\uD800' } } },
    }),
    status: 400,
  },
  // Found by the fuzzer (seed 1176): an asset name that is an Object.prototype key was looked up as one (500).
  { name: 'a docs asset named __proto__', request: () => ({ method: 'GET', path: '/docs/assets/__proto__', auth: 'anonymous' }), status: 404 },
  { name: 'a docs asset named constructor', request: () => ({ method: 'GET', path: '/docs/assets/constructor', auth: 'anonymous' }), status: 404 },
  { name: 'offset beyond bigint', request: () => ({ method: 'GET', path: `/api/tools?offset=${'9'.repeat(30)}`, auth: 'anonymous' }), status: 400 },
  {
    name: 'offset beyond int64 on reviews',
    request: () => ({ method: 'GET', path: `/api/tools/${TOOL}/reviews?offset=9223372036854775808`, auth: 'anonymous' }),
    status: 400,
  },
  {
    name: 'offset beyond int64 on collections',
    request: () => ({ method: 'GET', path: '/api/collections?offset=99999999999999999999&limit=1e9', auth: 'anonymous' }),
    status: 400,
  },
  {
    name: 'offset beyond int64 on scenarios',
    request: () => ({ method: 'GET', path: `/api/scenarios?offset=${'9'.repeat(25)}`, auth: 'anonymous' }),
    status: 400,
  },
  {
    name: 'offset beyond int64 on run history',
    request: () => ({ method: 'GET', path: `/api/scenarios/${ids.scenario}/runs?offset=${'9'.repeat(25)}`, auth: 'user' }),
    status: 400,
  },
  {
    name: 'limit beyond int64 is clamped',
    request: () => ({ method: 'GET', path: `/api/scenarios/featured?limit=${'9'.repeat(25)}`, auth: 'anonymous' }),
    status: 200,
  },
  { name: 'negative and non-numeric paging', request: () => ({ method: 'GET', path: '/api/collections?limit=-1&offset=abc', auth: 'anonymous' }), status: 400 },
  { name: 'rating beyond a double', request: () => ({ method: 'POST', path: `/api/tools/${TOOL}/rate`, auth: 'user', raw: { text: '{"rating":1e400}' } }) },
  { name: 'rating beyond int32', request: () => ({ method: 'POST', path: `/api/tools/${TOOL}/rate`, auth: 'user', body: { rating: 2 ** 31 } }) },
  { name: 'a key id that is not a uuid', request: () => ({ method: 'DELETE', path: '/api/keys/not-a-uuid', auth: 'user' }) },
  {
    name: 'an unknown uuid as an execution',
    request: () => ({ method: 'GET', path: '/api/executions/00000000-0000-4000-8000-000000000000', auth: 'anonymous' }),
  },
  {
    name: 'a uuid with a bad digit as a collection',
    request: () => ({ method: 'GET', path: '/api/collections/00000000-0000-0000-0000-00000000000g', auth: 'anonymous' }),
  },
  { name: 'surrogate bytes in a path', request: () => ({ method: 'GET', path: '/api/scenarios/%ED%A0%80', auth: 'anonymous' }) },
  { name: 'an encoded slash in a tool ref', request: () => ({ method: 'GET', path: '/api/tools/%40fixtures%2fnul-tools%2fslow', auth: 'anonymous' }) },
  {
    name: 'prototype keys in a body',
    request: () => ({ method: 'POST', path: '/api/collections', auth: 'user', raw: { text: '{"__proto__":{"isPublic":false},"name":"p"}' } }),
  },
  { name: 'a method the router does not know', request: () => ({ method: 'PURGE', path: '/api/tools', auth: 'anonymous' }), status: 405 },
  {
    name: 'a method a scenario path does not take',
    request: () => ({ method: 'PUT', path: `/api/scenarios/${ids.scenario}`, auth: 'user', body: {} }),
    status: 405,
  },
  { name: 'a method a path does not take', request: () => ({ method: 'PUT', path: '/api/collections', auth: 'user', body: {} }), status: 405 },
  {
    name: 'a failed package import keeps only its own record',
    request: () => ({ method: 'POST', path: '/api/admin/packages', auth: 'admin', body: { source: 'path:/nonexistent/fuzz', official: true } }),
    status: 400,
  },
  { name: 'a very long uid', request: () => ({ method: 'PATCH', path: `/api/collections/${'a'.repeat(6000)}`, auth: 'user', body: { name: 'x' } }) },
];

test.serial('known hostile inputs: below 500, in the contract shape, and a refusal changes nothing', async (t) => {
  const failures: string[] = [];
  for (const k of KNOWN) {
    try {
      const r = k.request();
      const status = await check(r);
      if (k.status !== undefined && status !== k.status) failures.push(`${k.name}: ${status}, not ${k.status}`);
    } catch (err) {
      failures.push(`${k.name}: ${(err as Error).message}`);
    }
  }
  t.deepEqual(failures, []);
});

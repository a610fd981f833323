/**
 * Issue 43 item 4 through the real pipeline: a package whose tool description hides instructions for the model
 * (tests/fixtures/packages/poisoned-tools, after Invariant Labs' published example) imports with `risks` on that tool
 * — its record, search, a collection's MCP `tools/list` `_meta` — is never served with `readOnlyHint` and ranks below
 * its clean neighbour; the admin clears the false alarm and it is served as declared again.
 */
import test from 'ava';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { FIXTURES_DIR, startService, type Service } from '../helpers/service.js';
import { until } from '../helpers/processes.js';

let svc: Service;
let alice: { key: string; id: string; username: string };
const PKG = '@fixtures/poisoned-tools';
const admin = () => ({ authorization: `Bearer ${svc.config.ADMIN_TOKEN}` });

test.before(async () => {
  svc = await startService({ sandbox: 'process' });
  const res = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'poisoned-tools')}`);
  if (res.status !== 201) throw new Error(`import: ${res.text}`);
  alice = await svc.createUser({ username: 'poison_reader' });
});
test.after.always(() => svc?.close());

async function listTools(uid: string) {
  const client = new Client({ name: 'toolshed-tests', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${svc.url}/api/mcp/${alice.username}/${uid}/http`)));
  const { tools } = await client.listTools();
  await client.close();
  return new Map(tools.map((t) => [t.name, t]));
}

test.serial('a poisoned tool carries risks on its record, in search and in tools/list, without readOnlyHint; the admin clears it', async (t) => {
  const flagged = await svc.request('GET', `/api/tools/${PKG}/addNumbers`);
  t.is(flagged.status, 200);
  const risks = flagged.body.data.risks as { kind: string; detail: string }[];
  t.deepEqual([...new Set(risks.map((r) => r.kind))].sort(), ['model-instruction', 'sensitive-data'], JSON.stringify(risks));
  t.true(risks.some((r) => r.detail.startsWith('secret-files:') && r.detail.includes('~/.ssh/id_rsa')));
  t.true(
    flagged.body.data.risks.some((r: { detail: string }) => r.detail.includes('<IMPORTANT>')),
    'the detail quotes the text',
  );
  t.deepEqual(flagged.body.data.annotations, { idempotentHint: true, openWorldHint: false }, 'declared readOnly, never served with risks');
  const clean = await svc.request('GET', `/api/tools/${PKG}/countVowels`);
  t.deepEqual(clean.body.data.risks, []);
  t.deepEqual(clean.body.data.annotations, { readOnlyHint: true, idempotentHint: true, openWorldHint: false });
  t.true(flagged.body.data.qualityScore < clean.body.data.qualityScore, 'ranks below its clean neighbour');

  const found = await svc.request('GET', '/api/tools/search?q=numbers+vowels+text+count+adds');
  const hit = found.body.results.tools.find((x: { name: string }) => x.name === 'addNumbers');
  t.truthy(hit, JSON.stringify(found.body));
  t.deepEqual(hit.risks, risks);
  const names = found.body.results.tools.map((x: { name: string }) => x.name);
  t.true(names.indexOf('countVowels') < names.indexOf('addNumbers'), names.join());

  const c = await svc.createCollection(alice.key, { name: 'Poison check' }, [`${PKG}::addNumbers`, `${PKG}::countVowels`]);
  let tools = await listTools(c.uid);
  t.deepEqual(tools.get('addNumbers')?._meta?.risks, risks);
  t.is(tools.get('addNumbers')?.annotations?.readOnlyHint, undefined);
  t.is(tools.get('countVowels')?._meta, undefined);
  t.is(tools.get('countVowels')?.annotations?.readOnlyHint, true);

  // Only the admin clears; a malformed or unknown id is refused and changes nothing.
  const id = flagged.body.data.id;
  t.is((await svc.request('POST', `/api/admin/tools/${id}/risks/clear`, { key: alice.key })).status, 401);
  const bad = await svc.request('POST', '/api/admin/tools/not-a-uuid/risks/clear', { headers: admin() });
  t.is(bad.status, 400);
  t.is(bad.body.error.code, 'VALIDATION_ERROR');
  t.is((await svc.request('POST', '/api/admin/tools/00000000-0000-4000-8000-000000000000/risks/clear', { headers: admin() })).status, 404);
  t.deepEqual((await svc.request('GET', `/api/tools/${PKG}/addNumbers`)).body.data.risks, risks, 'unchanged');

  const cleared = await svc.request('POST', `/api/admin/tools/${id}/risks/clear`, { headers: admin() });
  t.is(cleared.status, 200, cleared.text);
  t.deepEqual(cleared.body.data.cleared, risks);
  t.deepEqual(cleared.body.data.tool.risks, []);
  const after = await until(
    async () => {
      const r = await svc.request('GET', `/api/tools/${PKG}/addNumbers`);
      return r.body.data.risks.length === 0 && r;
    },
    10_000,
    'the cleared tool served without risks',
  );
  t.deepEqual(after.body.data.annotations, { readOnlyHint: true, idempotentHint: true, openWorldHint: false });
  tools = await until(
    async () => {
      const m = await listTools(c.uid);
      return m.get('addNumbers')?._meta === undefined && m;
    },
    10_000,
    'tools/list without the cleared risks',
  );
  t.is(tools.get('addNumbers')?.annotations?.readOnlyHint, true);

  // Imported again (the same version): the clearing holds while the descriptions are the same.
  const again = await svc.importPackage(`path:${path.join(FIXTURES_DIR, 'packages', 'poisoned-tools')}`);
  t.true([201, 409].includes(again.status), again.text);
  t.deepEqual((await svc.request('GET', `/api/tools/${PKG}/addNumbers`)).body.data.risks, []);
});

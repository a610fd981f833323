/**
 * Compatibility checking (issue 24, item 4): a new version is compared with the one it replaces, and the result is on
 * the package's version (GET /api/packages/:name).
 */
import test from 'ava';
import path from 'node:path';
import { compareVersions } from '../core/packages/compatibility.js';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';

const v = (version: string, tools: { name: string; inputSchema: unknown; outputSchema?: unknown }[]) => ({
  version,
  tools: tools.map((t) => ({ outputSchema: null, ...t })),
});
const obj = (properties: Record<string, unknown>, required: string[] = []) => ({ type: 'object', properties, required });

test('schema changes are classified: loosening and optional additions are compatible, the rest breaking', (t) => {
  const before = v('1.0.0', [
    { name: 'a', inputSchema: obj({ q: { type: 'string', maxLength: 10 }, n: { type: 'integer' }, mode: { enum: ['x', 'y'] } }, ['q']) },
    { name: 'b', inputSchema: obj({}), outputSchema: obj({ total: { type: 'number' }, items: { type: 'array' } }) },
  ]);
  const loosened = compareVersions(
    before,
    v('1.1.0', [
      {
        name: 'a',
        inputSchema: obj({ q: { type: 'string', maxLength: 20 }, n: { type: 'number' }, mode: { enum: ['x', 'y', 'z'] }, extra: { type: 'boolean' } }, []),
      },
      { name: 'b', inputSchema: obj({}), outputSchema: obj({ total: { type: 'number' }, items: { type: 'array' }, next: { type: 'string' } }) },
      { name: 'c', inputSchema: obj({}) },
    ]),
  );
  t.true(loosened.compatible, JSON.stringify(loosened.changes));
  t.deepEqual(
    loosened.changes.map((c) => `${c.tool} ${c.path} ${c.change}`),
    [
      'a input.q no longer required',
      'a input.q maxLength 10 → 20 (loosened)',
      'a input.n type integer → number',
      'a input.mode enum values added: "z"',
      'a input.extra optional property added',
      'b output.next property added',
      'c  tool added',
    ],
  );
  const broken = compareVersions(
    before,
    v('2.0.0', [{ name: 'a', inputSchema: obj({ q: { type: 'number', maxLength: 5 }, mode: { enum: ['x'] }, must: { type: 'string' } }, ['q', 'must']) }]),
  );
  t.false(broken.compatible);
  t.deepEqual(
    broken.changes.filter((c) => c.breaking).map((c) => `${c.tool} ${c.path} ${c.change}`),
    [
      'a input.q type string → number',
      'a input.q maxLength 10 → 5 (tightened)',
      'a input.n property removed',
      'a input.mode enum values removed: "y"',
      'a input.must required property added',
      'b  tool removed',
    ],
  );
});

let svc: Service;
test.before(async () => {
  svc = await startService();
});
test.after.always(() => svc?.close());

test.serial('each new version is compared with the one it replaced; the result is on the version', async (t) => {
  const fixture = (n: number) => `path:${path.join(FIXTURES_DIR, 'packages', `compat-v${n}`)}`;
  t.is((await svc.importPackage(fixture(1))).status, 201);
  const first = await svc.request('GET', '/api/packages/@fixtures/compat');
  t.is(first.body.data.versions[0].compatibility, null, 'the first version has nothing to compare with');

  t.is((await svc.importPackage(fixture(2))).status, 201);
  const second = (await svc.request('GET', '/api/packages/@fixtures/compat')).body.data.versions[0];
  t.is(second.version, '2.0.0');
  t.like(second.compatibility, { from: '1.0.0', to: '2.0.0', compatible: false });
  t.deepEqual(
    second.compatibility.changes.map(
      (c: { tool: string; path: string; change: string; breaking: boolean }) => `${c.breaking ? '!' : ''}${c.tool} ${c.path} ${c.change}`,
    ),
    ['!geocode input.limit maximum 10 → 5 (tightened)', '!geocode input.country required property added', '!reverse  tool removed', 'suggest  tool added'],
  );

  t.is((await svc.importPackage(fixture(3))).status, 201);
  const third = (await svc.request('GET', '/api/packages/@fixtures/compat')).body.data.versions[0];
  t.like(third.compatibility, { from: '2.0.0', to: '3.0.0', compatible: true });
  // Re-importing the same version keeps its comparison.
  t.is((await svc.importPackage(fixture(3))).status, 201);
  t.deepEqual((await svc.request('GET', '/api/packages/@fixtures/compat')).body.data.versions[0].compatibility, third.compatibility);
});

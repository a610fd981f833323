/**
 * Scenario runs' tool calls share sandboxes per user and package (SCENARIO_SANDBOX_REUSE, default `caller-package`),
 * so that a batch of hundreds of runs boots a few sandboxes, not one per call; each call still starts clean (a fresh
 * context and an empty /tmp), and two users never share one. Real worker, real gVisor sandboxes, the offline agent.
 */
import test from 'ava';
import crypto from 'node:crypto';
import path from 'node:path';
import type { GvisorRunner } from '../sandbox/gvisor-runner.js';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';

let svc: Service;
const HOSTILE = path.join(FIXTURES_DIR, 'packages', 'hostile-tools');

test.before(async () => {
  svc = await startService();
  const res = await svc.importPackage(`path:${HOSTILE}`);
  if (res.status !== 201) throw new Error(res.text);
});
test.after.always(() => svc?.close());

async function runPrompt(key: string, collectionId: string, prompt: string) {
  const s = await svc.request('POST', '/api/scenarios', { key, body: { collectionId, prompt } });
  if (s.status !== 201) throw new Error(s.text);
  const res = await svc.request('POST', `/api/scenarios/${s.body.data.id}/run`, { key });
  if (res.status !== 200) throw new Error(res.text);
  return res.body.data.steps[0];
}

test.serial("a user's runs share a sandbox per package, each call starts with an empty /tmp, and users never share one", async (t) => {
  const reuse = (svc.worker!.deps.sandbox as GvisorRunner).reuse;
  t.truthy(reuse, 'the gVisor runner has reuse slots by default');
  const installDir: string = (await svc.api.deps.db('packages').where({ name: '@fixtures/hostile-tools' }).first()).install_path;
  const keyOf = (userId: string) => `scenario|${userId}|${installDir}`;
  const marker = `mark-${crypto.randomBytes(4).toString('hex')}`;

  const a = await svc.createUser({ tier: 'pro' });
  const ca = await svc.createCollection(a.key, { name: 'Reuse A' }, ['@fixtures/hostile-tools::leaveFile', '@fixtures/hostile-tools::findLeftFile']);
  t.like(await runPrompt(a.key, ca.id, `Run leaveFile with name "${marker}"`), { toolName: 'leaveFile', output: { wrote: true } });
  t.is(reuse!.held(keyOf(a.id)), 1, "the first run's sandbox stays bound to the user and package");
  t.like(
    await runPrompt(a.key, ca.id, `Run findLeftFile with name "${marker}"`),
    { toolName: 'findLeftFile', output: { found: false } },
    'the next call on the same sandbox finds /tmp empty',
  );
  t.is(reuse!.held(keyOf(a.id)), 1, 'the second run used the same sandbox rather than booting another');

  const b = await svc.createUser({ tier: 'pro' });
  const cb = await svc.createCollection(b.key, { name: 'Reuse B' }, ['@fixtures/hostile-tools::findLeftFile']);
  t.like(await runPrompt(b.key, cb.id, `Run findLeftFile with name "${marker}"`), { output: { found: false } });
  t.is(reuse!.held(keyOf(b.id)), 1, 'another user gets a sandbox of their own');
  t.is(reuse!.held(keyOf(a.id)), 1);
});

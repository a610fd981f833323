/**
 * Issue 46 item 5 (its MCP forms): a writable data folder per call, and settings that are not credentials reach the
 * server. The real `@modelcontextprotocol/server-memory` (a devDependency) writes its memory.jsonl beside its own
 * dist/index.js: under gVisor its package is an overlay whose writes land in a tmpfs of the sandbox's own
 * (sandbox/package-view.ts), never in the package cache nor in another call's sandbox. Every call runs in a sandbox of
 * its own (the default, no SANDBOX_REUSE), so what a call writes is gone for the next call.
 */
import test from 'ava';
import fs from 'node:fs';
import path from 'node:path';
import { startService, type Service } from './helpers/service.js';

const MODULES = path.resolve(new URL('../node_modules', import.meta.url).pathname);
const MEMORY = '@modelcontextprotocol/server-memory';
let svc: Service;

test.before(async () => {
  svc = await startService({ env: { EXECUTION_TIMEOUT_MS: '30000' } });
  const imported = await svc.importPackage(`path:${path.join(MODULES, MEMORY)}`);
  if (imported.status !== 201) throw new Error(imported.text);
});
test.after.always(() => svc?.close());

const call = (key: string, tool: string, params: unknown) => svc.request('POST', `/api/tools/execute/${MEMORY}/${tool}`, { key, body: { params } });

/** Every memory.jsonl under a directory (the package cache, the installed package). */
function memoryFiles(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.startsWith('memory.json')) found.push(p);
    }
  };
  if (fs.existsSync(dir)) walk(dir);
  return found;
}

test("server-memory's create_entities writes beside itself and succeeds; nothing reaches the package cache or another caller", async (t) => {
  const alice = await svc.createUser();
  const bob = await svc.createUser();
  const entity = { name: 'Ada', entityType: 'person', observations: ['wrote the first program'] };
  const created = await call(alice.key, 'create_entities', { entities: [entity] });
  t.is(created.status, 200, created.text);
  t.not(created.body.status, 'error', JSON.stringify(created.body).slice(0, 500));
  t.notRegex(JSON.stringify(created.body), /EACCES|EROFS|read-only/i);
  t.regex(JSON.stringify(created.body.result), /Ada/);
  const graph = await call(alice.key, 'read_graph', {});
  t.is(graph.status, 200, graph.text);
  t.not(graph.body.status, 'error', JSON.stringify(graph.body).slice(0, 500));
  // Another caller's call (as every call: a sandbox of its own) does not see Ada.
  const other = await call(bob.key, 'read_graph', {});
  t.is(other.status, 200, other.text);
  t.not(other.body.status, 'error', JSON.stringify(other.body).slice(0, 500));
  t.notRegex(JSON.stringify(other.body.result), /Ada/);
  t.deepEqual(memoryFiles(path.join(MODULES, MEMORY)), [], 'the installed package is unchanged');
  t.deepEqual(memoryFiles(svc.config.PACKAGE_CACHE_DIR), [], 'the package cache is unchanged');
});

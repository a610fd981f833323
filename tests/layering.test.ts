/**
 * The layering rule (docs/development.md): dependencies point one way. `core/` imports only itself; `sandbox/` core;
 * `worker/` core and sandbox; `api/` core (and the web app's static file server, web/serve.ts) — the API never runs a
 * tool or a job itself. Checked on every relative import, static or dynamic, of every TypeScript file of the four.
 */
import test from 'ava';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SOURCE_ROOT as ROOT } from './helpers/source-root.js';

const ALLOWED: Record<string, { layers: string[]; files?: string[] }> = {
  core: { layers: ['core'] },
  sandbox: { layers: ['sandbox', 'core'] },
  worker: { layers: ['worker', 'core', 'sandbox'] },
  api: { layers: ['api', 'core'], files: ['web/serve.ts'] },
  // Inside core: the process's infrastructure and the pure text helpers know nothing of the domain folders.
  'core/infra': { layers: ['core/infra', 'core/text'], files: ['core/types.ts'] },
  'core/text': { layers: ['core/text'] },
};
const IMPORT = /(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g;

function tsFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' ? [] : tsFiles(p);
    return e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** Every import of a layer that leaves what it may use: `file:line → target`. */
function violations(layer: string, root = ROOT): string[] {
  const rule = ALLOWED[layer]!;
  const out: string[] = [];
  for (const file of tsFiles(path.join(root, layer))) {
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      for (const m of line.matchAll(IMPORT)) {
        const target = path.relative(root, path.resolve(path.dirname(file), m[1]!)).replace(/\.js$/, '.ts');
        if (rule.layers.some((l) => target.startsWith(`${l}/`)) || rule.files?.includes(target)) continue;
        out.push(`${path.relative(root, file)}:${i + 1} → ${target}`);
      }
    });
  }
  return out;
}

for (const layer of Object.keys(ALLOWED)) {
  test(`${layer}/ imports only ${[...ALLOWED[layer]!.layers, ...(ALLOWED[layer]!.files ?? [])].join(', ')}`, (t) => {
    t.true(tsFiles(path.join(ROOT, layer)).length > 0);
    t.deepEqual(violations(layer), []);
  });
}

test('the check sees a violation: an api file importing the worker, a core file importing the api', (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'layering-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  fs.mkdirSync(path.join(root, 'api', 'operations'), { recursive: true });
  fs.mkdirSync(path.join(root, 'core'));
  fs.writeFileSync(
    path.join(root, 'api', 'operations', 'probe.ts'),
    "import { x } from '../../core/a.js';\nconst t = await import('../../worker/tasks/index.js');\n",
  );
  fs.writeFileSync(path.join(root, 'core', 'a.ts'), "export { y } from '../api/app.js';\n");
  t.deepEqual(violations('api', root), ['api/operations/probe.ts:2 → worker/tasks/index.ts']);
  t.deepEqual(violations('core', root), ['core/a.ts:1 → api/app.ts']);
  fs.mkdirSync(path.join(root, 'core', 'infra'));
  fs.writeFileSync(path.join(root, 'core', 'infra', 'b.ts'), "import { z } from '../text/cut.js';\nimport { s } from '../scenarios/rules.js';\n");
  t.deepEqual(violations('core/infra', root), ['core/infra/b.ts:2 → core/scenarios/rules.ts']);
});

test('core/ holds folders only, besides the glossary (core/types.ts): a new file goes where it belongs', (t) => {
  const loose = fs.readdirSync(path.join(ROOT, 'core'), { withFileTypes: true }).filter((e) => e.isFile());
  t.deepEqual(
    loose.map((e) => e.name),
    ['types.ts'],
  );
});

/** Value imports (not `import type`) between files: the graph module loading follows. */
const VALUE_IMPORT = /^\s*(?:import|export)\s+(?!type\b)[^;]*?from\s*['"](\.{1,2}\/[^'"]+)['"]/gm;

/** The import cycles among the four layers' files, each as `a.ts → b.ts → a.ts` (one per cycle found). */
function importCycles(root = ROOT): string[] {
  const files = ['core', 'sandbox', 'worker', 'api'].flatMap((layer) => tsFiles(path.join(root, layer)));
  const edges = new Map(
    files.map((f) => [
      f,
      [...fs.readFileSync(f, 'utf8').matchAll(VALUE_IMPORT)]
        .map((m) => path.resolve(path.dirname(f), m[1]!).replace(/\.js$/, '.ts'))
        .filter((target) => fs.existsSync(target)),
    ]),
  );
  const cycles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, trail: string[]) => {
    state.set(file, 'open');
    for (const next of edges.get(file) ?? []) {
      if (state.get(next) === 'open') cycles.push([...trail.slice(trail.indexOf(next)), file, next].map((f) => path.relative(root, f)).join(' → '));
      else if (!state.has(next)) visit(next, [...trail, file]);
    }
    state.set(file, 'done');
  };
  for (const f of files) if (!state.has(f)) visit(f, []);
  return cycles;
}

test('no file imports itself back through others (sandbox/bundle.ts and snapshot.ts once did)', (t) => {
  t.deepEqual(importCycles(), []);
});

test('the cycle check sees a cycle of three files, and ignores type-only imports', (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'layering-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  fs.mkdirSync(path.join(root, 'sandbox'));
  for (const dir of ['core', 'worker', 'api']) fs.mkdirSync(path.join(root, dir));
  fs.writeFileSync(path.join(root, 'sandbox', 'a.ts'), "import { b } from './b.js';\n");
  fs.writeFileSync(path.join(root, 'sandbox', 'b.ts'), "export { c } from './c.js';\n");
  fs.writeFileSync(path.join(root, 'sandbox', 'c.ts'), "import { a } from './a.js';\nimport type { T } from './d.js';\n");
  fs.writeFileSync(path.join(root, 'sandbox', 'd.ts'), "import type { C } from './c.js';\n");
  t.deepEqual(importCycles(root), ['sandbox/a.ts → sandbox/b.ts → sandbox/c.ts → sandbox/a.ts']);
});

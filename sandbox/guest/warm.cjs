// @ts-check
// Warm-up of the guest, so that an execution finds the code it runs already compiled (under gVisor every lazy
// compilation, page fault and first-time syscall is expensive). Two moments:
//  - while a startup snapshot is built (warmUpForSnapshot): the request path runs on an in-memory tool, since vm
//    modules do not exist in the snapshot builder; whatever it compiles is kept in the snapshot;
//  - before a sandbox reports ready (warmUp, `--warm=none|vm|light|full`): `vm` links and runs a small in-memory ES
//    module (what the snapshot could not compile: vm modules), `light` executes the bundled warm-up package
//    (./warmup, ESM importing CommonJS, which also warms Node's CommonJS loader) through the real module loader,
//    `full` also describes it.
'use strict';
const { Console } = require('node:console');
const path = require('node:path');
const { Writable } = require('node:stream');
const util = require('node:util');
const vm = require('node:vm');
const { resolveEntry } = require('./load.cjs');
const { createLoader, createModuleCache, realBuiltin } = require('./modules.cjs');
const { resolveEsm, packageType } = require('./resolve.cjs');
const { runOp, messageOf, looksLikeOom } = require('./run-op.cjs');

const WARMUP_DIR = path.join(__dirname, 'warmup');
const PARAMS = { text: 'x', n: 2 };

const WARM_MODULE = `import fs from 'node:fs';
export const warm = {
  description: 'warm-up tool',
  inputSchema: { type: 'object', properties: { text: { type: 'string', minLength: 1 }, n: { type: 'integer' } }, required: ['text'] },
  execute: async ({ text, n = 1 }) => ({ text: text.repeat(n), exists: typeof fs.existsSync === 'function', at: new Date().toISOString() }),
};`;

/** Runs the warm-up tool as an ES module linked from memory (a built-in import, no files). */
async function warmVm() {
  const mod = new vm.SourceTextModule(WARM_MODULE, { identifier: path.join(WARMUP_DIR, 'memory.mjs') });
  await mod.link(async (specifier) => {
    const real = realBuiltin(specifier);
    const names = Object.keys(real);
    return new vm.SyntheticModule(['default', ...names], function init() {
      this.setExport('default', real);
      for (const name of names) this.setExport(name, real[name]);
    });
  });
  await mod.evaluate();
  const io = { importFile: async () => mod.namespace, entryOf: () => WARMUP_DIR };
  await runOp({ op: 'execute', pkgDir: WARMUP_DIR, exportName: 'warm', params: PARAMS }, io);
  void process.stderr.writable; // where console output goes: a stream of its own, created on first use
}

/**
 * @param {string} mode `none`, `vm`, `light` or `full` (see the header; any other is `light`)
 * @param {import('./modules.cjs').ModuleCache} cache
 */
async function warmUp(mode, cache) {
  if (mode === 'none') return;
  if (mode === 'vm') return warmVm();
  const io = { importFile: createLoader(cache).importFile };
  if (mode === 'full') await runOp({ op: 'describe', pkgDir: WARMUP_DIR }, io);
  await runOp({ op: 'execute', pkgDir: WARMUP_DIR, exportName: 'warm', params: PARAMS }, io);
}

/** The warm-up tool as plain values (no module loading in the snapshot builder). */
const memoryTool = {
  description: 'warm-up tool',
  inputSchema: {
    type: 'object',
    properties: {
      text: { type: 'string', minLength: 1, maxLength: 100, pattern: '^.+$' },
      n: { type: 'integer', minimum: 0, maximum: 10 },
      tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, maxItems: 3 },
      mode: { anyOf: [{ const: 'x' }, { type: 'null' }] },
    },
    required: ['text'],
    additionalProperties: false,
  },
  /** @param {{ text: unknown, n?: number }} params */
  execute: async ({ text, n = 1 }) => ({ text: String(text).repeat(n), at: new Date().toISOString(), items: [1, 2, 3].map((x) => ({ x })) }),
};

/** Node internals a tool commonly reaches (formatting for console.log, streams, timers), run without handles. */
async function warmNodeInternals() {
  const sink = new Writable({ write: (_chunk, _encoding, cb) => cb() });
  const console = new Console({ stdout: sink, stderr: sink });
  console.log('%s %d %o', 'text', 1, { a: [1, { b: new Map([[1, 'x']]) }], d: new Date(0), e: new Error('e') });
  console.error(util.inspect({ nested: { deep: { deeper: [1, 2, 3] } } }, { depth: 4 }));
  sink.end();
  await new Promise((resolve) => setTimeout(resolve, 1));
  await new Promise((resolve) => setImmediate(resolve));
  Buffer.byteLength(JSON.stringify({ x: Buffer.from('abc').toString('base64'), y: new URL('file:///guest/x').href }));
  new TextEncoder().encode('x');
  structuredClone({ a: [1] });
}

async function warmUpForSnapshot() {
  await warmNodeInternals();
  const cache = createModuleCache();
  const io = { importFile: async () => ({ warm: memoryTool, default: { other: memoryTool } }), entryOf: resolveEntry };
  await runOp({ op: 'describe', pkgDir: WARMUP_DIR }, io);
  await runOp({ op: 'execute', pkgDir: WARMUP_DIR, exportName: 'warm', params: JSON.parse(JSON.stringify(PARAMS)) }, io);
  await runOp({ op: 'execute', pkgDir: WARMUP_DIR, exportName: 'warm', params: { text: '', extra: 1, tags: ['c'] } }, io);
  await runOp({ op: 'execute', pkgDir: WARMUP_DIR, exportName: 'missing', params: {} }, io);
  const entry = resolveEntry(WARMUP_DIR);
  resolveEsm(cache.packageJson, './helper.cjs', entry);
  resolveEsm(cache.packageJson, 'node:fs', entry);
  packageType(cache.packageJson, WARMUP_DIR);
  try {
    resolveEsm(cache.packageJson, 'no-such-package/sub', entry);
  } catch (err) {
    looksLikeOom(err);
    messageOf(err);
  }
}

module.exports = { warmUp, warmUpForSnapshot };

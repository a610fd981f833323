/**
 * MCP servers start from a bundle (one module and a few chunks) made at import (sandbox/mcp-bundle.ts): a real server
 * (@modelcontextprotocol/server-everything) and hand-written ones, in gVisor sandboxes with the official MCP client.
 * The bundle is used only when the server started from it lists the very same tools as from its bin; a server it
 * breaks runs as before, and a server reaching outside its package gets no bundle (no host file in it).
 */
import test from 'ava';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { bundleMcpServer } from '../sandbox/mcp-bundle.js';
import { FIXTURES_DIR, startService, type Service } from './helpers/service.js';

const MODULES = path.resolve(new URL('../node_modules', import.meta.url).pathname);
const EVERYTHING = '@modelcontextprotocol/server-everything';
/**
 * The real pdf-reader, pinned here and fetched by `npm pack` from the registry npm is configured with: not a
 * devDependency, because its @sylphx/gust-server names an optional @sylphx/gust-napi@0.1.7 that npm's registry does
 * not have, which `npm install` skips but leaves out of the lock file, and `npm ci` then refuses the lock.
 */
const PDF_READER = '@sylphx/pdf-reader-mcp';
const PDF_READER_PINNED = `${PDF_READER}@2.4.0`;
const BUNDLE = '.toolshed-mcp-bundle/mcp-server.mjs';
const run = promisify(execFile);
let svc: Service;
let root: string;

test.before(async () => {
  svc = await startService();
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'mcp-bundle-'));
});
test.after.always(async () => {
  await svc?.close();
  if (root) await fs.rm(root, { recursive: true, force: true });
});

const importPath = (dir: string, extra: Record<string, unknown> = {}) =>
  svc.request('POST', '/api/admin/packages', { headers: { authorization: `Bearer ${svc.config.ADMIN_TOKEN}` }, body: { source: `path:${dir}`, ...extra } });
const importServer = (dir: string, extra: Record<string, unknown> = {}) => importPath(dir, { kind: 'mcp', ...extra });
const execute = (slug: string, params: unknown) => svc.request('POST', `/api/tools/execute/${slug}`, { body: { params } });
const packageRow = (name: string) => svc.worker!.deps.db('packages').where({ name }).first();
/** What the package's latest import recorded of its bundle (package_imports.startup.bundle). */
const bundleChoice = async (name: string) => {
  const pkg = await packageRow(name);
  const imp = await svc.worker!.deps.db('package_imports').where({ package_id: pkg.id }).orderBy('created_at', 'desc').first();
  return imp?.startup?.bundle as { used: boolean; why: string; computedLoads?: string[] } | undefined;
};

/** A package holding `files`, with `server.cjs` as its bin. */
async function fixture(name: string, files: Record<string, string>): Promise<string> {
  const dir = path.join(root, name.replace('/', '+'));
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'package.json'), JSON.stringify({ name, version: '1.0.0', description: name, bin: { server: 'server.cjs' } }));
  for (const [file, text] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await fs.writeFile(path.join(dir, file), text);
  }
  return dir;
}
const fixtureServer = () => fs.readFile(path.join(FIXTURES_DIR, 'mcp-servers', 'server.cjs'), 'utf8');

test('a real MCP server runs from the bundle made at import: the same tools, and its calls answer', async (t) => {
  const res = await importPath(path.join(MODULES, EVERYTHING));
  t.is(res.status, 201, res.text);
  const row = await packageRow(EVERYTHING);
  t.is(row.manifest.mcp.bundle, BUNDLE, 'the server starts from its bundle');
  t.true(existsSync(path.join(row.install_path, BUNDLE)));
  t.true(res.body.data.tools.some((x: { name: string }) => x.name === 'echo'));
  const echo = await execute(`${EVERYTHING}/echo`, { message: 'from the bundle' });
  t.is(echo.status, 200, echo.text);
  t.deepEqual(echo.body.result, { content: [{ type: 'text', text: 'Echo: from the bundle' }] });
  const sum = await execute(`${EVERYTHING}/get-sum`, { a: 2, b: 3 });
  t.is(sum.status, 200, sum.text);
  t.regex(JSON.stringify(sum.body.result), /5/);
});

/** Each file of a bundle dir with its inode: another inode is another file moved into place. */
const filesOf = async (dir: string) => Promise.all((await fs.readdir(dir)).sort().map(async (f) => `${f}:${(await fs.stat(path.join(dir, f))).ino}`));

test('a bundle in place is used again and never rebuilt under a server that may be running from it; two builds at once leave one', async (t) => {
  // A server that loads a module with import() when called: the chunk a running server reads late.
  const dir = await fixture('@fixtures/bundle-twice', {
    'server.cjs': "require('./lib/impl.cjs');\nif (process.env.NEVER) import('./lib/late.mjs');\n",
    'lib/impl.cjs': await fixtureServer(),
    'lib/late.mjs': 'export const late = 1;\n',
  });
  const bundleDir = path.join(dir, '.toolshed-mcp-bundle');
  const [a, b] = await Promise.all([bundleMcpServer(dir, 'server.cjs'), bundleMcpServer(dir, 'server.cjs')]);
  t.true('file' in a && 'file' in b, JSON.stringify([a, b]));
  if (!('file' in a) || !('file' in b)) return;
  t.is([a, b].filter((r) => r.reused).length, 1, 'the second to finish uses the first one’s');
  t.deepEqual({ ...a, ms: 0, reused: undefined }, { ...b, ms: 0, reused: undefined });
  t.deepEqual(
    (await fs.readdir(dir)).filter((f) => f.includes('.tmp')),
    [],
    'no build dir is left beside it',
  );
  const chunks = (await fs.readdir(bundleDir)).filter((f) => f.startsWith('chunk-'));
  t.true(chunks.length > 0, 'the late import is a chunk');
  const before = await filesOf(bundleDir);
  const again = await bundleMcpServer(dir, 'server.cjs');
  t.like(again, { file: BUNDLE, reused: true, inputs: a.inputs, bytes: a.bytes });
  t.deepEqual(await filesOf(bundleDir), before, 'the same files: nothing removed or moved into place');

  // A bundle of an older builder (its marker without a stamp) is built again.
  await fs.writeFile(path.join(bundleDir, '.made-by-toolshed'), '');
  const rebuilt = await bundleMcpServer(dir, 'server.cjs');
  t.like(rebuilt, { file: BUNDLE, inputs: a.inputs });
  t.false('reused' in rebuilt && rebuilt.reused === true, 'built again, not reused');
  t.notDeepEqual(await filesOf(bundleDir), before);
});

test('two imports of the same bytes at once: one bundle, used, and the server’s calls answer', async (t) => {
  const dir = await fixture('@fixtures/bundle-at-once', {
    'server.cjs': "require('./lib/impl.cjs');\n",
    'lib/impl.cjs': await fixtureServer(),
  });
  const answers = await Promise.all([importServer(dir), importServer(dir)]);
  t.true(
    answers.some((r) => r.status === 201),
    answers.map((r) => r.text).join('\n'),
  );
  const row = await packageRow('@fixtures/bundle-at-once');
  t.is(row.manifest.mcp.bundle, BUNDLE);
  for (let i = 0; i < 3; i++) {
    const call = await execute('@fixtures/bundle-at-once/shout', { text: `call ${i}` });
    t.is(call.status, 200, call.text);
    t.deepEqual(call.body.result, { text: `CALL ${i}` });
  }
});

/** A one-page PDF whose page says `text` (Helvetica; the xref's offsets counted). */
function minimalPdf(text: string): string {
  const page = `BT /F1 24 Tf 72 720 Td (${text}) Tj ET`;
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    `<< /Length ${page.length} >>\nstream\n${page}\nendstream`,
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>',
  ];
  let pdf = '%PDF-1.4\n';
  const offsets = objects.map((o, i) => {
    const at = pdf.length;
    pdf += `${i + 1} 0 obj\n${o}\nendobj\n`;
    return at;
  });
  const xref = pdf.length;
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  return `${pdf}trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
}

test('a bundled server loads what it names at call time from its package: @sylphx/pdf-reader-mcp reads a PDF', async (t) => {
  // read_pdf takes a path or a URL (no bytes), and the sandbox has no network and sees only the package: the real
  // package is unpacked from npm with a PDF beside its code (the import installs its dependencies).
  // pdfjs-dist loads its worker at the first read with `import(this.workerSrc)`, "./pdf.worker.mjs" relative to
  // pdf.mjs: from the bundle's dir it was not found ("Setting up fake worker failed").
  const packed = await fs.mkdtemp(path.join(root, 'pack-'));
  const { stdout } = await run('npm', ['pack', PDF_READER_PINNED, '--json', '--pack-destination', packed], { cwd: packed });
  const dir = path.join(root, 'pdf-reader-mcp');
  await fs.mkdir(dir);
  await run('tar', ['xzf', path.join(packed, (JSON.parse(stdout) as Array<{ filename: string }>)[0].filename), '-C', dir, '--strip-components=1']);
  await fs.writeFile(path.join(dir, 'hello.pdf'), minimalPdf('Hello from a Toolshed sandbox'));
  const res = await importPath(dir);
  t.is(res.status, 201, res.text);
  const row = await packageRow(PDF_READER);
  t.is(row.manifest.mcp.bundle, BUNDLE, 'the server starts from its bundle');
  // The import says why, and names the file whose load by a computed name is found from its own place.
  const choice = await bundleChoice(PDF_READER);
  t.is(choice?.used, true);
  t.regex(choice?.why ?? '', /same 1 tool as from its bin; 1 file of it loads a module by a computed name/);
  t.deepEqual(choice?.computedLoads, ['node_modules/pdfjs-dist/legacy/build/pdf.mjs']);
  // Inside the sandbox the package is at /pkg/<its cache dir's name> (sandbox/package-view.ts).
  const pdf = path.posix.join('/pkg', path.basename(row.install_path), 'hello.pdf');
  const read = await execute(`${PDF_READER}/read_pdf`, { sources: [{ path: pdf }], include_full_text: true });
  t.is(read.status, 200, read.text);
  t.is(read.body.success, true, read.text.slice(0, 800));
  t.regex(JSON.stringify(read.body.result), /Hello from a Toolshed sandbox/);
});

test('a bundled server reads the files beside its module: its __dirname is its own, not the bundle’s', async (t) => {
  // Mode `from-file` lists the tools named in tools.json beside its module (alpha, beta, gamma when it finds none).
  const dir = await fixture('@fixtures/bundle-from-file', {
    'server.cjs': "require('./lib/impl.cjs');\n",
    'lib/impl.cjs': await fixtureServer(),
    'lib/tools.json': JSON.stringify([{ name: 'delta' }, { name: 'epsilon' }]),
  });
  const res = await importServer(dir, { args: ['from-file'] });
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body.data.tools.map((x: { name: string }) => x.name).sort(), ['delta', 'epsilon']);
  t.is((await packageRow('@fixtures/bundle-from-file')).manifest.mcp.bundle, BUNDLE);
  const call = await execute('@fixtures/bundle-from-file/delta', { text: 'x' });
  t.is(call.status, 200, call.text);
  t.deepEqual(call.body.result, { content: [{ type: 'text', text: 'ok' }] });
});

test('a module required by a computed name is found from the requiring file, as outside: the server runs from its bundle', async (t) => {
  // The name is in a variable, so esbuild leaves it to run time; relative to lib/load.cjs, not to the bundle's dir.
  const dir = await fixture('@fixtures/bundle-computed-require', {
    'server.cjs': "require('./lib/load.cjs');\n",
    'lib/load.cjs': "const impl = ['.', 'impl.cjs'].join('/');\nrequire(impl);\n",
    'lib/impl.cjs': await fixtureServer(),
  });
  const res = await importServer(dir);
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body.data.tools.map((x: { name: string }) => x.name).sort(), ['fail', 'misbehave', 'shout']);
  t.is((await packageRow('@fixtures/bundle-computed-require')).manifest.mcp.bundle, BUNDLE);
  const call = await execute('@fixtures/bundle-computed-require/shout', { text: 'from the bundle' });
  t.is(call.status, 200, call.text);
  t.deepEqual(call.body.result, { text: 'FROM THE BUNDLE' });
});

test('a module imported by a computed bare name from a nested dependency is found where that dependency finds it', async (t) => {
  // node_modules/a imports 'b' by a variable; b is a's own (node_modules/a/node_modules/b), not found from the
  // bundle's dir, only from a's file. b loads the fixture server.
  const dir = await fixture('@fixtures/bundle-nested-import', {
    'server.cjs': "require('./lib/noop.cjs');\nimport('a');\n",
    'lib/noop.cjs': 'module.exports = {};\n',
    'lib/impl.cjs': await fixtureServer(),
    'node_modules/a/package.json': JSON.stringify({ name: 'a', version: '1.0.0', type: 'module', exports: './index.js' }),
    'node_modules/a/index.js': "const name = ['b'][0];\nawait import(name);\n",
    'node_modules/a/node_modules/b/package.json': JSON.stringify({ name: 'b', version: '1.0.0', type: 'module', exports: './index.js' }),
    'node_modules/a/node_modules/b/index.js': "import { createRequire } from 'node:module';\ncreateRequire(import.meta.url)('../../../../lib/impl.cjs');\n",
  });
  const res = await importServer(dir);
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body.data.tools.map((x: { name: string }) => x.name).sort(), ['fail', 'misbehave', 'shout']);
  t.is((await packageRow('@fixtures/bundle-nested-import')).manifest.mcp.bundle, BUNDLE);
  const call = await execute('@fixtures/bundle-nested-import/shout', { text: 'nested' });
  t.is(call.status, 200, call.text);
  t.deepEqual(call.body.result, { text: 'NESTED' });
});

test('a server its bundle breaks (a require hidden from esbuild in an eval) runs from its bin as before', async (t) => {
  // `eval('require')` is the bundle's require (made for the bundle's location), which looks for ./lib/impl.cjs beside
  // the bundle, where it is not: the bundle lists no tools.
  const dir = await fixture('@fixtures/bundle-breaks', {
    'server.cjs': "require('./lib/noop.cjs');\nconst load = eval('require');\nload('./lib/impl.cjs');\n",
    'lib/noop.cjs': 'module.exports = {};\n',
    'lib/impl.cjs': await fixtureServer(),
  });
  const res = await importServer(dir);
  t.is(res.status, 201, res.text);
  t.deepEqual(res.body.data.tools.map((x: { name: string }) => x.name).sort(), ['fail', 'misbehave', 'shout']);
  const row = await packageRow('@fixtures/bundle-breaks');
  t.is(row.manifest.mcp.bundle, undefined, 'no bundle: it did not start from one');
  t.like(await bundleChoice('@fixtures/bundle-breaks'), { used: false, why: 'started from its bundle, the server listed no tools (load_error)' });
  const call = await execute('@fixtures/bundle-breaks/shout', { text: 'still runs' });
  t.is(call.status, 200, call.text);
  t.deepEqual(call.body.result, { text: 'STILL RUNS' });
});

test('a server that requires a file outside its package gets no bundle: no host file ends up where a sandbox reads', async (t) => {
  const secretFile = path.join(root, 'host-secret.js');
  await fs.writeFile(secretFile, "module.exports = 'HOST-ONLY-5f3a9c';\n");
  const dir = await fixture('@fixtures/bundle-outside', {
    'server.cjs': `try { process.env.SEEN = require(${JSON.stringify(secretFile)}); } catch {}\nrequire('./lib/impl.cjs');\n`,
    'lib/impl.cjs': await fixtureServer(),
  });
  const res = await importServer(dir);
  t.is(res.status, 201, res.text);
  const row = await packageRow('@fixtures/bundle-outside');
  t.is(row.manifest.mcp.bundle, undefined);
  t.false(existsSync(path.join(row.install_path, BUNDLE)));
  const call = await execute('@fixtures/bundle-outside/shout', { text: 'ok' });
  t.is(call.status, 200, call.text);
});

test('a package that ships a dir named like the bundle keeps its files and runs from its bin', async (t) => {
  const dir = await fixture('@fixtures/bundle-own-dir', {
    'server.cjs': "require('./lib/impl.cjs');\n",
    'lib/impl.cjs': await fixtureServer(),
    '.toolshed-mcp-bundle/notes.txt': 'the package’s own file',
  });
  const res = await importServer(dir);
  t.is(res.status, 201, res.text);
  const row = await packageRow('@fixtures/bundle-own-dir');
  t.is(row.manifest.mcp.bundle, undefined);
  t.is(await fs.readFile(path.join(row.install_path, '.toolshed-mcp-bundle/notes.txt'), 'utf8'), 'the package’s own file');
  const call = await execute('@fixtures/bundle-own-dir/shout', { text: 'mine' });
  t.is(call.status, 200, call.text);
});

test('a server of one file gets no bundle (nothing to save): it is not started twice at import', async (t) => {
  const dir = await fixture('@fixtures/bundle-one-file', { 'server.cjs': await fixtureServer() });
  const res = await importServer(dir);
  t.is(res.status, 201, res.text);
  const row = await packageRow('@fixtures/bundle-one-file');
  t.is(row.manifest.mcp.bundle, undefined);
  t.like(await bundleChoice('@fixtures/bundle-one-file'), { used: false, why: 'one file: a bundle saves nothing' });
  t.false(existsSync(path.join(row.install_path, BUNDLE)));
});

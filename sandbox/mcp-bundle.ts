/**
 * One-file bundles of MCP servers, for faster starts. Under gVisor's ptrace platform every system call of the guest
 * is trapped, and loading a real server's few hundred modules (each resolved, stat'ed, opened and read, its
 * package.json files read) costs 1.5–2 s of CPU (0.4 s outside the sandbox). So at import the worker bundles the
 * server's bin with esbuild into a few minified ES modules in `<package>/.toolshed-mcp-bundle/`: `mcp-server.mjs`, and
 * chunks for what the server imports with `import()` (so a server that loads its HTTP transport only when asked to
 * does not parse it for stdio). The guest loads that file in place of the bin (guest/mcp-pipe.cjs): server-everything
 * lists its tools from a pooled sandbox in ~0.6 s instead of ~1.8 s (bench/mcp-servers.ts).
 *
 * What keeps the bundle's behaviour the server's own:
 * - `import.meta.url` / `.filename` / `.dirname`, and `__filename` / `__dirname` of CommonJS files, are those of each
 *   original file (computed from the bundle's own location, so they hold inside the sandbox too): a server reading
 *   `../docs/x.md` next to its module still finds it. Names are kept (`keepNames`).
 * - A module loaded by a computed name (`import(x)`, `import.meta.resolve(x)`, and in CommonJS `require(x)` and
 *   `require.resolve`), which esbuild leaves to run time, is found from the original file: a relative name against
 *   it, a CommonJS require made for it. So what the bundle does not carry loads from the package as outside
 *   (pdfjs-dist's `import(this.workerSrc)` of "./pdf.worker.mjs", at @sylphx/pdf-reader-mcp's first read_pdf).
 * - Native addons (`*.node`) and whatever esbuild cannot resolve stay outside the bundle, loaded from the package's
 *   node_modules by a `require` made for the bundle's location.
 * - Only files inside the package are bundled: a package that reaches outside its directory (an absolute path, a
 *   link, `../..`) gets no bundle, so no host file can end up in what a sandbox reads.
 * - The import uses the bundle only when the server, started from it, lists the very same tools as started from its
 *   bin (worker/import/mcp.ts); otherwise it runs as before. The host never runs the bundle.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';

/** Where the bundle goes, relative to the package dir (a dot-dir npm packages do not ship). */
export const MCP_BUNDLE_DIR = '.toolshed-mcp-bundle';
export const MCP_BUNDLE_FILE = `${MCP_BUNDLE_DIR}/mcp-server.mjs`;
/**
 * Marks a bundle dir as ours (a package that ships a dir of that name gets no bundle, and keeps its files), and holds
 * what was built (`Stamped`): a bundle is made once per package dir and builder, then found by every later import.
 */
const MARKER = '.made-by-toolshed';
const BUILD_TIMEOUT_MS = 60_000;
const SOURCE_FILE = /\.(m|c)?js$/;

// The bundle's own location, and the per-file values derived from it (a file's path relative to the bundle's dir).
const BANNER = [
  "import { createRequire as __tsCreateRequire } from 'node:module';",
  "import { fileURLToPath as __tsFileURLToPath, pathToFileURL as __tsPathToFileURL } from 'node:url';",
  "import { dirname as __tsDirname } from 'node:path';",
  'const require = __tsCreateRequire(import.meta.url);',
  'const __tsUrl = (rel) => new URL(rel, import.meta.url).href;',
  'const __tsFile = (rel) => __tsFileURLToPath(__tsUrl(rel));',
  'const __tsDir = (rel) => __tsDirname(__tsFile(rel));',
  // What a file loads by a computed name: a relative name is the original file's, as outside the bundle.
  "const __tsRel = (rel, spec) => (typeof spec === 'string' && /^\\.\\.?(\\/|$)/.test(spec) ? new URL(spec, __tsUrl(rel)).href : spec);",
  // A bare name is looked up from the bundle's dir first (the package's own node_modules), then from the file's.
  'const __tsImport = (rel, spec, o) => {',
  '  const load = (x) => (o === undefined ? import(x) : import(x, o));',
  "  if (typeof spec !== 'string' || __tsRel(rel, spec) !== spec || /^([a-z][\\w+.-]*:|\\/)/i.test(spec)) return load(__tsRel(rel, spec));",
  '  return load(spec).catch((err) => {',
  '    let file;',
  '    try { file = __tsRequire(rel).resolve(spec); } catch { throw err; }',
  '    return load(__tsPathToFileURL(file).href);',
  '  });',
  '};',
  'const __tsResolve = (rel, spec) => (__tsRel(rel, spec) === spec ? import.meta.resolve(spec) : __tsRel(rel, spec));',
  'const __tsRequires = new Map();',
  'const __tsRequire = (rel) => __tsRequires.get(rel) ?? __tsRequires.set(rel, __tsCreateRequire(__tsFile(rel))).get(rel);',
].join('\n');

const ESM_SYNTAX = /^\s*(import\s*[\w{*'"]|export\s)/m;
const OWN_DIRNAME = /\b(const|let|var|function|class)\s+(__dirname|__filename)\b|\b(__dirname|__filename)\s*=[^=]/;

/**
 * Loads by a computed name, which esbuild leaves to run time (pdfjs-dist's `import(this.workerSrc)` of
 * "./pdf.worker.mjs"). Not after `.`/`#` or a word (a method `x.import(`), nor a method definition (`import(a) {`); a
 * quoted name (after comments) is esbuild's to bundle.
 */
const COMPUTED_IMPORT = /(?<![\w$.#])import\s*\((?!\s*(?:\/\*[\s\S]*?\*\/\s*)*['"])(?![^()]*\)\s*\{)/g;
const META_RESOLVE = /\bimport\.meta\.resolve\s*\(/g;
const COMPUTED_REQUIRE = /(?<![\w$.#])require\s*\((?!\s*(?:\/\*[\s\S]*?\*\/\s*)*['"])(?![^()]*\)\s*\{)/g;
const REQUIRE_RESOLVE = /(?<![\w$.#])require\.resolve\b/g;
/** A CommonJS file whose `require` is its own (declared, assigned, or a wrapper's parameter): left as it is. */
const OWN_REQUIRE = /\b(const|let|var|function|class)\s+require\b|(?<![\w$.])require\s*=[^=]|[(,]\s*require\s*[,)]/;

/** Whether a source file loads a module by a computed name (what relocate points at the original file). */
export function loadsByComputedName(source: string): boolean {
  return [COMPUTED_IMPORT, META_RESOLVE, COMPUTED_REQUIRE, REQUIRE_RESOLVE].some((re) => source.search(re) !== -1);
}

/** A source file's text with its own location put back in place of the bundle's. */
export function relocate(source: string, rel: string): string {
  const at = JSON.stringify(rel);
  // A `#!` line is valid only first in the file: kept as a comment, so that a line can go before it.
  let out = (source.startsWith('#!') ? `//${source}` : source)
    .replace(/\bimport\.meta\.url\b/g, `__tsUrl(${at})`)
    .replace(/\bimport\.meta\.filename\b/g, `__tsFile(${at})`)
    .replace(/\bimport\.meta\.dirname\b/g, `__tsDir(${at})`);
  const cjs = !ESM_SYNTAX.test(source);
  // A module loaded by a computed name is found from the original file (a relative name against it; CommonJS's
  // require made for it), as the server finds it outside: files the bundle does not carry load from the package.
  // `__tsHere` is a variable of the file's own (esbuild renames each module's), so no quote goes inside a string.
  const before = out;
  out = out.replace(COMPUTED_IMPORT, '__tsImport(__tsHere, ').replace(META_RESOLVE, '__tsResolve(__tsHere, ');
  if (cjs && !OWN_REQUIRE.test(source)) out = out.replace(COMPUTED_REQUIRE, '__tsRequire(__tsHere)(').replace(REQUIRE_RESOLVE, '__tsRequire(__tsHere).resolve');
  if (out !== before) out = `var __tsHere = ${at};\n${out}`;
  // CommonJS: its own __filename/__dirname, unless the file declares or assigns them itself (or is an ES module).
  if (/\b__(dirname|filename)\b/.test(source) && cjs && !OWN_DIRNAME.test(source)) {
    out = `var __filename = __tsFile(${at}), __dirname = __tsDir(${at});\n${out}`;
  }
  return out;
}

/**
 * `computedLoads`: the package's files that load a module by a computed name (found from their own place at run time).
 * `reused`: the bundle was there already, made by an earlier import of the same files (the package dir is one version's
 * bytes) with the same builder.
 */
export type BundleResult = { file: string; inputs: number; bytes: number; ms: number; computedLoads: string[]; reused?: true } | { error: string };

/** What the marker holds: the builder's stamp and the bundle's figures. */
interface Stamped {
  stamp: string;
  inputs: number;
  bytes: number;
  computedLoads: string[];
}

/**
 * Who built a bundle: esbuild's version, the bin, and this file's code (its banner, relocation and build options). A
 * bundle with another stamp (an older Toolshed's, or another bin's) is built again.
 */
function stampOf(esbuildVersion: string, bin: string): string {
  return createHash('sha256')
    .update([esbuildVersion, bin, BANNER, relocate.toString(), loadsByComputedName.toString(), bundleMcpServer.toString()].join('\0'))
    .digest('hex')
    .slice(0, 32);
}

/** What a bundle dir's marker holds, or undefined (none, or an empty one: a bundle of the builder before stamps). */
async function readMarker(dir: string): Promise<Partial<Stamped> | undefined> {
  try {
    return JSON.parse(await fs.readFile(path.join(dir, MARKER), 'utf8'));
  } catch {
    return undefined;
  }
}

/** The figures of the bundle in `dir` if it is ours and was built with `stamp`. */
async function builtWith(dir: string, stamp: string): Promise<Stamped | undefined> {
  const marked = await readMarker(dir);
  return marked?.stamp === stamp && existsSync(path.join(dir, path.basename(MCP_BUNDLE_FILE))) ? (marked as Stamped) : undefined;
}

/**
 * Bundles the server's bin into `<pkgDir>/.toolshed-mcp-bundle/` (moved into place when done); an error says why there is
 * none (the server then runs from its bin). A bundle in place is never replaced by one of the same stamp: servers of
 * this version may be running from it, loading its chunks as they are called (a rebuild's remove-then-rename once
 * made a running server-everything's prompts/get fail with ERR_MODULE_NOT_FOUND for a chunk). Two imports building at
 * once: the first to move its bundle into place wins, the other uses it. A server of one file gets its figures only.
 * A package could ship such a dir with a marker of the right stamp: it would run that code in place of esbuild's, in
 * the same sandbox and only if it lists the very tools its bin lists, which gives it nothing its bin could not do.
 */
export async function bundleMcpServer(pkgDir: string, bin: string): Promise<BundleResult> {
  const started = performance.now();
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch (err) {
    return { error: `esbuild is not available: ${(err as Error).message}` };
  }
  const root = await fs.realpath(pkgDir);
  const entry = path.resolve(root, bin);
  if (!entry.startsWith(`${root}/`)) return { error: 'the bin is outside the package' };
  const outFile = path.join(root, MCP_BUNDLE_FILE);
  const outDir = path.dirname(outFile);
  const inside = (file: string) => file === root || file.startsWith(`${root}/`);
  const computedLoads = new Set<string>();
  const relocatePlugin: import('esbuild').Plugin = {
    name: 'toolshed-relocate',
    setup(build) {
      build.onLoad({ filter: SOURCE_FILE }, async (args) => {
        const real = await fs.realpath(args.path);
        if (!inside(real)) return { errors: [{ text: `outside the package: ${path.relative(root, args.path)}` }] };
        const source = await fs.readFile(real, 'utf8');
        if (loadsByComputedName(source)) computedLoads.add(path.relative(root, real));
        return { contents: relocate(source, path.relative(outDir, real)), loader: 'js', resolveDir: path.dirname(args.path) };
      });
    },
  };
  const external = new Set(['*.node']);
  if (existsSync(outDir) && !existsSync(path.join(outDir, MARKER))) return { error: `the package has a ${MCP_BUNDLE_DIR} of its own` };
  const stamp = stampOf(esbuild.version, path.relative(root, entry));
  const found = (m: Stamped): BundleResult => ({
    file: MCP_BUNDLE_FILE,
    inputs: m.inputs,
    bytes: m.bytes,
    ms: Math.round(performance.now() - started),
    computedLoads: m.computedLoads,
    reused: true,
  });
  const existing = await builtWith(outDir, stamp);
  if (existing) return found(existing);
  // Built beside, in a dir of the same depth (so relative paths hold), then moved into place.
  const tmp = `${outDir}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    // Up to three passes: what esbuild cannot resolve becomes external (loaded at run time, if at all).
    for (let pass = 0; ; pass++) {
      const build = esbuild.build({
        entryPoints: [entry],
        absWorkingDir: root,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: 'node20',
        minify: true,
        keepNames: true,
        legalComments: 'none',
        outdir: tmp,
        splitting: true,
        entryNames: 'mcp-server',
        chunkNames: 'chunk-[hash]',
        outExtension: { '.js': '.mjs' },
        external: [...external],
        banner: { js: BANNER },
        plugins: [relocatePlugin],
        metafile: true,
        logLevel: 'silent',
        write: true,
      });
      const r = await Promise.race([
        build.then(
          (ok) => ({ ok }),
          (err: { errors?: { text: string }[] }) => ({ errors: err.errors ?? [{ text: String(err) }] }),
        ),
        new Promise<{ timeout: true }>((resolve) => setTimeout(() => resolve({ timeout: true }), BUILD_TIMEOUT_MS).unref()),
      ]);
      if ('timeout' in r) return { error: `bundling took over ${BUILD_TIMEOUT_MS / 1000} s` };
      if ('errors' in r) {
        const unresolved = r.errors.map((e) => e.text.match(/^Could not resolve "([^"]+)"/)?.[1]).filter((s): s is string => s !== undefined);
        if (pass < 2 && unresolved.length === r.errors.length && unresolved.length > 0) {
          for (const s of unresolved) external.add(s);
          continue;
        }
        return { error: r.errors[0]?.text.slice(0, 300) ?? 'bundling failed' };
      }
      // Every bundled file is the package's own (onLoad refused others; JSON and other loaders are checked here).
      const inputs = Object.keys(r.ok.metafile?.inputs ?? {});
      for (const input of inputs) {
        const real = await fs.realpath(path.resolve(root, input)).catch(() => '');
        if (!inside(real)) return { error: `the server reaches outside its package: ${input.slice(0, 200)}` };
      }
      let bytes = 0;
      for (const f of await fs.readdir(tmp)) bytes += (await fs.stat(path.join(tmp, f))).size;
      // A server of one file: its figures only, nothing written (a bundle of it saves nothing; bundle-choice.ts).
      if (inputs.length < 2) return { file: MCP_BUNDLE_FILE, inputs: inputs.length, bytes, ms: Math.round(performance.now() - started), computedLoads: [] };
      const marked: Stamped = { stamp, inputs: inputs.length, bytes, computedLoads: [...computedLoads].sort() };
      await fs.writeFile(path.join(tmp, MARKER), JSON.stringify(marked));
      await fs.chmod(tmp, 0o755);
      if (!(await moveIntoPlace(tmp, outDir, stamp))) {
        const theirs = await builtWith(outDir, stamp);
        if (theirs) return found(theirs);
        return { error: 'another bundle took its place while it was built' };
      }
      return { file: MCP_BUNDLE_FILE, inputs: marked.inputs, bytes, ms: Math.round(performance.now() - started), computedLoads: marked.computedLoads };
    }
  } catch (err) {
    return { error: (err as Error).message.slice(0, 300) };
  } finally {
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

/**
 * Renames `tmp` to `outDir` unless a bundle is there already (false: the caller reads that one). A bundle of ours with
 * another stamp (an older builder's) is moved aside first, then removed.
 */
async function moveIntoPlace(tmp: string, outDir: string, stamp: string): Promise<boolean> {
  if (await renameUnlessThere(tmp, outDir)) return true;
  if ((await readMarker(outDir))?.stamp === stamp) return false;
  const aside = `${tmp}.old`;
  await fs.rename(outDir, aside);
  try {
    return await renameUnlessThere(tmp, outDir);
  } finally {
    await fs.rm(aside, { recursive: true, force: true });
  }
}

/** Renames a dir; false when a non-empty dir is at `to` already (another build moved its bundle there first). */
async function renameUnlessThere(from: string, to: string): Promise<boolean> {
  try {
    await fs.rename(from, to);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
    return false;
  }
}

/**
 * The compiled tree `npm test` runs: every TypeScript file of ours transpiled by esbuild (about a second for the
 * whole tree) into `.build/test-<pid>/`, beside links to everything else, so that each test file's process loads plain
 * JavaScript instead of compiling through tsx's loader thread (3–4 s of CPU per file measured, 2026-11-27, on ~110
 * files). Types are checked by `npm run typecheck`, not here: esbuild only strips them.
 *
 * The layout mirrors the repository, so every path a module computes from `import.meta.url` (migrations, the guest
 * code, fixtures, node_modules) points at the same thing: a top-level folder holding no TypeScript is a symbolic link
 * to the real one; the others are rebuilt with each `.ts` file compiled to `.js` (source map inline, for stack traces
 * and ava's excerpts) and every other file hard-linked. Tests that read the sources themselves (the layering rule, the
 * preflight run through tsx) use `SOURCE_ROOT` (tests/helpers/source-root.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

/** Never mirrored: the tree itself, what git keeps apart, and outputs of other builds. */
const SKIPPED = new Set(['.build', '.git', 'dist']);
/** What tests write for a person to look at (git-ignored): linked, so that it lands in the repository's folders. */
const WRITTEN = ['tests/output', 'tests/browser/screenshots'];
/** Linked whole: the browser app's sources (bundled by web/build.ts, not loaded), and what tests write. */
const LINKED = new Set(['web/src', ...WRITTEN]);

const isSource = (name: string) => name.endsWith('.ts') && !name.endsWith('.d.ts');

function holdsTypeScript(abs: string): boolean {
  return fs
    .readdirSync(abs, { withFileTypes: true })
    .some((e) => (e.isDirectory() ? e.name !== 'node_modules' && holdsTypeScript(path.join(abs, e.name)) : isSource(e.name)));
}

/** A hard link (a file of the tree, not a link a reader resolves back to the sources), or a copy across devices. */
function place(from: string, to: string): void {
  try {
    fs.linkSync(from, to);
  } catch {
    fs.copyFileSync(from, to);
  }
}

/**
 * A build output beside its own source (`x.js` beside `x.ts`): left out, since esbuild writes the compiled `x.js` at
 * that place in the tree, which through a hard link would overwrite the file in the repository.
 */
const strayOutput = (file: string) => file.endsWith('.js') && fs.existsSync(`${file.slice(0, -3)}.ts`);

/** Whether a process with this pid runs (one of another user counts). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Builds `<root>/.build/test-<pid>` for this run (runs side by side in one checkout each have their own; trees of runs
 * whose process is gone are removed) and returns its path; the caller removes it. `ava` (package.json's `ava` key, for
 * running a `.ts` file with tsx) becomes the tree's own configuration for the compiled `.js` test files.
 */
export async function buildCompiledTree(root: string): Promise<string> {
  const parent = path.join(root, '.build');
  fs.mkdirSync(parent, { recursive: true });
  for (const name of fs.readdirSync(parent)) {
    const pid = /^test-(\d+)$/.exec(name)?.[1];
    if (pid && !alive(Number(pid))) fs.rmSync(path.join(parent, name), { recursive: true, force: true });
  }
  const out = path.join(parent, `test-${process.pid}`);
  fs.rmSync(out, { recursive: true, force: true });
  fs.mkdirSync(out);
  for (const dir of WRITTEN) fs.mkdirSync(path.join(root, dir), { recursive: true });
  const sources: string[] = [];
  // A top-level folder without TypeScript (docs, examples, node_modules) is a symbolic link; inside a folder with
  // some, every file is a file of the tree (a fixture package copied from it is copied, not linked back).
  const mirror = (rel: string) => {
    for (const e of fs.readdirSync(path.join(root, rel), { withFileTypes: true })) {
      const entryRel = path.join(rel, e.name);
      const from = path.join(root, entryRel);
      const to = path.join(out, entryRel);
      if (rel === '' && (SKIPPED.has(e.name) || e.name === 'package.json')) continue;
      if (LINKED.has(entryRel) || e.name === 'node_modules' || (rel === '' && !(e.isDirectory() ? holdsTypeScript(from) : isSource(e.name)))) {
        fs.symlinkSync(from, to);
      } else if (e.isDirectory()) {
        fs.mkdirSync(to);
        mirror(entryRel);
      } else if (isSource(e.name)) sources.push(from);
      else if (e.isFile() && !strayOutput(from)) place(from, to);
      else if (e.isSymbolicLink()) fs.symlinkSync(fs.readlinkSync(from), to);
    }
  };
  mirror('');
  await build({
    entryPoints: sources,
    outdir: out,
    outbase: root,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    // The maps name the .ts files and lines; the sources stay in the repository (Node parses each map at load).
    sourcesContent: false,
    logLevel: 'warning',
  });
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const { extensions: _ts, nodeArguments: _tsx, files: _files, ...ava } = pkg.ava;
  // A larger young generation: a test process allocates much and briefly (boots, requests, parsing), and V8's
  // scavenges were ~6 % of its CPU. 32 MB semi-spaces cut the CPU of three service files by ~10 % (44.9 → 40.4 s, two
  // runs each, 2026-11-27); 64 MB did no better.
  // The preload records each test process's wall time and CPU when tests/run.ts asks (tests/helpers/file-times.ts).
  pkg.ava = {
    ...ava,
    files: ['tests/**/*.test.js'],
    nodeArguments: [
      ...(process.env.TOOLSHED_TEST_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.TOOLSHED_TEST_CPU_PROF}`] : []),
      '--max-semi-space-size=32',
      `--import=${path.join(out, 'tests', 'helpers', 'file-times.js')}`,
    ],
  };
  fs.writeFileSync(path.join(out, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`);
  return out;
}

/**
 * The compiled tree `npm test` runs in (tests/helpers/compiled-tree.ts), built from a small repository of its own:
 * TypeScript becomes JavaScript that runs without a loader and maps back to the source, every other file is the same
 * file, and nothing is written through to the repository.
 */
import test from 'ava';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { buildCompiledTree } from './helpers/compiled-tree.js';

function makeRepository(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'toolshed-tree-'));
  const write = (rel: string, text: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  };
  write(
    'package.json',
    JSON.stringify({ type: 'module', ava: { extensions: { ts: 'module' }, nodeArguments: ['--import=tsx'], files: ['tests/**/*.test.ts'], timeout: '3m' } }),
  );
  write('README.md', '# the root\n');
  write('core/greet.ts', "export const greet = (name: string): string => ['hello', name].join(' ');\n");
  write('core/data/words.txt', 'one two\n');
  write(
    'core/run.ts',
    "import fs from 'node:fs';\nimport { greet } from './greet.js';\nconsole.log(greet(fs.readFileSync(new URL('./data/words.txt', import.meta.url), 'utf8').trim()));\n",
  );
  // A stray build output beside its source, as a developer's editor or tsc might leave one.
  write('core/greet.js', 'STRAY\n');
  write('core/fail.ts', "\n\nexport function fail(): never {\n  throw new Error('from the source');\n}\nfail();\n");
  write('docs/guide.md', 'a guide\n');
  return root;
}

test('TypeScript runs compiled without a loader, beside the files it reads; the rest is linked; the repository is untouched', async (t) => {
  const root = makeRepository();
  const tree = await buildCompiledTree(root);
  try {
    t.is(tree, path.join(root, '.build', `test-${process.pid}`));
    t.is(execFileSync(process.execPath, [path.join(tree, 'core/run.js')], { encoding: 'utf8' }), 'hello one two\n');
    t.is(fs.readFileSync(path.join(root, 'core/greet.js'), 'utf8'), 'STRAY\n', 'the stray file in the repository is as it was');
    t.false(fs.readFileSync(path.join(tree, 'core/greet.js'), 'utf8').includes('STRAY'));
    t.false(fs.existsSync(path.join(tree, 'core/greet.ts')), 'sources are not copied');
    // Other files inside a folder with TypeScript are files of the tree (a copy of one is a copy, not a link back).
    t.false(fs.lstatSync(path.join(tree, 'core/data/words.txt')).isSymbolicLink());
    t.true(fs.lstatSync(path.join(tree, 'docs')).isSymbolicLink(), 'a top-level folder without TypeScript is a link');
    t.is(fs.realpathSync(path.join(tree, 'README.md')), path.join(root, 'README.md'));
    // A stack trace names the TypeScript source and its line.
    const failed = (() => {
      try {
        execFileSync(process.execPath, ['--enable-source-maps', path.join(tree, 'core/fail.js')], { encoding: 'utf8', stdio: 'pipe' });
        return '';
      } catch (err) {
        return String((err as { stderr: string }).stderr);
      }
    })();
    t.regex(failed, new RegExp(`${path.join(root, 'core/fail.ts').replaceAll('/', '\\/')}:4`));
    // ava in the tree runs the compiled test files, without tsx.
    const ava = JSON.parse(fs.readFileSync(path.join(tree, 'package.json'), 'utf8')).ava;
    t.deepEqual(ava.files, ['tests/**/*.test.js']);
    t.is(ava.extensions, undefined);
    t.false(JSON.stringify(ava.nodeArguments).includes('tsx'));
    t.is(ava.timeout, '3m');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

test('a tree left by a run that is gone is removed by the next build; a live run keeps its own', async (t) => {
  const root = makeRepository();
  try {
    // A pid no process has (above the kernel's pid_max), and this process's own parent, which lives.
    const dead = path.join(root, '.build', 'test-4194305');
    const live = path.join(root, '.build', `test-${process.ppid}`);
    fs.mkdirSync(dead, { recursive: true });
    fs.mkdirSync(live, { recursive: true });
    await buildCompiledTree(root);
    t.false(fs.existsSync(dead));
    t.true(fs.existsSync(live));
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});

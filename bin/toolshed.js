#!/usr/bin/env node
// `npx toolshed …`: runs the TypeScript source through tsx (a dependency), or the compiled CLI when the sources are
// not there (a published build, dist/; or the tests' compiled tree, beside this file).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import path from 'node:path';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
// `eval` is an HTTP client: it starts without the database CLI's imports (seconds on a busy machine).
const entry = process.argv[2] === 'eval' ? 'eval-main' : 'cli';
const source = path.join(root, 'bin', `${entry}.ts`);
const compiled = path.join(root, 'bin', `${entry}.js`);
if (existsSync(compiled)) {
  // The compiled tree the tests run in (tests/helpers/compiled-tree.ts): its JavaScript is beside this file.
  await import(pathToFileURL(compiled).href);
} else if (!existsSync(source)) {
  await import(pathToFileURL(path.join(root, 'dist', 'bin', `${entry}.js`)).href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import(pathToFileURL(source).href);
}

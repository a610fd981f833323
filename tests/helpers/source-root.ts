/**
 * The repository's own folder, also when a test runs from the compiled tree (tests/helpers/compiled-tree.ts), where
 * the root's files are links to it: for tests that read the TypeScript sources, run them through tsx, or look beside
 * the repository.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const SOURCE_ROOT = path.dirname(fs.realpathSync(fileURLToPath(new URL('../../README.md', import.meta.url))));

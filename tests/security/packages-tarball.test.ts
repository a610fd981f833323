/**
 * npm tarballs are unpacked on the worker host as root. A hostile tarball (the registry serves whatever the author
 * uploaded) must not leave files owned by another uid, setuid/setgid/sticky bits, device files or fifos, nor write or
 * link anything outside the package directory. These tests build real .tgz files, header by header, and run them
 * through the same unpack function the npm install path uses.
 */
import test from 'ava';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { Header } from 'tar';
import { InstallError, unpackTarball } from '../../sandbox/packages.js';

type Entry = {
  path: string;
  type?: 'File' | 'Directory' | 'SymbolicLink' | 'Link' | 'CharacterDevice' | 'BlockDevice' | 'FIFO';
  mode?: number;
  uid?: number;
  gid?: number;
  body?: string;
  linkpath?: string;
  devmaj?: number;
  devmin?: number;
};

/** A gzipped ustar archive with exactly these headers (no sanitising, unlike a packer reading a real tree). */
function tarball(entries: Entry[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.body ?? '');
    const h = new Header({
      path: e.path,
      type: e.type ?? 'File',
      mode: e.mode ?? 0o644,
      uid: e.uid ?? 0,
      gid: e.gid ?? 0,
      uname: e.uid ? 'someone' : 'root',
      gname: e.gid ? 'someone' : 'root',
      size: body.length,
      mtime: new Date(0),
      linkpath: e.linkpath,
      devmaj: e.devmaj ?? 0,
      devmin: e.devmin ?? 0,
    });
    const block = Buffer.alloc(512);
    h.encode(block, 0);
    blocks.push(block, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return zlib.gzipSync(Buffer.concat(blocks));
}

async function scratch(t: { teardown: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-tar-test-'));
  t.teardown(() => fs.rm(dir, { recursive: true, force: true }));
  return dir;
}

async function unpack(root: string, entries: Entry[]): Promise<{ dest: string; error?: unknown }> {
  const file = path.join(root, 'pkg.tgz');
  await fs.writeFile(file, tarball(entries));
  // Unpacked one level below the scratch dir, so an escape by `..` would land in `root` where the test can see it.
  const dest = path.join(root, 'work', 'package');
  await fs.mkdir(dest, { recursive: true });
  try {
    await unpackTarball(file, dest);
    return { dest };
  } catch (error) {
    return { dest, error };
  }
}

const manifest = JSON.stringify({ name: 'tar-fixture', version: '1.0.0', toolshed: { category: 'automation', tools: ['x'] } });

test('owners, setuid/setgid/sticky bits and group/world write bits from the tarball are not kept', async (t) => {
  const root = await scratch(t);
  const { dest, error } = await unpack(root, [
    { path: 'package/', type: 'Directory', mode: 0o1777, uid: 4321, gid: 4321 },
    { path: 'package/package.json', body: manifest, mode: 0o666, uid: 4321, gid: 4321 },
    { path: 'package/bin/', type: 'Directory', mode: 0o2777, uid: 4321 },
    { path: 'package/bin/suid-root', body: '#!/bin/sh\nid\n', mode: 0o4755, uid: 0 },
    { path: 'package/bin/sgid', body: '#!/bin/sh\nid\n', mode: 0o2775, uid: 4321, gid: 4321 },
    { path: 'package/index.js', body: 'export const x = 1;\n', mode: 0o1666, uid: 4321, gid: 4321 },
  ]);
  t.is(error, undefined, String(error));
  const me = { uid: process.getuid!(), gid: process.getgid!() };
  const expected: Record<string, number> = { '.': 0o755, 'package.json': 0o644, bin: 0o755, 'bin/suid-root': 0o755, 'bin/sgid': 0o755, 'index.js': 0o644 };
  for (const [rel, mode] of Object.entries(expected)) {
    const st = await fs.lstat(path.join(dest, rel));
    t.is(st.mode & 0o7777, mode, `${rel} mode is ${(st.mode & 0o7777).toString(8)}`);
    t.deepEqual({ uid: st.uid, gid: st.gid }, me, `${rel} is owned by the installing user`);
  }
  t.is(JSON.parse(await fs.readFile(path.join(dest, 'package.json'), 'utf8')).name, 'tar-fixture');
});

test('device files and fifos are refused, naming the entry, and none is created', async (t) => {
  for (const entry of [
    { path: 'package/mem', type: 'CharacterDevice', devmaj: 1, devmin: 1, mode: 0o666 },
    { path: 'package/disk', type: 'BlockDevice', devmaj: 8, devmin: 0, mode: 0o666 },
    { path: 'package/pipe', type: 'FIFO', mode: 0o666 },
  ] as Entry[]) {
    const root = await scratch(t);
    const { dest, error } = await unpack(root, [{ path: 'package/package.json', body: manifest }, entry]);
    t.true(error instanceof InstallError && error.userError, `${entry.type}: ${String(error)}`);
    t.regex(String((error as Error)?.message), new RegExp(path.basename(entry.path)));
    t.false(existsSync(path.join(dest, path.basename(entry.path))), `${entry.type} was not created`);
  }
});

test('entries escaping the package (absolute paths, `..`, links pointing outside) are refused and write nothing outside', async (t) => {
  const marker = `escaped-${crypto.randomBytes(4).toString('hex')}`;
  const cases: Entry[] = [
    { path: `package/../${marker}.txt`, body: 'x' },
    { path: `package/../../${marker}.txt`, body: 'x' },
    { path: `/tmp/${marker}.txt`, body: 'x' },
    { path: 'package/hard-abs', type: 'Link', linkpath: '/etc/hostname' },
    { path: 'package/hard-up', type: 'Link', linkpath: 'package/../../../../../../etc/hostname' },
    { path: 'package/sym-abs', type: 'SymbolicLink', linkpath: '/etc/shadow' },
    { path: 'package/sym-up', type: 'SymbolicLink', linkpath: '../../../../../../etc/shadow' },
    { path: 'package/sub/sym-up', type: 'SymbolicLink', linkpath: '../../x' },
  ];
  for (const entry of cases) {
    const root = await scratch(t);
    const { dest, error } = await unpack(root, [{ path: 'package/package.json', body: manifest }, entry]);
    const label = `${entry.type ?? 'File'} ${entry.path}`;
    t.true(error instanceof InstallError && error.userError, `${label}: ${String(error)}`);
    t.regex(String((error as Error)?.message), /outside|escap|absolute|\.\./, label);
    t.false(existsSync(path.join(root, `${marker}.txt`)) || existsSync(path.join(root, 'work', `${marker}.txt`)), `${label} wrote outside`);
    t.false(existsSync(`/tmp/${marker}.txt`), `${label} wrote to an absolute path`);
    await fs.rm(`/tmp/${marker}.txt`, { force: true });
    // Whatever was unpacked before the refusal must not contain a link or a second name for a host file.
    for (const name of ['hard-abs', 'hard-up', 'sym-abs', 'sym-up', 'sub/sym-up']) {
      t.false(existsSync(path.join(dest, name)) && (await fs.lstat(path.join(dest, name))).isSymbolicLink(), `${label}: ${name} left as a link`);
      const st = await fs.lstat(path.join(dest, name)).catch(() => null);
      t.true(st === null || st.nlink === 1, `${label}: ${name} is a hard link`);
    }
  }
});

test('links that stay inside the package are kept', async (t) => {
  const root = await scratch(t);
  const { dest, error } = await unpack(root, [
    { path: 'package/package.json', body: manifest },
    { path: 'package/lib/real.js', body: 'export const x = 1;\n' },
    { path: 'package/index.js', type: 'SymbolicLink', linkpath: 'lib/real.js' },
    { path: 'package/lib/again.js', type: 'Link', linkpath: 'package/lib/real.js' },
  ]);
  t.is(error, undefined, String(error));
  t.is(await fs.readlink(path.join(dest, 'index.js')), 'lib/real.js');
  t.is(await fs.readFile(path.join(dest, 'index.js'), 'utf8'), 'export const x = 1;\n');
  t.is(await fs.readFile(path.join(dest, 'lib/again.js'), 'utf8'), 'export const x = 1;\n');
});

// Bounds (issue 43 item 5): our own unpacking counts entries and declared sizes as it reads each header, and stops.
async function unpackWith(root: string, bytes: Buffer, npm: Parameters<typeof unpackTarball>[2]): Promise<{ dest: string; error?: unknown }> {
  const file = path.join(root, 'bounded.tgz');
  await fs.writeFile(file, bytes);
  const dest = path.join(root, 'bounded', 'package');
  await fs.mkdir(dest, { recursive: true });
  try {
    await unpackTarball(file, dest, npm, 'bounded@1.0.0');
    return { dest };
  } catch (error) {
    return { dest, error };
  }
}

test('unpacking stops at MAX_PACKAGE_FILES and MAX_PACKAGE_INSTALLED_MB, naming the limit, before writing past it', async (t) => {
  const root = await scratch(t);
  const many = tarball([{ path: 'package/package.json', body: '{}' }, ...Array.from({ length: 50 }, (_, i) => ({ path: `package/f${i}.js`, body: 'x' }))]);
  const files = await unpackWith(root, many, { maxFiles: 10 });
  t.true(files.error instanceof InstallError && files.error.userError, String(files.error));
  t.regex((files.error as Error).message, /^bounded@1\.0\.0: the package has over 10 files and directories, the limit \(MAX_PACKAGE_FILES\)/);
  t.true((await fs.readdir(files.dest)).length <= 10, 'nothing past the limit is written');

  const big = tarball([
    { path: 'package/package.json', body: '{}' },
    { path: 'package/big.bin', body: 'y'.repeat(2 * 1024 * 1024) },
  ]);
  await fs.rm(path.join(root, 'bounded'), { recursive: true, force: true });
  const bytes = await unpackWith(root, big, { maxInstalledBytes: 1024 * 1024 });
  t.regex(String((bytes.error as Error)?.message), /bounded@1\.0\.0: the package is over 1\.0 MiB, the limit \(MAX_PACKAGE_INSTALLED_MB\)/);
  t.false(existsSync(path.join(bytes.dest, 'big.bin')), 'the file over the limit is never written');
});

test('a tarball inflating over 1000-fold is refused as a decompression bomb, not a 500', async (t) => {
  const root = await scratch(t);
  const header = Buffer.alloc(512);
  new Header({ path: 'package/zeros.bin', type: 'File', mode: 0o644, size: 64 * 1024 * 1024, mtime: new Date(0) }).encode(header, 0);
  const bomb = zlib.gzipSync(Buffer.concat([header, Buffer.alloc(64 * 1024 * 1024), Buffer.alloc(1024)]), { level: 9 });
  const { error } = await unpackWith(root, bomb, {});
  t.true(error instanceof InstallError && error.userError, String(error));
  t.regex((error as Error).message, /bounded@1\.0\.0: the package's tarball inflates over 1000-fold \(a decompression bomb\)/);
});

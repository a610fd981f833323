/**
 * A stand-in for the npm registry (outside us), speaking its protocol: `GET /<name>` answers the packument (versions
 * with their dist: tarball, shasum, integrity; dist-tags), `GET /-/<file>.tgz` the tarball. Tarballs are real, made
 * with `npm pack` from fixture folders. `publish` makes a packed version visible, as `npm publish` would.
 */
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface StandInRegistry {
  url: string;
  /** An npmrc pointing npm at this registry, with a cache of its own (NPM_USERCONFIG). */
  npmrc: string;
  publish(version: string): void;
  close(): Promise<void>;
}

export async function startNpmRegistry(name: string, folders: Record<string, string>): Promise<StandInRegistry> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-npm-registry-'));
  const packed = new Map<string, { file: string; shasum: string; integrity: string; manifest: Record<string, unknown> }>();
  for (const [version, folder] of Object.entries(folders)) {
    const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', dir], { cwd: folder });
    const file = path.join(dir, JSON.parse(stdout)[0].filename);
    const bytes = await fs.readFile(file);
    packed.set(version, {
      file,
      shasum: crypto.createHash('sha1').update(bytes).digest('hex'),
      integrity: `sha512-${crypto.createHash('sha512').update(bytes).digest('base64')}`,
      manifest: JSON.parse(await fs.readFile(path.join(folder, 'package.json'), 'utf8')),
    });
  }
  const published: string[] = [];
  const server = http.createServer((req, res) => {
    void (async () => {
      const url = decodeURIComponent(req.url ?? '/');
      const tarball = [...packed.entries()].find(([v, p]) => published.includes(v) && url === `/-/${path.basename(p.file)}`);
      if (tarball) {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(await fs.readFile(tarball[1].file));
        return;
      }
      if (url !== `/${name}` || published.length === 0) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'Not found' }));
        return;
      }
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const versions = Object.fromEntries(
        published.map((v) => {
          const p = packed.get(v)!;
          return [v, { ...p.manifest, dist: { tarball: `${base}/-/${path.basename(p.file)}`, shasum: p.shasum, integrity: p.integrity } }];
        }),
      );
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache' });
      res.end(JSON.stringify({ name, 'dist-tags': { latest: published[published.length - 1] }, versions }));
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const npmrc = path.join(dir, 'npmrc');
  await fs.writeFile(npmrc, `registry=${url}\ncache=${path.join(dir, 'cache')}\nprefer-online=true\n`);
  return {
    url,
    npmrc,
    publish(version) {
      if (!packed.has(version)) throw new Error(`no packed ${version}`);
      published.push(version);
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A scratch npm registry (outside us), speaking its protocol on 127.0.0.1: `GET /<name>` answers the packument
 * (versions with their dist: tarball, shasum, integrity; dist-tags), `GET /-/<file>.tgz` the tarball. Tarballs are
 * real, made with `npm pack` from folders the test writes, or given as bytes. It serves what an attacker's registry
 * entry can hold: a tarball whose own package.json names another package, a dist.integrity that is not the tarball's,
 * a tarball that is a decompression bomb. Point npm at it with `npmrc` (NPM_USERCONFIG).
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

interface Served {
  file: string;
  shasum: string;
  integrity: string;
  manifest: Record<string, unknown>;
}

export interface ScratchRegistry {
  url: string;
  /** An npmrc pointing npm at this registry, with a cache of its own (NPM_USERCONFIG). */
  npmrc: string;
  /**
   * Packs `folder` and serves it as `name@version` (the folder's package.json may say otherwise: that is what is
   * served). `integrity`: the dist.integrity the packument claims instead of the tarball's own. Returns the
   * tarball's real integrity.
   */
  add(name: string, version: string, folder: string, opts?: { integrity?: string }): Promise<string>;
  /** Serves the given tarball bytes as `name@version`, with `manifest` as its packument entry. */
  addTarball(name: string, version: string, bytes: Buffer, manifest?: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
}

const integrityOf = (bytes: Buffer) => `sha512-${crypto.createHash('sha512').update(bytes).digest('base64')}`;

export async function startScratchRegistry(): Promise<ScratchRegistry> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'toolshed-npm-registry-'));
  // name -> version -> what is served, in the order versions were added (the last is `latest`).
  const packages = new Map<string, Map<string, Served>>();
  let files = 0;
  const serve = async (name: string, version: string, bytes: Buffer, manifest: Record<string, unknown>, integrity?: string) => {
    const file = path.join(dir, `t${++files}.tgz`);
    await fs.writeFile(file, bytes);
    const own = integrityOf(bytes);
    const versions = packages.get(name) ?? new Map<string, Served>();
    versions.set(version, { file, shasum: crypto.createHash('sha1').update(bytes).digest('hex'), integrity: integrity ?? own, manifest });
    packages.set(name, versions);
    return own;
  };
  const server = http.createServer((req, res) => {
    void (async () => {
      const url = decodeURIComponent(req.url ?? '/');
      for (const versions of packages.values()) {
        const hit = [...versions.values()].find((s) => url === `/-/${path.basename(s.file)}`);
        if (hit) {
          res.writeHead(200, { 'content-type': 'application/octet-stream' });
          res.end(await fs.readFile(hit.file));
          return;
        }
      }
      const name = url.slice(1);
      const versions = packages.get(name);
      if (!versions || versions.size === 0) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'Not found' }));
        return;
      }
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      const entries = Object.fromEntries(
        [...versions.entries()].map(([v, s]) => [
          v,
          { ...s.manifest, name, version: v, dist: { tarball: `${base}/-/${path.basename(s.file)}`, shasum: s.shasum, integrity: s.integrity } },
        ]),
      );
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache' });
      res.end(JSON.stringify({ name, 'dist-tags': { latest: [...versions.keys()].at(-1) }, versions: entries }));
    })().catch(() => res.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const npmrc = path.join(dir, 'npmrc');
  await fs.writeFile(npmrc, `registry=${url}\ncache=${path.join(dir, 'cache')}\nprefer-online=true\n`);
  return {
    url,
    npmrc,
    async add(name, version, folder, opts = {}) {
      const out = await fs.mkdtemp(path.join(dir, 'pack-'));
      const { stdout } = await run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', out], { cwd: folder });
      const bytes = await fs.readFile(path.join(out, JSON.parse(stdout)[0].filename));
      await fs.rm(out, { recursive: true, force: true });
      const manifest = JSON.parse(await fs.readFile(path.join(folder, 'package.json'), 'utf8'));
      return serve(name, version, bytes, manifest, opts.integrity);
    },
    addTarball(name, version, bytes, manifest = {}) {
      return serve(name, version, bytes, manifest);
    },
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await fs.rm(dir, { recursive: true, force: true });
    },
  };
}

export interface StandInRegistry {
  url: string;
  npmrc: string;
  /** Makes a packed version visible, as `npm publish` would. */
  publish(version: string): Promise<void>;
  close(): Promise<void>;
}

/** One package's versions packed from folders up front, each served once `publish`ed. */
export async function startNpmRegistry(name: string, folders: Record<string, string>): Promise<StandInRegistry> {
  const registry = await startScratchRegistry();
  return {
    url: registry.url,
    npmrc: registry.npmrc,
    async publish(version) {
      if (!(version in folders)) throw new Error(`no folder for ${version}`);
      await registry.add(name, version, folders[version]);
    },
    close: () => registry.close(),
  };
}

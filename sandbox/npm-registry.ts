/**
 * Asks the npm registry which versions of a package exist (the npm poller, worker/tasks/npm-poll.ts). The registry's
 * address is npm's own configuration (`npm config get registry`, honouring NPM_USERCONFIG), as for installs; the
 * abbreviated packument (`application/vnd.npm.install-v1+json`) lists the versions and dist-tags.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { npmEnv, type NpmOptions } from './packages.js';

const run = promisify(execFile);
const FETCH_TIMEOUT_MS = 30_000;

export async function npmRegistryUrl(npm: NpmOptions = {}, signal?: AbortSignal): Promise<string> {
  const { stdout } = await run('npm', ['config', 'get', 'registry'], { env: npmEnv(npm), timeout: 30_000, signal });
  const url = stdout.trim();
  return url.endsWith('/') ? url : `${url}/`;
}

export interface PublishedVersions {
  versions: string[];
  /** The `latest` dist-tag, when the registry has one. */
  latest: string | null;
}

/** The versions published for `name`; undefined when the registry does not know the package. */
export async function fetchPublishedVersions(registry: string, name: string, signal?: AbortSignal): Promise<PublishedVersions | undefined> {
  // A scoped name keeps its `@` and encodes its `/`, as npm itself asks.
  const url = new URL(name.replace('/', '%2f'), registry);
  const res = await fetch(url, {
    headers: { accept: 'application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8' },
    signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(FETCH_TIMEOUT_MS)]) : AbortSignal.timeout(FETCH_TIMEOUT_MS),
  });
  if (res.status === 404) return undefined;
  if (!res.ok) throw new Error(`the registry answered ${res.status} for ${name}`);
  const body = (await res.json()) as { versions?: Record<string, unknown>; 'dist-tags'?: Record<string, string> };
  return { versions: Object.keys(body.versions ?? {}), latest: body['dist-tags']?.latest ?? null };
}

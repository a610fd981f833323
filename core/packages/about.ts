/**
 * What a package says about itself, read at import from the installed package (issue 47, "Beyond the fixes"): its
 * README (the first README* file at the package's root, else package.json's `readme`), cut at README_MAX_BYTES; its
 * licence (package.json `license`, an SPDX expression, or the older `licenses` list); its repository as a browsable
 * https URL (hosted-git-info turns `github:a/b`, `git+https://…/b.git` and `a/b` into one); its homepage. Nothing is
 * invented: a field the package.json lacks is null. Only https (and http) URLs are kept, so a `javascript:` link cannot
 * reach a page. Rendering is the web app's (marked + DOMPurify, web/src/components/readme.tsx).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import hostedGitInfo from 'hosted-git-info';

/** A README longer than this is cut (at a line end when there is one), and says so. */
export const README_MAX_BYTES = 64 * 1024;

export interface PackageAbout {
  readme: string | null;
  readmeTruncated: boolean;
  license: string | null;
  repository: string | null;
  homepage: string | null;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' && v.trim() ? v.trim() : undefined);

/** An http(s) URL as given, or undefined (a `javascript:` or `file:` one is not a link to show). */
function webUrl(v: string | undefined): string | undefined {
  if (!v) return undefined;
  try {
    const u = new URL(v);
    return u.protocol === 'https:' || u.protocol === 'http:' ? u.href : undefined;
  } catch {
    return undefined;
  }
}

export function repositoryUrl(repository: unknown): string | null {
  const raw = str(repository) ?? (repository && typeof repository === 'object' ? str((repository as { url?: unknown }).url) : undefined);
  if (!raw) return null;
  const hosted = hostedGitInfo.fromUrl(raw);
  const directory = repository && typeof repository === 'object' ? str((repository as { directory?: unknown }).directory) : undefined;
  if (hosted) {
    const browse = hosted.browse();
    return webUrl(directory ? hosted.browse(directory) : browse) ?? null;
  }
  return webUrl(raw.replace(/^git\+/, '').replace(/\.git$/, '')) ?? null;
}

export function licenseOf(pkg: Record<string, unknown>): string | null {
  const license = str(pkg.license) ?? (pkg.license && typeof pkg.license === 'object' ? str((pkg.license as { type?: unknown }).type) : undefined);
  if (license) return license.slice(0, 200);
  if (Array.isArray(pkg.licenses)) {
    const types = pkg.licenses.map((l) => (l && typeof l === 'object' ? str((l as { type?: unknown }).type) : str(l))).filter((x): x is string => !!x);
    if (types.length) return types.join(' OR ').slice(0, 200);
  }
  return null;
}

/** Cuts text to at most `max` bytes of UTF-8, at the last line end within them when there is one. */
function cut(text: string, max: number): { text: string; truncated: boolean } {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length <= max) return { text, truncated: false };
  const head = bytes
    .subarray(0, max)
    .toString('utf8')
    .replace(/\uFFFD$/, '');
  const nl = head.lastIndexOf('\n');
  return { text: nl > max / 2 ? head.slice(0, nl + 1) : head, truncated: true };
}

async function readmeText(dir: string, pkg: Record<string, unknown>): Promise<string | undefined> {
  let names: string[] = [];
  try {
    names = await fs.readdir(dir);
  } catch {
    names = [];
  }
  // README.md before README.markdown, README.txt, README (npm's own order of preference is much the same).
  const candidates = names.filter((n) => /^readme(\.(md|markdown|mdown|txt|rst))?$/i.test(n)).sort((a, b) => rank(a) - rank(b));
  for (const name of candidates) {
    const file = path.join(dir, name);
    try {
      const stat = await fs.lstat(file);
      if (!stat.isFile()) continue; // a link could point anywhere on the host
      const handle = await fs.open(file, 'r');
      try {
        const buf = Buffer.alloc(Math.min(stat.size, README_MAX_BYTES + 4));
        const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
        return buf.subarray(0, bytesRead).toString('utf8');
      } finally {
        await handle.close();
      }
    } catch {}
  }
  const fromJson = str(pkg.readme);
  return fromJson && fromJson !== 'ERROR: No README data found!' ? fromJson : undefined;
}
const rank = (name: string) => (/\.md$/i.test(name) ? 0 : /\.markdown$/i.test(name) ? 1 : /\.(mdown|txt|rst)$/i.test(name) ? 2 : 3);

/** What the installed package at `dir` (its package.json read already) says about itself. */
export async function readAbout(dir: string, pkg: Record<string, unknown>): Promise<PackageAbout> {
  const text = await readmeText(dir, pkg);
  const readme = text === undefined ? undefined : cut(text, README_MAX_BYTES);
  return {
    readme: readme?.text.trim() ? readme.text : null,
    readmeTruncated: readme?.truncated ?? false,
    license: licenseOf(pkg),
    repository: repositoryUrl(pkg.repository),
    homepage: webUrl(str(pkg.homepage)) ?? null,
  };
}

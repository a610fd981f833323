/**
 * Scrubs host details out of a text that anyone may read (a tool's healthError, a package's import error): the
 * sandbox's and Node's messages name absolute paths — the package cache, DATA_DIR, a home directory — and carry stack
 * frames, which tell a reader how the host is laid out. Paths inside the tool's own package become package-relative
 * (`<package>/index.js`), every other absolute path becomes `<path>`, and stack frame lines are dropped.
 */

/** The guest's view of the package in a gVisor sandbox: /pkg/<dir name>. */
const GUEST_PACKAGE = /^\/pkg\/[^/]+(?=\/|$)/;
/**
 * An absolute path or file:// URL that starts a token: not the path part of an http URL, not `a/b`, and not what
 * follows one of our marks (so that scrubbing twice changes nothing). Stops at whitespace, quotes and brackets; keeps
 * `:line:col`.
 */
const ABSOLUTE_PATH = /(?<![\w.:/\\~>-])(?:file:\/\/)?\/[^\s'"`()<>[\]{},;]+/g;
const STACK_FRAME = /^[ \t]*at .*(?:\r?\n|$)/gm;

export const PACKAGE_MARK = '<package>';
export const PATH_MARK = '<path>';

/** `packageDir`: the package's directory on the host, when known (paths under it become package-relative). */
export function scrubHostPaths(text: string, packageDir?: string | null): string {
  const pkg = packageDir ? packageDir.replace(/\/+$/, '') : undefined;
  const out = text
    .replace(STACK_FRAME, '')
    .replace(ABSOLUTE_PATH, (match) => {
      const p = match.startsWith('file://') ? decodeFileUrl(match.slice('file://'.length)) : match;
      if (pkg && (p === pkg || p.startsWith(`${pkg}/`))) return PACKAGE_MARK + p.slice(pkg.length);
      if (GUEST_PACKAGE.test(p)) return p.replace(GUEST_PACKAGE, PACKAGE_MARK);
      return PATH_MARK;
    })
    .trim();
  return out || (text.trim() ? 'details withheld' : out);
}

function decodeFileUrl(p: string): string {
  try {
    return decodeURIComponent(p);
  } catch {
    return p;
  }
}

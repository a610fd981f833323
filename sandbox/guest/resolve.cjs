// @ts-check
// ES module resolution for the guest's own module loader (modules.cjs), following Node's algorithm for what packages
// use: relative, absolute and file: specifiers (exact files, as in Node), bare package names through "exports"
// (conditions node/import/default, subpath patterns) or else "main"/index.js, "#imports", and a package importing
// itself by name. The guest cannot use Node's resolver: it runs from a startup snapshot, where import() and
// import.meta do not exist. Reads go through a per-sandbox cache of package.json files.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { isBuiltin } = require('node:module');
const { fileURLToPath } = require('node:url');

/** @typedef {import('./load.cjs').Manifest} Manifest */
/** package.json files by directory (null: none there), for the sandbox's life. @typedef {Map<string, Manifest | null>} PackageJsonCache */
/**
 * Where an "exports"/"imports" target leads: a file of the package, or a bare specifier ("imports" only).
 * @typedef {{ file: string, bare?: undefined } | { bare: string, file?: undefined }} Target
 */

const IMPORT_CONDITIONS = new Set(['node', 'import', 'node-addons', 'default']);
const LEGACY_MAIN_SUFFIXES = ['', '.js', '.json', '.node', '/index.js', '/index.json', '/index.node'];

/**
 * @param {string} what
 * @param {string} from
 */
const notFound = (what, from) => Object.assign(new Error(`Cannot find ${what} imported from ${from}`), { code: 'ERR_MODULE_NOT_FOUND' });

/**
 * @param {string | undefined} file undefined is no file
 * @returns {file is string}
 */
function isFile(file) {
  try {
    return fs.statSync(/** @type {string} */ (file)).isFile();
  } catch {
    return false;
  }
}

/**
 * package.json of a directory (parsed), or null; cached in `jsonCache` (a Map) for the sandbox's life.
 * @param {PackageJsonCache} jsonCache
 * @param {string} dir
 * @returns {Manifest | null}
 */
function readPackageJson(jsonCache, dir) {
  if (jsonCache.has(dir)) return /** @type {Manifest | null} */ (jsonCache.get(dir));
  /** @type {Manifest | null} */
  let json = null;
  try {
    json = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
  } catch (err) {
    const e = /** @type {NodeJS.ErrnoException} */ (err);
    if (e && e.code !== 'ENOENT' && e.code !== 'ENOTDIR') throw err;
  }
  jsonCache.set(dir, json);
  return json;
}

/**
 * The nearest directory at or above `dir` holding a package.json, with it.
 * @param {PackageJsonCache} jsonCache
 * @param {string} dir
 * @returns {{ dir: string, json: Manifest } | undefined}
 */
function packageScope(jsonCache, dir) {
  for (let d = dir; ; d = path.dirname(d)) {
    const json = readPackageJson(jsonCache, d);
    if (json) return { dir: d, json };
    if (path.dirname(d) === d) return undefined;
  }
}

/**
 * A target of "exports"/"imports": a string, an array of fallbacks, or an object of conditions.
 * @param {string} pkgDir
 * @param {unknown} target
 * @param {string | undefined} star
 * @param {Set<string>} conditions
 * @returns {Target | undefined}
 */
function resolveTarget(pkgDir, target, star, conditions) {
  if (typeof target === 'string') {
    if (!target.startsWith('./')) return star === undefined ? { bare: target } : { bare: target.replaceAll('*', star) };
    const rel = star === undefined ? target : target.replaceAll('*', star);
    return { file: path.join(pkgDir, rel) };
  }
  if (Array.isArray(target)) {
    for (const item of target) {
      const r = resolveTarget(pkgDir, item, star, conditions);
      if (r) return r;
    }
    return undefined;
  }
  if (target && typeof target === 'object') {
    for (const [key, value] of Object.entries(target)) {
      if (!conditions.has(key)) continue;
      const r = resolveTarget(pkgDir, value, star, conditions);
      if (r) return r;
    }
  }
  return undefined;
}

/**
 * Looks `key` up in an exports/imports map: an exact entry first, then the longest matching `*` pattern.
 * @param {Record<string, unknown>} map
 * @param {string} key
 * @returns {{ target: unknown, star?: string } | undefined}
 */
function matchMap(map, key) {
  if (Object.hasOwn(map, key) && !key.includes('*')) return { target: map[key] };
  /** @type {{ prefix: string, target: unknown, star: string } | undefined} */
  let best;
  for (const pattern of Object.keys(map)) {
    const star = pattern.indexOf('*');
    if (star === -1 || pattern.indexOf('*', star + 1) !== -1) continue;
    const prefix = pattern.slice(0, star);
    const suffix = pattern.slice(star + 1);
    if (key.length < pattern.length || !key.startsWith(prefix) || (suffix && !key.endsWith(suffix))) continue;
    if (!best || prefix.length > best.prefix.length) best = { prefix, target: map[pattern], star: key.slice(star, key.length - suffix.length) };
  }
  return best;
}

/**
 * @param {NonNullable<import('./load.cjs').ExportsField>} exportsField
 * @param {string} subpath
 * @returns {{ target: unknown, star?: string } | undefined}
 */
function exportsEntry(exportsField, subpath) {
  const isSugar = typeof exportsField === 'string' || Array.isArray(exportsField) || !Object.keys(exportsField).some((k) => k.startsWith('.'));
  if (isSugar) return subpath === '.' ? { target: exportsField } : undefined;
  return matchMap(exportsField, subpath);
}

/**
 * @param {string} pkgDir
 * @param {Manifest} json
 */
function legacyMain(pkgDir, json) {
  const main = typeof json.main === 'string' && json.main ? path.join(pkgDir, json.main) : undefined;
  if (main) for (const suffix of LEGACY_MAIN_SUFFIXES) if (isFile(main + suffix)) return main + suffix;
  for (const name of ['index.js', 'index.json', 'index.node']) if (isFile(path.join(pkgDir, name))) return path.join(pkgDir, name);
  return undefined;
}

/** @param {string} specifier */
function splitPackageName(specifier) {
  const parts = specifier.split('/');
  const count = specifier.startsWith('@') ? 2 : 1;
  const name = parts.slice(0, count).join('/');
  if (!name || (count === 2 && parts.length < 2)) return undefined;
  return { name, subpath: parts.length > count ? `./${parts.slice(count).join('/')}` : '.' };
}

/**
 * @param {string} pkgDir
 * @param {Manifest | null} json
 * @param {string} subpath
 * @param {string} parentFile
 * @param {string} specifier
 * @returns {string}
 */
function fromPackage(pkgDir, json, subpath, parentFile, specifier) {
  if (json && json.exports !== undefined && json.exports !== null) {
    const entry = exportsEntry(json.exports, subpath);
    const r = entry && resolveTarget(pkgDir, entry.target, entry.star, IMPORT_CONDITIONS);
    if (!r || r.bare) {
      throw Object.assign(new Error(`Package subpath '${subpath}' is not defined by "exports" in ${pkgDir}/package.json imported from ${parentFile}`), {
        code: 'ERR_PACKAGE_PATH_NOT_EXPORTED',
      });
    }
    if (!isFile(r.file)) throw notFound(`module '${r.file}'`, parentFile);
    return r.file;
  }
  const file = subpath === '.' ? legacyMain(pkgDir, json ?? {}) : path.join(pkgDir, subpath);
  if (!file || !isFile(file)) throw notFound(`package '${specifier}'`, parentFile);
  return file;
}

/**
 * @param {PackageJsonCache} jsonCache
 * @param {string} specifier
 * @param {string} parentFile
 * @returns {string}
 */
function resolveBare(jsonCache, specifier, parentFile) {
  const parsed = splitPackageName(specifier);
  if (!parsed) throw Object.assign(new Error(`Invalid module specifier '${specifier}'`), { code: 'ERR_INVALID_MODULE_SPECIFIER' });
  const scope = packageScope(jsonCache, path.dirname(parentFile));
  if (scope && scope.json.name === parsed.name && scope.json.exports !== undefined) {
    return fromPackage(scope.dir, scope.json, parsed.subpath, parentFile, specifier);
  }
  for (let dir = path.dirname(parentFile); ; dir = path.dirname(dir)) {
    if (path.basename(dir) !== 'node_modules') {
      const pkgDir = path.join(dir, 'node_modules', parsed.name);
      const json = readPackageJson(jsonCache, pkgDir);
      if (json || fs.existsSync(pkgDir)) return fromPackage(pkgDir, json, parsed.subpath, parentFile, specifier);
    }
    if (path.dirname(dir) === dir) throw notFound(`package '${parsed.name}'`, parentFile);
  }
}

/**
 * @param {PackageJsonCache} jsonCache
 * @param {string} specifier
 * @param {string} parentFile
 * @returns {string}
 */
function resolveImports(jsonCache, specifier, parentFile) {
  const scope = packageScope(jsonCache, path.dirname(parentFile));
  const entry = scope?.json.imports && matchMap(scope.json.imports, specifier);
  const r = entry && resolveTarget(scope.dir, entry.target, entry.star, IMPORT_CONDITIONS);
  if (!r)
    throw Object.assign(new Error(`Package import specifier '${specifier}' is not defined imported from ${parentFile}`), {
      code: 'ERR_PACKAGE_IMPORT_NOT_DEFINED',
    });
  if (r.bare) return resolveEsm(jsonCache, r.bare, parentFile);
  if (!isFile(r.file)) throw notFound(`module '${r.file}'`, parentFile);
  return r.file;
}

/**
 * Resolves an import specifier from a file: an absolute file path, or `node:<id>` for a built-in.
 * @param {PackageJsonCache} jsonCache
 * @param {string} specifier
 * @param {string} parentFile
 * @returns {string}
 */
function resolveEsm(jsonCache, specifier, parentFile) {
  if (specifier.startsWith('node:')) return specifier;
  if (isBuiltin(specifier)) return `node:${specifier}`;
  if (specifier.startsWith('file:')) specifier = fileURLToPath(specifier);
  if (specifier.startsWith('/') || specifier.startsWith('./') || specifier.startsWith('../') || specifier === '.' || specifier === '..') {
    const file = path.resolve(path.dirname(parentFile), decodeURIComponent(specifier));
    if (!isFile(file)) throw notFound(`module '${file}'`, parentFile);
    return file;
  }
  if (specifier.startsWith('#')) return resolveImports(jsonCache, specifier, parentFile);
  return resolveBare(jsonCache, specifier, parentFile);
}

/**
 * "module" or "commonjs" for a .js file: the `type` of its nearest package.json.
 * @param {PackageJsonCache} jsonCache
 * @param {string} dir
 */
function packageType(jsonCache, dir) {
  const scope = packageScope(jsonCache, dir);
  return scope && scope.json.type === 'module' ? 'module' : 'commonjs';
}

module.exports = { resolveEsm, packageType, readPackageJson };

// @ts-check
// The guest's module loader for tool packages. ES modules are linked with vm.SourceTextModule
// (--experimental-vm-modules) and resolved by resolve.cjs; the guest runs from a startup snapshot, where Node's own
// import() does not exist. Two kinds of loader share one per-sandbox cache (sources, V8 code caches, compiled
// CommonJS wrappers, resolutions, package.json files — never an evaluated module):
//  - the main-context loader (one-shot sandboxes): ESM in the guest's own context, CommonJS through Node's require;
//  - a fresh-context loader (reuse mode, one per execution): everything is evaluated anew in a vm context, CommonJS
//    through a require of that context, and Node's built-ins as per-context shallow copies, so that assigning to
//    `fs.readFileSync` in one execution is not seen by the next.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { createRequire, isBuiltin } = require('node:module');
const { fileURLToPath, pathToFileURL } = require('node:url');
const { readManifestFile, resolveEntry } = require('./load.cjs');
const { resolveEsm, packageType, readPackageJson } = require('./resolve.cjs');

/** @typedef {import('./load.cjs').Namespace} Namespace */
/** A built-in module's exports (Node's own values, of any built-in's shape). @typedef {Record<string, any>} BuiltinModule */
/** A built-in read once per sandbox, for per-context copies. @typedef {{ real: BuiltinModule, proto: object | null, descriptors: PropertyDescriptorMap | undefined }} BuiltinTemplate */
/**
 * @typedef {{
 *   importDynamic: (specifier: string, parentFile: string) => Promise<vm.Module>,
 *   entryOf: import('./load.cjs').EntryOf,
 *   importFile: import('./load.cjs').ImportFile,
 * }} Loader
 */
/**
 * @typedef {{
 *   sources: Map<string, string>,
 *   codeCache: Map<string, Buffer>,
 *   scripts: Map<string, vm.Script>,
 *   resolved: Map<string, string>,
 *   requires: Map<string, NodeJS.Require>,
 *   packageJson: import('./resolve.cjs').PackageJsonCache,
 *   builtins: Map<string, BuiltinTemplate>,
 *   current: Loader | undefined,
 * }} ModuleCache
 */
/** A fresh context's require (for CommonJS files, and `module.createRequire`). @typedef {((specifier: string) => unknown) & { resolve: (specifier: string) => string, cache: Record<string, unknown> }} ContextRequire */
/**
 * A CommonJS module evaluated in a fresh context.
 * @typedef {{ id: string, filename: string, path: string, exports: any, loaded: boolean, children: unknown[], paths: string[], require?: ContextRequire }} CjsModule
 */

const CJS_WRAPPER = ['(function (exports, require, module, __filename, __dirname) { ', '\n})'];
const USES_IMPORT_HOOKS = /\bimport\s*(\(|\.\s*meta\b)/;

/**
 * Everything cached for one sandbox: nothing here holds an evaluated module or a context.
 * @returns {ModuleCache}
 */
function createModuleCache() {
  return {
    sources: new Map(),
    codeCache: new Map(),
    scripts: new Map(),
    resolved: new Map(),
    requires: new Map(),
    packageJson: new Map(),
    builtins: new Map(),
    /** The fresh-context loader of the running execution (CommonJS scripts are shared by all contexts). */
    current: undefined,
  };
}

/**
 * @param {ModuleCache} cache
 * @param {string} file
 */
function sourceOf(cache, file) {
  let source = cache.sources.get(file);
  if (source === undefined) {
    source = fs.readFileSync(file, 'utf8');
    if (source.charCodeAt(0) === 0xfeff) source = source.slice(1);
    if (source.startsWith('#!')) source = `//${source}`;
    cache.sources.set(file, source);
  }
  return source;
}

/**
 * @param {ModuleCache} cache
 * @param {string} file
 * @returns {'esm' | 'cjs' | 'json' | 'addon'}
 */
function formatOf(cache, file) {
  const ext = path.extname(file);
  if (ext === '.mjs') return 'esm';
  if (ext === '.cjs') return 'cjs';
  if (ext === '.json') return 'json';
  if (ext === '.node') return 'addon';
  return packageType(cache.packageJson, path.dirname(file)) === 'module' ? 'esm' : 'cjs';
}

/**
 * @param {ModuleCache} cache
 * @param {string} specifier
 * @param {string} parentFile
 * @returns {string}
 */
function resolveImport(cache, specifier, parentFile) {
  const key = `${parentFile}\0${specifier}`;
  let hit = cache.resolved.get(key);
  if (hit === undefined) cache.resolved.set(key, (hit = resolveEsm(cache.packageJson, specifier, parentFile)));
  return hit;
}

/**
 * Node's own require of a directory (cached per directory).
 * @param {ModuleCache} cache
 * @param {string} dir
 * @returns {NodeJS.Require}
 */
function nativeRequire(cache, dir) {
  let req = cache.requires.get(dir);
  if (!req) cache.requires.set(dir, (req = createRequire(path.join(dir, 'noop.js'))));
  return req;
}

/**
 * Resolves a require (CommonJS conditions, Node's resolver) to a `node:` id or an absolute file path.
 * @param {ModuleCache} cache
 * @param {string} specifier
 * @param {string} parentFile
 * @returns {string}
 */
function resolveRequire(cache, specifier, parentFile) {
  const key = `cjs\0${parentFile}\0${specifier}`;
  let hit = cache.resolved.get(key);
  if (hit === undefined) {
    hit = nativeRequire(cache, path.dirname(parentFile)).resolve(specifier);
    if (!path.isAbsolute(hit)) hit = hit.startsWith('node:') ? hit : `node:${hit}`;
    cache.resolved.set(key, hit);
  }
  return hit;
}

/**
 * The compiled wrapper of a CommonJS file: a context-independent script, run once per context that requires it. Its
 * import() goes to the loader of the running execution (none once that ended: the import fails).
 * @param {ModuleCache} cache
 * @param {string} file
 */
function cjsScript(cache, file) {
  let script = cache.scripts.get(file);
  if (!script) {
    script = new vm.Script(`${CJS_WRAPPER[0]}${sourceOf(cache, file)}${CJS_WRAPPER[1]}`, {
      filename: file,
      importModuleDynamically: (specifier) => /** @type {Loader} */ (cache.current).importDynamic(specifier, file),
    });
    cache.scripts.set(file, script);
  }
  return script;
}

/**
 * A built-in module by id (`fs`, `fs/promises`, ...); throws for an unknown one.
 * @param {string} specifier
 * @returns {BuiltinModule}
 */
function realBuiltin(specifier) {
  const id = specifier.startsWith('node:') ? specifier.slice(5) : specifier;
  // process.getBuiltinModule exists from Node 20.16; before, require() of a built-in does the same.
  const real = process.getBuiltinModule ? process.getBuiltinModule(`node:${id}`) : isBuiltin(`node:${id}`) ? require(`node:${id}`) : undefined;
  if (real === undefined) throw Object.assign(new Error(`No such built-in module: node:${id}`), { code: 'ERR_UNKNOWN_BUILTIN_MODULE' });
  return real;
}

/**
 * Own property descriptors of a built-in module, read once per sandbox (for per-context copies).
 * @param {ModuleCache} cache
 * @param {string} id
 */
function builtinTemplate(cache, id) {
  let t = cache.builtins.get(id);
  if (!t) {
    const real = realBuiltin(id);
    const copyable = (typeof real === 'object' && real !== null) || id === 'module';
    t = { real, proto: Object.getPrototypeOf(real), descriptors: copyable ? Object.getOwnPropertyDescriptors(real) : undefined };
    cache.builtins.set(id, t);
  }
  return t;
}

/**
 * A module loader. Without `context`, modules are evaluated in the guest's own context with the real built-ins and
 * Node's require. With `context` (a vm context) and its `global`, everything is evaluated in that context, and
 * `overrides` maps built-in ids to that context's own values (process, timers, console).
 * @param {ModuleCache} cache
 * @param {{ context?: vm.Context, global?: typeof globalThis, overrides?: Record<string, BuiltinModule> }} [options]
 * @returns {Loader}
 */
function createLoader(cache, { context, global, overrides = {} } = {}) {
  const fresh = context !== undefined;
  /** @type {Map<string, vm.Module>} */
  const esm = new Map();
  /** @type {Map<string, CjsModule>} */
  const cjs = new Map();
  /** module.exports of CommonJS files imported as modules (their namespace would sort the export names). @type {Map<string, unknown>} */
  const cjsExports = new Map();
  /** @type {Map<string, BuiltinModule>} */
  const builtinValues = new Map();
  /** @param {string} text */
  const parseJson = (text) => (fresh ? /** @type {typeof globalThis} */ (global).JSON.parse(text) : JSON.parse(text));

  /**
   * @param {string} id
   * @returns {BuiltinModule}
   */
  function builtin(id) {
    if (!fresh) return realBuiltin(id);
    if (builtinValues.has(id)) return /** @type {BuiltinModule} */ (builtinValues.get(id));
    let value = overrides[id];
    if (value === undefined) {
      const t = builtinTemplate(cache, id);
      value = t.descriptors ? Object.create(t.proto, t.descriptors) : t.real;
      if (id === 'module')
        value.createRequire = (/** @type {unknown} */ from) => makeRequire(String(from).startsWith('file:') ? fileURLToPath(String(from)) : String(from));
    }
    builtinValues.set(id, value);
    return value;
  }

  /**
   * @param {string} parentFile
   * @returns {ContextRequire}
   */
  function makeRequire(parentFile) {
    /** @param {unknown} specifier */
    const require = (specifier) => {
      if (typeof specifier !== 'string') throw new TypeError('The "id" argument must be of type string');
      return requireFile(resolveRequire(cache, specifier, parentFile));
    };
    /** @param {string} specifier */
    require.resolve = (specifier) => {
      const resolved = resolveRequire(cache, specifier, parentFile);
      return resolved.startsWith('node:') ? specifier : resolved;
    };
    require.cache = Object.create(null);
    return require;
  }

  /**
   * CommonJS (or JSON) by file path: Node's require in the main context, this context's own otherwise.
   * @param {string} file
   * @returns {any} the module's exports
   */
  function requireFile(file) {
    if (file.startsWith('node:')) return builtin(file.slice(5));
    if (!fresh) return nativeRequire(cache, path.dirname(file))(file);
    const loaded = cjs.get(file);
    if (loaded) return loaded.exports;
    const format = formatOf(cache, file);
    if (format === 'esm') throw Object.assign(new Error(`require() of ES Module ${file} not supported.`), { code: 'ERR_REQUIRE_ESM' });
    if (format === 'addon') throw new Error(`native addons cannot be loaded in reuse mode: ${file}`);
    /** @type {CjsModule} */
    const module = { id: file, filename: file, path: path.dirname(file), exports: {}, loaded: false, children: [], paths: [] };
    cjs.set(file, module);
    if (format === 'json') module.exports = parseJson(sourceOf(cache, file));
    else {
      module.require = makeRequire(file);
      const wrapper = cjsScript(cache, file).runInContext(context);
      try {
        wrapper.call(module.exports, module.exports, module.require, module, file, path.dirname(file));
      } catch (err) {
        cjs.delete(file);
        throw err;
      }
    }
    module.loaded = true;
    return module.exports;
  }

  /**
   * @param {string} identifier
   * @param {any} value the module's value (a built-in, a CommonJS module.exports, JSON)
   * @param {string[]} names
   */
  function synthetic(identifier, value, names) {
    const exportNames = ['default', ...names.filter((n) => n !== 'default')];
    return new vm.SyntheticModule(
      exportNames,
      function setExports() {
        this.setExport('default', value);
        for (const name of exportNames) if (name !== 'default') this.setExport(name, value?.[name]);
      },
      { identifier, context },
    );
  }

  /** @param {unknown} value */
  const namesOf = (value) => (value !== null && (typeof value === 'object' || typeof value === 'function') ? Object.keys(value) : []);

  /**
   * The vm.Module of a resolved file or built-in, one instance per loader.
   * @param {string} resolved
   * @returns {vm.Module}
   */
  function moduleFor(resolved) {
    let mod = esm.get(resolved);
    if (mod) return mod;
    if (resolved.startsWith('node:')) {
      const value = builtin(resolved.slice(5));
      mod = synthetic(resolved, value, namesOf(value));
    } else {
      const format = formatOf(cache, resolved);
      if (format === 'esm') mod = sourceTextModule(resolved);
      else if (format === 'json') mod = synthetic(pathToFileURL(resolved).href, parseJson(sourceOf(cache, resolved)), []);
      else {
        const exports = requireFile(resolved);
        cjsExports.set(resolved, exports);
        mod = synthetic(pathToFileURL(resolved).href, exports, namesOf(exports));
      }
    }
    esm.set(resolved, mod);
    return mod;
  }

  /** @param {string} file */
  function sourceTextModule(file) {
    const url = pathToFileURL(file).href;
    const source = sourceOf(cache, file);
    // A module compiled from V8's code cache loses its host-defined options (Node 20): import() and import.meta
    // would find no callback. Modules using either are compiled from source each time.
    const cacheable = fresh && !USES_IMPORT_HOOKS.test(source);
    const cachedData = cacheable ? cache.codeCache.get(file) : undefined;
    const mod = new vm.SourceTextModule(source, {
      identifier: file,
      context,
      cachedData,
      initializeImportMeta(meta) {
        meta.url = url;
        meta.filename = file;
        meta.dirname = path.dirname(file);
        meta.resolve = (specifier) => {
          const r = resolveImport(cache, specifier, file);
          return r.startsWith('node:') ? r : pathToFileURL(r).href;
        };
      },
      importModuleDynamically: (specifier) => importDynamic(specifier, file),
    });
    // A fresh context evaluates the same files again and again: keep V8's code cache for the next one.
    // createCachedData exists since Node 13.7, though @types/node does not declare it on SourceTextModule.
    if (cacheable && !cachedData) cache.codeCache.set(file, /** @type {vm.SourceTextModule & { createCachedData(): Buffer }} */ (mod).createCachedData());
    return mod;
  }

  /**
   * @param {string} specifier
   * @param {vm.Module} referencing
   */
  const linker = (specifier, referencing) => moduleFor(resolveImport(cache, specifier, referencing.identifier));

  /** @param {vm.Module} mod */
  async function evaluated(mod) {
    if (mod.status === 'unlinked') await mod.link(linker);
    if (mod.status === 'linked' || mod.status === 'evaluating') await mod.evaluate();
    if (mod.status === 'errored') throw mod.error;
    return mod;
  }

  /**
   * @param {string} specifier
   * @param {string} parentFile
   */
  function importDynamic(specifier, parentFile) {
    return evaluated(moduleFor(resolveImport(cache, specifier, parentFile)));
  }

  /** @type {Loader} */
  const loader = {
    importDynamic,
    /** The main module of a package dir, its package.json read through the sandbox's cache. */
    entryOf: (pkgDir) => resolveEntry(pkgDir, (dir) => readPackageJson(cache.packageJson, dir) ?? readManifestFile(dir)),
    /**
     * Imports a file (ESM, CommonJS or JSON) and returns its namespace; for CommonJS, module.exports as `default`
     * and its own properties in their order.
     */
    /** @param {string} file */
    async importFile(file) {
      const resolved = path.resolve(file);
      const mod = await evaluated(moduleFor(resolved));
      if (!cjsExports.has(resolved)) return mod.namespace;
      const exports = cjsExports.get(resolved);
      return { ...(exports !== null && typeof exports === 'object' ? exports : {}), default: exports };
    },
  };
  if (fresh) cache.current = loader;
  return loader;
}

module.exports = { createModuleCache, createLoader, realBuiltin };

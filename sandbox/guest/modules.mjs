// Module loading inside a vm context, for reuse mode: every execution evaluates the tool package afresh in its own
// context, so module-level state never survives an execution. What IS kept for the sandbox's life is what does not
// depend on a context: file sources, V8 code caches, compiled CommonJS scripts (unbound, re-run per context),
// resolutions (Node's own resolvers: `import.meta.resolve` with a parent, needs --experimental-import-meta-resolve,
// and `require.resolve`) and package types. ESM is linked with vm.SourceTextModule (--experimental-vm-modules);
// CommonJS runs through a per-context `require`; Node built-ins are per-context shallow copies, so that assigning to
// `fs.readFileSync` in one execution is not seen by the next.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import { createRequire, isBuiltin } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

const CJS_WRAPPER = ['(function (exports, require, module, __filename, __dirname) { ', '\n})'];

/** Everything cached for one sandbox: nothing here holds an evaluated module or a context. */
export function createModuleCache() {
  return {
    sources: new Map(),
    codeCache: new Map(),
    scripts: new Map(),
    resolved: new Map(),
    requires: new Map(),
    types: new Map(),
    builtins: new Map(),
    /** The realm of the running execution (CommonJS scripts are shared by all contexts; see cjsScript). */
    current: undefined,
  };
}

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

/** "module" or "commonjs": the `type` of the nearest package.json, as Node decides for .js files. */
function packageType(cache, dir) {
  if (cache.types.has(dir)) return cache.types.get(dir);
  let type;
  try {
    type = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).type === 'module' ? 'module' : 'commonjs';
  } catch (err) {
    if (err?.code !== 'ENOENT' && err?.code !== 'ENOTDIR') type = 'commonjs';
    else type = path.dirname(dir) === dir ? 'commonjs' : packageType(cache, path.dirname(dir));
  }
  cache.types.set(dir, type);
  return type;
}

function formatOf(cache, file) {
  const ext = path.extname(file);
  if (ext === '.mjs') return 'esm';
  if (ext === '.cjs') return 'cjs';
  if (ext === '.json') return 'json';
  if (ext === '.node') return 'addon';
  return packageType(cache, path.dirname(file)) === 'module' ? 'esm' : 'cjs';
}

const builtinId = (specifier) => (specifier.startsWith('node:') ? specifier.slice(5) : specifier);

/** Resolves an import (ESM conditions) to a `node:` id or an absolute file path. */
function resolveImport(cache, specifier, parentUrl) {
  if (specifier.startsWith('node:') || isBuiltin(specifier)) return `node:${builtinId(specifier)}`;
  const key = `${parentUrl}\0${specifier}`;
  let hit = cache.resolved.get(key);
  if (hit === undefined) {
    const url = import.meta.resolve(specifier, parentUrl);
    hit = url.startsWith('node:') ? url : fileURLToPath(url);
    cache.resolved.set(key, hit);
  }
  return hit;
}

/** Resolves a require (CommonJS conditions) to a `node:` id or an absolute file path. */
function resolveRequire(cache, specifier, parentFile) {
  if (specifier.startsWith('node:') || isBuiltin(specifier)) return `node:${builtinId(specifier)}`;
  const key = `cjs\0${parentFile}\0${specifier}`;
  let hit = cache.resolved.get(key);
  if (hit === undefined) {
    const dir = path.dirname(parentFile);
    let req = cache.requires.get(dir);
    if (!req) cache.requires.set(dir, (req = createRequire(path.join(dir, 'noop.js'))));
    hit = req.resolve(specifier);
    if (isBuiltin(hit)) hit = `node:${builtinId(hit)}`;
    cache.resolved.set(key, hit);
  }
  return hit;
}

/** The compiled wrapper of a CommonJS file: a context-independent script, run once per context that requires it. */
function cjsScript(cache, file) {
  let script = cache.scripts.get(file);
  if (!script) {
    script = new vm.Script(`${CJS_WRAPPER[0]}${sourceOf(cache, file)}${CJS_WRAPPER[1]}`, {
      filename: file,
      importModuleDynamically: (specifier) => cache.current.importDynamic(specifier, pathToFileURL(file).href),
    });
    cache.scripts.set(file, script);
  }
  return script;
}

/** Own property descriptors of a built-in module, read once per sandbox. */
function builtinTemplate(cache, id) {
  let t = cache.builtins.get(id);
  if (!t) {
    const real = process.getBuiltinModule(id);
    if (real === undefined) throw Object.assign(new Error(`No such built-in module: node:${id}`), { code: 'ERR_UNKNOWN_BUILTIN_MODULE' });
    const copyable = (typeof real === 'object' && real !== null) || id === 'module';
    t = { real, proto: Object.getPrototypeOf(real), descriptors: copyable ? Object.getOwnPropertyDescriptors(real) : undefined };
    cache.builtins.set(id, t);
  }
  return t;
}

/**
 * The module loader of one context (`global` is its globalThis). `overrides` maps built-in ids to this context's own values (process, timers,
 * console); other built-ins are shallow copies (functions such as `events` are shared as they are).
 */
export function createContextLoader(cache, context, global, overrides) {
  const esm = new Map();
  const cjs = new Map();
  const builtinValues = new Map();

  function builtin(id) {
    if (builtinValues.has(id)) return builtinValues.get(id);
    let value = overrides[id];
    if (value === undefined) {
      const t = builtinTemplate(cache, id);
      value = t.descriptors ? Object.create(t.proto, t.descriptors) : t.real;
      if (id === 'module') value.createRequire = (from) => makeRequire(from instanceof URL || String(from).startsWith('file:') ? fileURLToPath(from) : String(from));
    }
    builtinValues.set(id, value);
    return value;
  }

  function makeRequire(parentFile) {
    const require = (specifier) => {
      if (typeof specifier !== 'string') throw new TypeError('The "id" argument must be of type string');
      return requireFile(resolveRequire(cache, specifier, parentFile));
    };
    require.resolve = (specifier) => {
      const resolved = resolveRequire(cache, specifier, parentFile);
      return resolved.startsWith('node:') ? specifier : resolved;
    };
    require.cache = Object.create(null);
    return require;
  }

  function requireFile(file) {
    if (file.startsWith('node:')) return builtin(file.slice(5));
    const loaded = cjs.get(file);
    if (loaded) return loaded.exports;
    const format = formatOf(cache, file);
    if (format === 'esm') throw Object.assign(new Error(`require() of ES Module ${file} not supported.`), { code: 'ERR_REQUIRE_ESM' });
    if (format === 'addon') throw new Error(`native addons cannot be loaded in reuse mode: ${file}`);
    const module = { id: file, filename: file, path: path.dirname(file), exports: {}, loaded: false, children: [], paths: [] };
    cjs.set(file, module);
    if (format === 'json') {
      module.exports = global.JSON.parse(sourceOf(cache, file));
    } else {
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

  /** The vm.Module for a resolved file or built-in, one instance per context. */
  function moduleFor(resolved) {
    let mod = esm.get(resolved);
    if (mod) return mod;
    if (resolved.startsWith('node:')) {
      const value = builtin(resolved.slice(5));
      mod = synthetic(resolved, value, value && (typeof value === 'object' || typeof value === 'function') ? Object.keys(value) : []);
    } else {
      const url = pathToFileURL(resolved).href;
      const format = formatOf(cache, resolved);
      if (format === 'esm') mod = sourceTextModule(resolved, url);
      else if (format === 'json') mod = synthetic(url, global.JSON.parse(sourceOf(cache, resolved)), []);
      else {
        const exports = requireFile(resolved);
        mod = synthetic(url, exports, exports && typeof exports === 'object' ? Object.keys(exports) : []);
      }
    }
    esm.set(resolved, mod);
    return mod;
  }

  function sourceTextModule(file, url) {
    const cachedData = cache.codeCache.get(file);
    const mod = new vm.SourceTextModule(sourceOf(cache, file), {
      identifier: url,
      context,
      cachedData,
      initializeImportMeta(meta) {
        meta.url = url;
        meta.filename = file;
        meta.dirname = path.dirname(file);
        meta.resolve = (specifier) => {
          const r = resolveImport(cache, specifier, url);
          return r.startsWith('node:') ? r : pathToFileURL(r).href;
        };
      },
      importModuleDynamically: (specifier) => importDynamic(specifier, url),
    });
    if (!cachedData) cache.codeCache.set(file, mod.createCachedData());
    return mod;
  }

  const linker = (specifier, referencing) => moduleFor(resolveImport(cache, specifier, referencing.identifier));

  async function evaluated(mod) {
    if (mod.status === 'unlinked') await mod.link(linker);
    if (mod.status === 'linked') await mod.evaluate();
    else if (mod.status === 'evaluating') await mod.evaluate().catch(() => {});
    if (mod.status === 'errored') throw mod.error;
    return mod;
  }

  function importDynamic(specifier, parentUrl) {
    return evaluated(moduleFor(resolveImport(cache, specifier, parentUrl)));
  }

  return {
    builtin,
    importDynamic,
    /** Imports a file (ESM, CommonJS or JSON) in this context and returns its namespace. */
    async importFile(file) {
      return (await evaluated(moduleFor(path.resolve(file)))).namespace;
    },
  };
}

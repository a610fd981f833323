// @ts-check
// Loads a tool package inside the sandbox and turns its exports into tools: resolves the main module the way Node
// does for a package root (exports "." with node/import/default/require conditions, then main, then index.js),
// imports it (ESM or CJS), finds tool-shaped exports (plain objects, AI SDK tool() results, functions carrying a
// tool's members, zero-argument factories) and converts their input schemas (JSON Schema, AI SDK Schema, zod v4 via
// the package's own zod, zod v3 by the package's zod-to-json-schema or AI SDK, else by the guest's own) to plain JSON
// Schema. Modules are imported by the caller's `importFile` (modules.cjs: the guest's main context in one-shot
// sandboxes, a fresh vm context per execution in reuse mode).
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { createRequire } = require('node:module');

/**
 * What a package's module exports (an ES module namespace, or CommonJS module.exports as `default` and its keys): the
 * package's own values, of any shape, read here by shape.
 * @typedef {Record<string, any>} Namespace
 */
/** Imports a file with the sandbox's module loader (modules.cjs). @typedef {(file: string) => Promise<Namespace>} ImportFile */
/** The main module of a package dir. @typedef {(pkgDir: string) => string} EntryOf */
/**
 * An "exports" or "imports" value of a package.json: a target, fallbacks, or an object of subpaths or conditions
 * (their values are read by shape; a value of another shape resolves to nothing).
 * @typedef {string | unknown[] | { [key: string]: unknown } | null} ExportsField
 */
/**
 * What a package.json holds, as far as the guest reads it.
 * @typedef {{ name?: unknown, main?: unknown, type?: unknown, exports?: ExportsField, imports?: { [key: string]: unknown } }} Manifest
 */
/** The second argument of a tool's execute (as the AI SDK passes it). @typedef {{ toolCallId: string, messages: unknown[], abortSignal: AbortSignal }} ToolCallOptions */
/**
 * A tool as a package exports it: execute, and an input schema in any supported form (AI SDK v5+ `inputSchema`, v4
 * `parameters`: JSON Schema, AI SDK Schema, zod). Its input is the package's business.
 * @typedef {{
 *   description?: unknown,
 *   inputSchema?: unknown,
 *   parameters?: unknown,
 *   outputSchema?: unknown,
 *   execute: (input: any, options: ToolCallOptions) => unknown,
 * }} Tool
 */

const SCHEMA_SYMBOL = Symbol.for('vercel.ai.schema');
const CONDITIONS = new Set(['node', 'import', 'default', 'require', 'module-sync']);

/**
 * @param {unknown} entry
 * @returns {string | undefined}
 */
function pickTarget(entry) {
  if (typeof entry === 'string') return entry;
  if (Array.isArray(entry)) {
    for (const item of entry) {
      const t = pickTarget(item);
      if (t) return t;
    }
    return undefined;
  }
  if (entry && typeof entry === 'object') {
    for (const [key, value] of Object.entries(entry)) {
      if (CONDITIONS.has(key)) {
        const t = pickTarget(value);
        if (t) return t;
      }
    }
  }
  return undefined;
}

/** @param {unknown} exp */
function exportsRoot(exp) {
  if (typeof exp === 'string' || Array.isArray(exp)) return exp;
  if (exp && typeof exp === 'object') {
    const keys = Object.keys(exp);
    if (keys.some((k) => k.startsWith('.'))) return /** @type {Record<string, unknown>} */ (exp)['.'];
    return exp;
  }
  return undefined;
}

/** @param {string} file */
function probe(file) {
  for (const candidate of [file, `${file}.js`, `${file}.mjs`, `${file}.cjs`, `${file}.json`, path.join(file, 'index.js')]) {
    try {
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {
      // try the next candidate
    }
  }
  return undefined;
}

/**
 * @param {string} pkgDir
 * @returns {Manifest}
 */
const readManifestFile = (pkgDir) => JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));

/**
 * Absolute path of the package's main module; throws with a readable message when there is none. `readManifest`
 * reads a package.json (the module loader passes its cached reader, so that the file is read once).
 * @param {string} pkgDir
 * @param {(dir: string) => Manifest} [readManifest]
 * @returns {string}
 */
function resolveEntry(pkgDir, readManifest = readManifestFile) {
  const manifest = readManifest(pkgDir);
  if (manifest.exports !== undefined) {
    const target = pickTarget(exportsRoot(manifest.exports));
    if (!target) throw new Error('package.json "exports" has no "." entry for node/import/require/default');
    const file = path.resolve(pkgDir, target);
    if (!fs.existsSync(file)) throw new Error(`package.json "exports" points to a missing file: ${target}`);
    return file;
  }
  const main = typeof manifest.main === 'string' && manifest.main !== '' ? manifest.main : 'index.js';
  const file = probe(path.resolve(pkgDir, main)) ?? probe(path.resolve(pkgDir, 'index'));
  if (!file) throw new Error(`cannot find the main module (${main}) of the package`);
  return file;
}

/**
 * The file of one of the package's subpath exports (`./ai-sdk`); throws when its package.json exports none such.
 * @param {string} pkgDir
 * @param {string} subpath
 * @returns {string}
 */
function resolveSubpath(pkgDir, subpath) {
  const exp = readManifestFile(pkgDir).exports;
  const value = exp && typeof exp === 'object' && !Array.isArray(exp) && Object.hasOwn(exp, subpath) ? exp[subpath] : undefined;
  const target = pickTarget(value);
  if (!target) throw new Error(`package.json "exports" has no "${subpath}" entry for node/import/require/default`);
  const file = path.resolve(pkgDir, target);
  if (!file.startsWith(`${path.resolve(pkgDir)}${path.sep}`)) throw new Error(`package.json "exports" "${subpath}" points outside the package`);
  if (!fs.existsSync(file)) throw new Error(`package.json "exports" "${subpath}" points to a missing file: ${target}`);
  return file;
}

/** Subpath exports where a package keeps its AI SDK tools when its main module has none (`@supermemory/tools/ai-sdk`). */
const TOOL_SUBPATHS = ['./ai-sdk', './aisdk', './ai', './vercel', './vercel-ai'];

/**
 * The first of TOOL_SUBPATHS the package exports, or undefined.
 * @param {string} pkgDir
 */
function toolSubpath(pkgDir) {
  try {
    const exp = readManifestFile(pkgDir).exports;
    if (!exp || typeof exp !== 'object' || Array.isArray(exp)) return undefined;
    return TOOL_SUBPATHS.find((sub) => Object.hasOwn(exp, sub));
  } catch {
    return undefined;
  }
}

/**
 * Imports the package with `importFile` and returns a map of export name → exported value; `entryOf` finds the
 * main module (reuse mode caches it); `subpath`, one of its subpath exports, is read instead when given.
 * @param {string} pkgDir
 * @param {{ importFile: ImportFile, entryOf?: EntryOf }} io
 * @param {string} [subpath]
 * @returns {Promise<Map<string, unknown>>}
 */
async function loadExports(pkgDir, { importFile, entryOf = resolveEntry }, subpath) {
  const ns = await importFile(subpath ? resolveSubpath(pkgDir, subpath) : entryOf(pkgDir));
  /** @type {Map<string, unknown>} */
  const out = new Map();
  for (const [name, value] of Object.entries(ns)) if (name !== 'default') out.set(name, value);
  const def = ns.default;
  if (def !== undefined) {
    // CJS module.exports (or an ESM default object) holding several tools: expose its keys as exports.
    const container = def && typeof def === 'object' && !isToolShaped(def) && !Array.isArray(def);
    if (container) {
      for (const [name, value] of Object.entries(def)) if (!out.has(name)) out.set(name, value);
    } else if (!out.has('default')) out.set('default', def);
  }
  return out;
}

/**
 * @param {unknown} v
 * @returns {v is Tool}
 */
function isToolShaped(v) {
  const t = /** @type {Partial<Tool> | null} */ (v);
  if (t === null || (typeof t !== 'object' && typeof t !== 'function')) return false;
  // A function carrying a tool's members is a tool as it is (firecrawl-aisdk's `scrape`: `Object.assign((options) =>
  // createScrape(options), createScrape())`, a tool that is also its own factory), but not a class, and not an Agentic
  // function (its `spec`: discover.cjs reads those by their own rules).
  if (typeof t === 'function' && (isClass(t) || 'spec' in t)) return false;
  return typeof t.execute === 'function' && (t.inputSchema !== undefined || t.parameters !== undefined);
}

/** @param {Function} fn */
function isClass(fn) {
  return /^class[\s{]/.test(Function.prototype.toString.call(fn));
}

/**
 * The tool behind one export, or undefined when the export is not a tool. `callFactories` decides whether
 * functions are called (always for a named export; only zero-arity ones when scanning all exports).
 * @param {unknown} value
 * @param {{ callFactories: 'all' | 'zero-arity' }} options
 * @returns {Promise<Tool | undefined>}
 */
async function toolFromExport(value, { callFactories }) {
  if (isToolShaped(value)) return value;
  if (typeof value === 'function' && !isClass(value) && (callFactories === 'all' || value.length === 0)) {
    const made = await value();
    if (isToolShaped(made)) return made;
  }
  return undefined;
}

/**
 * A JSON copy of a schema (a plain object once it went through JSON; a schema with no JSON form throws).
 * @param {unknown} value
 * @returns {Record<string, any>}
 */
function plainJson(value) {
  return JSON.parse(JSON.stringify(value ?? { type: 'object' }));
}

/**
 * The zod-to-JSON-Schema function of the package's own zod (v4) or zod-to-json-schema (v3), when it has one.
 * @param {string} pkgDir
 * @param {'v4' | 'v3'} kind
 * @param {ImportFile} importFile
 * @returns {Promise<((schema: unknown, options: object) => unknown) | undefined>}
 */
async function zodConverter(pkgDir, kind, importFile) {
  const req = createRequire(path.join(pkgDir, 'package.json'));
  const candidates = kind === 'v4' ? ['zod', 'zod/v4', 'zod/v4/core'] : ['zod-to-json-schema'];
  for (const spec of candidates) {
    let mod;
    try {
      mod = await importFile(req.resolve(spec));
    } catch {
      continue;
    }
    const fn =
      kind === 'v4'
        ? (mod.toJSONSchema ?? mod.default?.toJSONSchema ?? mod.z?.toJSONSchema)
        : (mod.zodToJsonSchema ?? mod.default?.zodToJsonSchema ?? mod.default);
    if (typeof fn === 'function') return fn;
  }
  return undefined;
}

/**
 * The guest's own zod-to-json-schema: the file the rootfs builds beside the guest (sandbox/guest-vendor.ts), or, run
 * from the source tree (the process runner), the installed package.
 * @returns {((schema: unknown, options: object) => unknown) | undefined}
 */
function guestZodToJsonSchema() {
  for (const id of ['./zod-to-json-schema.cjs', 'zod-to-json-schema']) {
    try {
      const mod = require(id);
      if (typeof mod.zodToJsonSchema === 'function') return mod.zodToJsonSchema;
    } catch {
      // not there: the next
    }
  }
  return undefined;
}

/**
 * The package's AI SDK `asSchema` (ai v5+), when it can be loaded.
 * @param {string} pkgDir
 * @param {ImportFile} importFile
 * @returns {Promise<((schema: unknown) => { jsonSchema: unknown }) | undefined>}
 */
async function aiSdkConverter(pkgDir, importFile) {
  try {
    const mod = await importFile(createRequire(path.join(pkgDir, 'package.json')).resolve('ai'));
    const fn = mod.asSchema ?? mod.default?.asSchema;
    return typeof fn === 'function' ? fn : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Converts a tool's input schema (any supported form) to a plain JSON Schema object.
 * @param {any} schema the package's own value (JSON Schema, AI SDK Schema, zod), read by shape
 * @param {string} pkgDir
 * @param {ImportFile} importFile
 * @returns {Promise<Record<string, any>>}
 */
async function toJsonSchema(schema, pkgDir, importFile) {
  if (schema && typeof schema === 'object' && (schema[SCHEMA_SYMBOL] === true || 'jsonSchema' in schema) && !schema._zod) {
    return plainJson(await schema.jsonSchema);
  }
  if (schema && typeof schema === 'object' && schema._zod) {
    const convert = await zodConverter(pkgDir, 'v4', importFile);
    if (convert) {
      const json = plainJson(convert(schema, { io: 'input', unrepresentable: 'any' }));
      delete json.$schema;
      return json;
    }
    return { type: 'object', $comment: 'zod schema: no toJSONSchema found in the package; schema not converted' };
  }
  if (schema && typeof schema === 'object' && schema._def && typeof schema.safeParse === 'function') {
    const convert = await zodConverter(pkgDir, 'v3', importFile);
    if (convert) {
      const json = plainJson(convert(schema, { $refStrategy: 'none' }));
      delete json.$schema;
      return json;
    }
    // The AI SDK (a peer of most AI SDK tool packages) converts zod 3 schemas itself.
    const viaAi = await aiSdkConverter(pkgDir, importFile);
    if (viaAi) {
      const json = plainJson(await viaAi(schema).jsonSchema);
      delete json.$schema;
      return json;
    }
    // Neither: the guest's own zod-to-json-schema (sandbox/guest-vendor.ts), which reads the package's zod 3 schema.
    const own = guestZodToJsonSchema();
    if (own) {
      const json = plainJson(own(schema, { $refStrategy: 'none' }));
      delete json.$schema;
      return json;
    }
    return { type: 'object', $comment: 'zod v3 schema: zod-to-json-schema is not installed; schema not converted' };
  }
  return plainJson(schema);
}

/**
 * The input schema of a tool (AI SDK v5+ `inputSchema`, v4 `parameters`).
 * @param {Tool} tool
 */
function schemaOf(tool) {
  return tool.inputSchema !== undefined ? tool.inputSchema : tool.parameters;
}

module.exports = { readManifestFile, resolveEntry, loadExports, toolSubpath, isToolShaped, toolFromExport, toJsonSchema, schemaOf };

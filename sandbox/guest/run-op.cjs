// @ts-check
// One guest operation, from request to result object, never throwing: `describe` lists a package's tools with JSON
// Schemas; `execute` loads one tool, validates params and calls it. Shared by one-shot and reuse mode, which differ
// in the module loader they pass (`importFile`). Result shape: { ok: true, ... } or { ok: false, code, error } with code one of load_error, not_found,
// invalid_params, tool_error, oom, output_too_large.
'use strict';
const fs = require('node:fs');
const { loadExports, toolSubpath, toolFromExport, toJsonSchema, schemaOf } = require('./load.cjs');
const { validate } = require('./validate.cjs');
const { discoverTools, parseLocator, JSON_HINT, resolveTool, watchEnv } = require('./discover.cjs');

/** @typedef {import('./load.cjs').ImportFile} ImportFile */
/** @typedef {import('./discover.cjs').FoundTool} FoundTool */
/** The module loader an operation uses (see runOp). @typedef {{ importFile: ImportFile, entryOf?: import('./load.cjs').EntryOf }} Io */
/**
 * A request as the host writes it (sandbox/gvisor-runner.ts, process-runner.ts, reuse.ts); its `env` is set apart
 * (setEnv). runOp reads `op`, and takes the rest as that op's request; an unknown op is a tool_error.
 * @typedef {DescribeRequest | ExecuteRequest | { op?: unknown, [key: string]: unknown }} OpRequest
 */
/** @typedef {{ op: 'describe', pkgDir: string, exportNames?: string[], discover?: boolean, toolkit?: import('./discover.cjs').Toolkit }} DescribeRequest */
/** @typedef {{ op: 'execute', pkgDir: string, exportName: string, params?: unknown, toolCallId?: string }} ExecuteRequest */
/** @typedef {'load_error' | 'not_found' | 'invalid_params' | 'tool_error' | 'oom' | 'output_too_large'} FailCode */
/** @typedef {{ ok: false, code: FailCode, error: string, outputJson?: undefined }} Failure */
/**
 * One described tool (sandbox/types.ts's DescribedTool).
 * @typedef {{
 *   exportName: string,
 *   name?: string,
 *   how?: import('./discover.cjs').How | null,
 *   description: string,
 *   inputSchema: Record<string, any>,
 *   outputSchema?: Record<string, any>,
 * }} DescribedTool
 */
/** @typedef {{ ok: true, tools: DescribedTool[], missing: string[], notes?: string[], envRead?: string[], outputJson?: undefined }} Described */
/** An execute's result: the tool's output, already serialized. @typedef {{ ok: true, outputJson: string }} Executed */
/** @typedef {Described | Executed | Failure} OpResult */
/**
 * What a schema with its own validator returns (zod's safeParse, an AI SDK Schema's validate).
 * @typedef {{ success: boolean, data?: unknown, value?: unknown, error?: { issues?: { path?: unknown[], message?: unknown }[] } }} ParseResult
 */
/**
 * A tool's input schema as checkParams reads it: a JSON Schema, or one with its own validator (zod, AI SDK Schema).
 * @typedef {{
 *   safeParseAsync?: (value: unknown) => Promise<ParseResult>,
 *   safeParse?: (value: unknown) => ParseResult,
 *   validate?: (value: unknown) => ParseResult | Promise<ParseResult>,
 * }} OwnValidator
 */

const MAX_OUTPUT_BYTES = 1024 * 1024;
const MAX_MESSAGE = 4000;

// Errors may come from another realm (reuse mode's vm contexts): recognised by shape, never by instanceof.
/**
 * @param {any} err anything thrown, read by shape
 * @returns {err is { message: string, name: string }}
 */
const isErrorLike = (err) => err !== null && typeof err === 'object' && typeof err.message === 'string' && typeof err.name === 'string';

/**
 * @param {unknown} err
 * @returns {string}
 */
function messageOf(err) {
  /** @type {string | undefined} */
  let msg;
  if (isErrorLike(err)) msg = err.message || err.name;
  else if (typeof err === 'string') msg = err;
  else {
    try {
      msg = JSON.stringify(err);
    } catch {
      msg = String(err);
    }
  }
  msg = String(msg ?? 'unknown error');
  return msg.length > MAX_MESSAGE ? `${msg.slice(0, MAX_MESSAGE)}…` : msg;
}

const OOM_PATTERNS = [/Array buffer allocation failed/i, /out of memory/i, /Cannot allocate memory/i];
/** @param {unknown} err */
const looksLikeOom = (err) => isErrorLike(err) && err.name === 'RangeError' && OOM_PATTERNS.some((re) => re.test(err.message));

/**
 * @param {FailCode} code
 * @param {unknown} err
 * @returns {Failure}
 */
const fail = (code, err) => ({ ok: false, code, error: messageOf(err) });

/**
 * @param {DescribeRequest} req
 * @param {Io} io
 * @returns {Promise<Described | Failure>}
 */
async function describe(req, io) {
  // Discovery (a package that declares no tools): credential-like env a factory reads gets a placeholder, reported.
  if (req.discover === true) return describeDiscovered(req, io, watchEnv());
  // The exports of the main module, or of a subpath a locator names, each loaded once.
  /** @type {Map<string, Promise<Map<string, unknown>>>} */
  const loaded = new Map();
  /** @param {string | undefined} entry */
  const exportsOf = (entry) => {
    const key = entry ?? '';
    if (!loaded.has(key)) loaded.set(key, loadExports(req.pkgDir, io, entry));
    return /** @type {Promise<Map<string, unknown>>} */ (loaded.get(key));
  };
  /** @type {DescribedTool[]} */
  const tools = [];
  /** @type {string[]} */
  const missing = [];
  const wanted = Array.isArray(req.exportNames) && req.exportNames.length > 0 ? req.exportNames : undefined;
  let names;
  try {
    names = wanted ?? [...(await exportsOf(undefined)).keys()];
  } catch (err) {
    return fail('load_error', err);
  }
  for (const name of names) {
    let locator;
    let exportsMap;
    try {
      locator = parseLocator(name);
    } catch {
      missing.push(name);
      continue;
    }
    try {
      exportsMap = await exportsOf(locator.entry);
    } catch (err) {
      return fail('load_error', err);
    }
    // A discovered member (`weatherTools#forecast`, `MathClient#add_numbers`) is found from its export.
    if (!exportsMap.has(locator.exportName)) {
      missing.push(name);
      continue;
    }
    let tool;
    try {
      tool = wanted ? await resolveTool(exportsMap, name, toolFromExport) : await toolFromExport(exportsMap.get(name), { callFactories: 'zero-arity' });
    } catch (err) {
      if (wanted) return fail('load_error', new Error(`factory export "${locator.exportName}" threw: ${messageOf(err)}`));
      continue;
    }
    if (!tool) {
      if (wanted) missing.push(name);
      continue;
    }
    try {
      tools.push({ exportName: name, ...(await schemasOf(tool, req.pkgDir, io.importFile)) });
    } catch (err) {
      return fail('load_error', new Error(`cannot read the input schema of "${name}": ${messageOf(err)}`));
    }
  }
  return { ok: true, tools, missing };
}

/**
 * describe for a package without a tool list: every tool found among the exports, with how it was found. The exports
 * are those of the import's Toolkit entry, else of the main module; when that has none (or none that loads) and the
 * package exports an AI SDK subpath (`./ai-sdk`), of that.
 * @param {DescribeRequest} req
 * @param {Io} io
 * @param {import('./discover.cjs').WatchedEnv} env
 * @returns {Promise<Described | Failure>}
 */
async function describeDiscovered(req, io, env) {
  const toolkit = req.toolkit !== null && typeof req.toolkit === 'object' ? req.toolkit : {};
  /** @param {import('./discover.cjs').Toolkit} tk */
  const discoverIn = async (tk) => discoverTools(await loadExports(req.pkgDir, io, tk.entry), env, tk);
  let r;
  /** @type {unknown} */
  let failure;
  try {
    r = await discoverIn(toolkit);
  } catch (err) {
    failure = err;
  }
  const subpath = toolkit.entry ? undefined : toolSubpath(req.pkgDir);
  if ((!r || r.found.length === 0) && subpath) {
    try {
      const other = await discoverIn({ ...toolkit, entry: subpath });
      const notes = [...(r?.notes ?? []), ...other.notes.map((n) => `${subpath}: ${n}`)];
      r = { found: other.found.length > 0 || !r ? other.found : r.found, notes };
    } catch {
      // the main module's answer (or failure) stands
    }
  }
  if (!r) return fail('load_error', failure);
  /** @type {DescribedTool[]} */
  const tools = [];
  // One tool offered by several exports (@v0-sdk/ai-tools: `createChatTools()`, `v0Tools()`, `v0ToolsFlat()` and the
  // default each make a new `createChat`) is imported once, under the first export that offers it. Each factory call
  // makes a new object, so the tool is known by what an agent sees of it: the same description and input schema.
  /** @type {Map<string, string>} */
  const offered = new Map();
  let again = 0;
  for (const f of r.found) {
    let schemas;
    try {
      schemas = await schemasOf(f.tool, req.pkgDir, io.importFile);
    } catch (err) {
      return fail('load_error', new Error(`cannot read the input schema of "${f.locator}": ${messageOf(err)}`));
    }
    const identity = schemas.description === '' ? undefined : JSON.stringify([schemas.description, schemas.inputSchema]);
    if (identity !== undefined && offered.has(identity)) {
      again++;
      continue;
    }
    if (identity !== undefined) offered.set(identity, f.locator);
    tools.push({ exportName: f.locator, name: f.name, how: f.how, ...schemas });
  }
  const notes = again > 0 ? [...r.notes, `${again} tools offered again by other exports (same description and input schema) are imported once`] : r.notes;
  return { ok: true, tools, missing: [], notes, envRead: [...env.read].sort() };
}

/**
 * @param {FoundTool} tool
 * @param {string} pkgDir
 * @param {ImportFile} importFile
 */
async function schemasOf(tool, pkgDir, importFile) {
  const inputSchema = tool[JSON_HINT] !== undefined ? JSON.parse(JSON.stringify(tool[JSON_HINT])) : await toJsonSchema(schemaOf(tool), pkgDir, importFile);
  const description = typeof tool.description === 'string' ? tool.description : '';
  // MCP wants an object schema for structured output; anything else is left out.
  const outputSchema = tool.outputSchema === undefined ? undefined : await toJsonSchema(tool.outputSchema, pkgDir, importFile);
  return { description, inputSchema, ...(outputSchema && outputSchema.type === 'object' ? { outputSchema } : {}) };
}

/**
 * Validates with the schema's own validator when it has one (zod, AI SDK Schema), else the compact JSON one.
 * @param {FoundTool} tool
 * @param {unknown} params
 * @param {string} pkgDir
 * @param {ImportFile} importFile
 * @returns {Promise<{ value?: unknown, error?: string }>}
 */
async function checkParams(tool, params, pkgDir, importFile) {
  const schema = /** @type {OwnValidator | null | undefined} */ (schemaOf(tool));
  if (schema && typeof schema === 'object') {
    if (typeof schema.safeParseAsync === 'function' || typeof schema.safeParse === 'function') {
      const r = schema.safeParseAsync ? await schema.safeParseAsync(params) : /** @type {NonNullable<OwnValidator['safeParse']>} */ (schema.safeParse)(params);
      if (r.success) return { value: r.data };
      const issues = r.error?.issues?.map((i) => `${(i.path ?? []).join('.') || 'params'}: ${i.message}`);
      return { error: issues?.join('; ') || messageOf(r.error) };
    }
    if (typeof schema.validate === 'function') {
      const r = await schema.validate(params);
      return r.success ? { value: r.value } : { error: messageOf(r.error) };
    }
  }
  const errors = validate(await toJsonSchema(schema, pkgDir, importFile), params);
  return errors.length ? { error: errors.slice(0, 10).join('; ') } : { value: params };
}

// The sandbox user's home directory: HOME at the guest's start (the OCI spec sets it, the rootfs's /etc/passwd
// agrees), on the sandbox's own /tmp tmpfs. Only a sandbox's init (pid 1) adopts it: run directly on a host (the
// process runner) the guest has no HOME and creates nothing.
/** @type {string | undefined} */
let sandboxHome;

/** Adopts HOME as the sandbox's home directory and creates it; called once at the guest's start. */
function initHome() {
  const home = process.env.HOME;
  if (process.pid !== 1 || typeof home !== 'string' || !home.startsWith('/tmp/')) return;
  sandboxHome = home;
  ensureHome();
}

/** (Re)creates the home directory, private to the sandbox user (reuse mode empties /tmp between executions). */
function ensureHome() {
  if (sandboxHome) fs.mkdirSync(sandboxHome, { recursive: true, mode: 0o700 });
}

/**
 * Replaces process.env's contents with the request's env (strings only), plus HOME unless the env sets it.
 * @param {unknown} env
 */
function setEnv(env) {
  for (const key of Object.keys(process.env)) delete process.env[key];
  if (env && typeof env === 'object') {
    for (const [key, value] of Object.entries(env)) if (typeof value === 'string') process.env[key] = value;
  }
  if (sandboxHome && process.env.HOME === undefined) process.env.HOME = sandboxHome;
}

/**
 * @param {unknown} output
 * @returns {{ result: Failure, json?: undefined } | { result?: undefined, json: string }}
 */
function serialize(output) {
  /** @type {string} */
  let json;
  try {
    json = JSON.stringify(output === undefined ? null : output);
  } catch (err) {
    return { result: fail('tool_error', new Error(`the tool's output is not JSON-serializable: ${messageOf(err)}`)) };
  }
  if (Buffer.byteLength(json) > MAX_OUTPUT_BYTES) return { result: { ok: false, code: 'output_too_large', error: 'output over 1 MiB' } };
  return { json };
}

/**
 * @param {ExecuteRequest} req
 * @param {Io} io
 * @returns {Promise<Executed | Failure>}
 */
async function execute(req, io) {
  let locator;
  let exportsMap;
  try {
    locator = parseLocator(req.exportName);
  } catch (err) {
    return fail('not_found', err);
  }
  try {
    exportsMap = await loadExports(req.pkgDir, io, locator.entry);
  } catch (err) {
    return fail('load_error', err);
  }
  if (!exportsMap.has(locator.exportName)) return fail('not_found', new Error(`export "${locator.exportName}" not found in the package`));
  let tool;
  try {
    // A discovered tool's export name is a locator (discover.cjs): the factory is called, the class made, here.
    tool = await resolveTool(exportsMap, req.exportName, toolFromExport);
  } catch (err) {
    return fail('load_error', new Error(`factory export "${locator.exportName}" threw: ${messageOf(err)}`));
  }
  if (!tool) return fail('not_found', new Error(`export "${req.exportName}" is not a tool`));
  let checked;
  try {
    checked = await checkParams(tool, req.params, req.pkgDir, io.importFile);
  } catch (err) {
    return fail('invalid_params', err);
  }
  if (checked.error) return fail('invalid_params', new Error(`invalid params: ${checked.error}`));
  let output;
  try {
    const abortSignal = new AbortController().signal;
    output = await tool.execute(checked.value, { toolCallId: req.toolCallId ?? 'toolshed', messages: [], abortSignal });
  } catch (err) {
    return fail(looksLikeOom(err) ? 'oom' : 'tool_error', err);
  }
  const { result, json } = serialize(output);
  return result ?? { ok: true, outputJson: /** @type {string} */ (json) };
}

/**
 * Runs one request; never throws. `execute` results carry the output pre-serialized as `outputJson`. `io` holds the
 * module loader's `importFile` and, optionally, `entryOf` (a package dir's main module).
 * @param {OpRequest} req
 * @param {Io} io
 * @returns {Promise<OpResult>}
 */
async function runOp(req, io) {
  try {
    if (req?.op === 'describe') return await describe(/** @type {DescribeRequest} */ (req), io);
    if (req?.op === 'execute') return await execute(/** @type {ExecuteRequest} */ (req), io);
    return fail('tool_error', new Error(`unknown op ${JSON.stringify(req?.op)}`));
  } catch (err) {
    return fail(looksLikeOom(err) ? 'oom' : 'tool_error', err);
  }
}

module.exports = { MAX_OUTPUT_BYTES, messageOf, looksLikeOom, initHome, ensureHome, setEnv, runOp };

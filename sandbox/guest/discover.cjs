// @ts-check
// Finds the tools of a package that declares none (no `toolshed` field, a TPMJS field without `tools`), and resolves a
// discovered tool again when it runs. Runs inside the sandbox only. A tool is found as:
//   ai-sdk-tool        an exported { description, inputSchema | parameters, execute } (an AI SDK tool())
//   factory            an exported function that, called with no argument, returns such a tool (`webSearch()`)
//   factory-record     ... or returns a record of tools, or one under `tools`: one tool per key (locator `<export>#<key>`)
//   record             an exported plain object whose values are tools (locator `<export>#<key>`)
//   agentic-function   an Agentic AIFunction: a callable with `spec` { name, description, parameters } and `execute`
//   agentic-provider   an Agentic AIFunctionsProvider class: each of `new Class().functions` (locator `<export>#<name>`)
//   langchain-tool     a LangChain JS tool (`tool()`, a DynamicStructuredTool, an instance of a StructuredTool class):
//                      { name, description, schema, invoke }, exported or made by a zero-argument factory
//   langchain-class    a LangChain tool class (`class Search extends StructuredTool`): `new Class()` is the tool
//   toolkit            with the import's arguments (a Toolkit's `args`): what an exported function or class makes when
//                      called with them: a tool, a record of tools, or an instance whose getTools() (allTools()), `tools` or
//                      `functions` hold them (PayPal's `new PayPalAgentToolkit({ clientId, … }).getTools()`), or else
//                      whose getters do (Pica's `new Pica(key).oneTool`, a record of tools)
// A locator (the tool's recorded export name) says how to get the tool back at run time: the factory is called, the
// class instantiated, with the caller's env set, and the tool's own execute runs. A tool of a Toolkit (a subpath entry
// or arguments) has a JSON locator, `{"entry"?, "export", "args"?, "key"?}`, that carries them.
'use strict';
const { isToolShaped } = require('./load.cjs');
const { fillVariables } = require('./variables.cjs');

/** A package exporting more than this is refused rather than scanned (describe must end in bounded time). */
const MAX_EXPORTS = 1000;
const MAX_TOOLS = 200;
/** How long one factory or constructor may take while describing; a slower one is skipped, with a note. */
const FACTORY_MS = 5000;
// One definition with the host's: env-names.cjs is generated from core/packages/env-names.ts (bin/env-names.ts).
const ENV_NAMES = require('./env-names.cjs');
/** Env names that look like credentials: read while describing, they get a placeholder and are reported. */
const SECRET_NAME = new RegExp(ENV_NAMES.credential);
const PLACEHOLDER = ENV_NAMES.placeholder;
/** Env names that look like a service's address (SEARXNG_API_BASE_URL): read while describing, a placeholder URL. */
const URL_NAME = new RegExp(ENV_NAMES.address);
const PLACEHOLDER_URL = ENV_NAMES.placeholderUrl;
/** An env variable's name as a failure names it (`GOOGLE_CSE_ID`): capitals with at least one underscore. */
const ENV_NAME = /^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$/;
/** How many times one export is examined again with more variables read as placeholders (see examine). */
const RETRIES = 3;
/** A tool's JSON Schema when the tool already carries one (Agentic's spec.parameters). */
const JSON_HINT = Symbol.for('toolshed.jsonSchema');

/** @typedef {import('./load.cjs').Tool} Tool */
/** A tool, with the JSON Schema it carries under JSON_HINT when it has one (Agentic's spec.parameters). @typedef {Tool & { [JSON_HINT]?: unknown }} FoundTool */
/**
 * An Agentic AIFunction: a callable with a spec, and execute; its other members are the package's.
 * @typedef {Function & { spec: { name?: unknown, description?: unknown, parameters?: unknown, strict?: unknown }, inputSchema?: unknown, execute: (input: unknown) => unknown }} AgenticFunction
 */
/** A LangChain JS tool, as far as it is read. @typedef {{ name: string, description?: unknown, schema?: unknown, invoke: (input: unknown) => unknown }} LangChainTool */
/** An Agentic AIFunctionsProvider class. @typedef {new (options?: object) => { functions?: Iterable<unknown> }} ProviderClass */
/** How a tool was found (see the header; sandbox/types.ts's DiscoveredHow). @typedef {'ai-sdk-tool' | 'factory' | 'factory-record' | 'record' | 'agentic-function' | 'agentic-provider' | 'langchain-tool' | 'langchain-class' | 'toolkit'} How */
/**
 * How the import says a package's tools are made (core/packages/toolkit.ts): `entry`, a subpath export read instead of
 * the main module (`./ai-sdk`); `args`, the arguments its functions and classes are called with (JSON: a string may
 * name a variable as `${NAME}`, the caller's value when a tool runs, a placeholder while it is described).
 * @typedef {{ entry?: string, args?: unknown[] }} Toolkit
 */
/** A tool's locator, read. @typedef {{ entry?: string, exportName: string, args?: unknown[], key: string | null }} Locator */
/** One tool of an export: its key in a record or provider (null for the export itself), the tool, and its own name. @typedef {[string | null, FoundTool | undefined, unknown?]} Member */
/** @typedef {{ how: How | null, members: Member[] }} Expanded */
/** `keyed`: a member of what the export yields (a record's key, a provider's function). @typedef {{ locator: string, name: string, how: How | null, tool: FoundTool, keyed: boolean }} Found */
/**
 * The env while describing (watchEnv): `read`, the placeholder names read (reported); `unset`, other unset names read;
 * `named`, unset names a failure named, read as placeholders from then on.
 * @typedef {{ read: Set<string>, unset: Set<string>, named: Set<string> }} WatchedEnv
 */

// The predicates below read a package's own values (any shape) by shape.
/** @param {any} fn */
const isClass = (fn) => typeof fn === 'function' && /^class[\s{]/.test(Function.prototype.toString.call(fn));
/**
 * @param {any} v
 * @returns {v is AgenticFunction}
 */
const isAgenticFunction = (v) => typeof v === 'function' && v.spec !== null && typeof v.spec === 'object' && typeof v.execute === 'function' && !isClass(v);
/**
 * @param {any} v
 * @returns {v is ProviderClass}
 */
const isProviderClass = (v) => isClass(v) && v.prototype !== null && typeof v.prototype === 'object' && 'functions' in v.prototype;
/**
 * Whether the namespace a LangChain object says it belongs to (`lc_namespace`: ['langchain', 'tools']) is its tools'.
 * @param {any} v
 */
const inToolsNamespace = (v) => {
  try {
    const ns = v.lc_namespace;
    return Array.isArray(ns) && ns[0] === 'langchain' && ns.includes('tools');
  } catch {
    return false;
  }
};
/**
 * A LangChain JS tool (@langchain/core/tools: `tool()`, DynamicTool, DynamicStructuredTool, a StructuredTool subclass's
 * instance): a Runnable with a name, a description, a schema (zod 3 or 4, or JSON Schema) and invoke().
 * @param {any} v
 * @returns {v is LangChainTool}
 */
const isLangChainTool = (v) =>
  v !== null && typeof v === 'object' && typeof v.invoke === 'function' && typeof v.name === 'string' && 'schema' in v && inToolsNamespace(v);
/**
 * A LangChain tool class (`class TavilySearch extends StructuredTool`): its prototype invokes and calls, in the tools'
 * namespace. Not a retriever or an API wrapper (no `_call`, or another namespace).
 * @param {any} v
 * @returns {v is new (options?: object) => LangChainTool}
 */
const isLangChainToolClass = (v) =>
  isClass(v) && v.prototype !== null && typeof v.prototype?.invoke === 'function' && typeof v.prototype?._call === 'function' && inToolsNamespace(v.prototype);
/**
 * @param {any} v
 * @returns {v is Record<string, unknown>}
 */
const isPlainObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && !isToolShaped(v);
/**
 * @param {any} v
 * @returns {v is Record<string, Tool | AgenticFunction>}
 */
const isRecordOfTools = (v) =>
  isPlainObject(v) && Object.keys(v).length > 0 && Object.values(v).every((x) => isToolShaped(x) || isAgenticFunction(x) || isLangChainTool(x));

/**
 * @param {unknown} v
 * @returns {boolean}
 */
const isNullable = (v) => {
  if (!v || typeof v !== 'object') return false;
  const s = /** @type {{ anyOf?: unknown, type?: unknown }} */ (v);
  return (
    (Array.isArray(s.anyOf) && s.anyOf.some((b) => b !== null && typeof b === 'object' && /** @type {{ type?: unknown }} */ (b).type === 'null')) ||
    (Array.isArray(s.type) && s.type.includes('null'))
  );
};

/**
 * Agentic's spec.parameters are in OpenAI's strict form: every property required, an optional one nullable
 * (`anyOf: [schema, { type: "null" }]`). Its AIFunction accepts such a property left out, so the tool's schema says so:
 * a nullable property is not required (it may still be null). Without this a REST call of @agentic/exa's `exa_search`
 * had to send all twelve of its parameters.
 * @param {unknown} schema
 * @returns {unknown}
 */
function optionalNullables(schema) {
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return schema;
  const s = /** @type {Record<string, unknown>} */ ({ ...schema });
  const props = s.properties;
  if (props && typeof props === 'object' && !Array.isArray(props)) {
    const properties = /** @type {Record<string, unknown>} */ (props);
    s.properties = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, optionalNullables(v)]));
    if (Array.isArray(s.required)) {
      const required = s.required.filter((k) => !isNullable(properties[k]));
      if (required.length > 0) s.required = required;
      else delete s.required;
    }
  }
  if (s.items !== undefined) s.items = optionalNullables(s.items);
  if (Array.isArray(s.anyOf)) s.anyOf = s.anyOf.map(optionalNullables);
  return s;
}

/**
 * An Agentic AIFunction as a tool: its zod schema validates, its spec's JSON Schema describes, execute runs.
 * @param {AgenticFunction} fn
 * @returns {FoundTool}
 */
function agenticTool(fn) {
  const spec = fn.spec;
  return {
    description: typeof spec.description === 'string' ? spec.description : '',
    inputSchema: fn.inputSchema ?? spec.parameters ?? { type: 'object' },
    /** @param {unknown} input */
    execute: (input) => fn.execute(input),
    [JSON_HINT]: spec.strict === true ? optionalNullables(spec.parameters) : spec.parameters,
  };
}

/**
 * A LangChain tool as a tool: its schema validates and describes, invoke runs (the tool's own parsing included).
 * @param {LangChainTool} lc
 * @returns {FoundTool}
 */
function langChainTool(lc) {
  return {
    description: typeof lc.description === 'string' ? lc.description : '',
    inputSchema: lc.schema ?? { type: 'object' },
    /** @param {unknown} input */
    execute: (input) => lc.invoke(input),
  };
}

/**
 * @param {unknown} v
 * @returns {FoundTool | undefined}
 */
const asTool = (v) => (isAgenticFunction(v) ? agenticTool(v) : isLangChainTool(v) ? langChainTool(v) : isToolShaped(v) ? v : undefined);

/**
 * The name a tool gives itself, when it has one (an Agentic function's spec name, a LangChain tool's name).
 * @param {unknown} v
 * @returns {string | undefined}
 */
const ownNameOf = (v) => (isAgenticFunction(v) ? String(v.spec.name) : isLangChainTool(v) ? v.name : undefined);

/**
 * @template T
 * @param {() => T} work
 * @param {string} what
 * @returns {Promise<Awaited<T>>}
 */
function withDeadline(work, what) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  /** @type {Promise<never>} */
  const limit = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not return within ${FACTORY_MS / 1000} s`)), FACTORY_MS);
  });
  return Promise.race([Promise.resolve().then(work), limit]).finally(() => clearTimeout(timer));
}

/**
 * The functions of an Agentic provider instance, by spec name.
 * @param {{ functions?: Iterable<unknown> }} instance
 */
function providerFunctions(instance) {
  /** @type {Map<string, AgenticFunction>} */
  const out = new Map();
  let functions;
  try {
    functions = instance.functions ?? [];
  } catch (err) {
    // Agentic asserts "Your runtime does not appear to support ES decorator metadata" when a class has no decorator
    // metadata at all: a client class without any @aiFunction method (@agentic/polygon's PolygonClient), not a runtime
    // without decorators (@agentic/core polyfills Symbol.metadata as Symbol.for('Symbol.metadata'), shared by realms).
    const key = Symbol.for('Symbol.metadata');
    const ctor = /** @type {Record<symbol, unknown> | undefined} */ (Object.getPrototypeOf(instance)?.constructor);
    if (ctor && ctor[key] === undefined && /decorator metadata/.test(String(/** @type {{ message?: unknown }} */ (err)?.message))) {
      throw new Error('an Agentic client class with no AI functions (no @aiFunction methods): it offers no tools');
    }
    throw err;
  }
  for (const fn of functions) if (isAgenticFunction(fn)) out.set(String(fn.spec.name), fn);
  return out;
}

/**
 * An Agentic provider instance's functions as tools, by spec name.
 * @param {{ functions?: Iterable<unknown> }} instance
 * @returns {Member[]}
 */
const providerMembers = (instance) => [...providerFunctions(instance)].map(([k, fn]) => /** @type {Member} */ ([k, agenticTool(fn)]));

/**
 * An instance of an Agentic client class. Most take an options object with defaults (`new Class()`); some destructure
 * it without one (`new ArXivClient({})`: `new ArXivClient()` is a TypeError), so a TypeError gets one try with `{}`.
 * @template T
 * @param {new (options?: object) => T} Class
 * @returns {T}
 */
function construct(Class) {
  try {
    return new Class();
  } catch (err) {
    if (!(err instanceof TypeError)) throw err;
    try {
      return new Class({});
    } catch {
      throw err;
    }
  }
}

/**
 * The arguments with each `${NAME}` in their strings replaced by the env's value ('' when unset).
 * @param {unknown} value
 * @returns {unknown}
 */
function filled(value) {
  if (typeof value === 'string') return fillVariables(value, (name) => process.env[name]);
  if (Array.isArray(value)) return value.map(filled);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, filled(v)]));
  return value;
}

/**
 * Whether a Toolkit's arguments make something of this export: a function or class that is not itself a tool or an
 * Agentic function (those are taken as they are, with or without arguments).
 * @param {unknown} value
 */
const madeByArguments = (value) => typeof value === 'function' && !isAgenticFunction(value) && !isToolShaped(value);

/**
 * What an export makes when called with a Toolkit's arguments: a class is instantiated, a function called, with them.
 * @param {string} name
 * @param {unknown} value
 * @param {unknown[]} args
 */
function madeWith(name, value, args) {
  const given = /** @type {unknown[]} */ (filled(args));
  if (isClass(value)) return withDeadline(() => new /** @type {new (...a: unknown[]) => unknown} */ (value)(...given), `new ${name}(…)`);
  if (typeof value === 'function') return withDeadline(() => value(...given), `${name}(…)`);
  return Promise.resolve(value);
}

/**
 * The tools of a record, or of an array of named tools (an Agentic function's spec name, or a `name`).
 * @param {unknown} v
 * @returns {Member[]}
 */
function collected(v) {
  if (isRecordOfTools(v)) return Object.entries(v).map(([k, x]) => [k, asTool(x)]);
  if (!Array.isArray(v)) return [];
  return v.flatMap((x) => {
    const tool = asTool(x);
    const name = ownNameOf(x) ?? x?.name;
    return tool && typeof name === 'string' && name !== '' ? [/** @type {Member} */ ([name, tool])] : [];
  });
}

/** A toolkit instance's methods that give all its tools. */
const TOOLKIT_METHODS = ['getTools', 'allTools', 'getAllTools'];

/**
 * The tools an instance hands out from its getters (Pica's `oneTool` and `intelligenceTool`, each a record of tools):
 * every getter of its classes that yields a tool, a record or an array of tools. A key two getters share is the first
 * one's; the other's is `<getter>.<key>`.
 * @param {object} made
 * @returns {Member[]}
 */
function getterMembers(made) {
  /** @type {Member[]} */
  const out = [];
  const keys = new Set();
  for (let proto = Object.getPrototypeOf(made); proto && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const [prop, d] of Object.entries(Object.getOwnPropertyDescriptors(proto))) {
      if (typeof d.get !== 'function' || prop === 'constructor') continue;
      let value;
      try {
        value = d.get.call(made);
      } catch {
        continue;
      }
      const tool = asTool(value);
      const members = tool ? [/** @type {Member} */ ([prop, tool])] : collected(value);
      for (const [k, t] of members) {
        const key = k !== null && keys.has(k) ? `${prop}.${k}` : k;
        keys.add(key);
        out.push([key, t]);
      }
    }
  }
  return out;
}

/**
 * The tools of what a Toolkit export made: itself as a tool, a record or array of tools, or an instance holding them
 * (its getTools() or allTools(), its `tools`, an Agentic provider's `functions`).
 * @param {any} made
 * @returns {Promise<Member[]>}
 */
async function toolkitMembers(made) {
  const tool = asTool(made);
  if (tool) return [[null, tool, ownNameOf(made)]];
  if (made !== null && typeof made === 'object') {
    // getTools() (PayPal, LangChain toolkits), allTools() (Clerk's `createClerkToolkit()`), getAllTools().
    const method = TOOLKIT_METHODS.find((m) => typeof made[m] === 'function');
    if (method) return collected(await withDeadline(() => made[method](), `${method}()`));
    if (isRecordOfTools(made.tools) || Array.isArray(made.tools)) return collected(made.tools);
    if ('functions' in made) return providerMembers(made);
    const fromGetters = getterMembers(made);
    if (fromGetters.length > 0) return fromGetters;
  }
  return collected(made);
}

/**
 * The locator of a tool: `export` or `export#key`, or, for a Toolkit with an entry or arguments, JSON carrying them.
 * @param {Toolkit | undefined} toolkit
 * @param {string} exportName
 * @param {string | null} key
 */
function locatorOf(toolkit, exportName, key) {
  if (!toolkit?.entry && !toolkit?.args) return key === null ? exportName : `${exportName}#${key}`;
  return JSON.stringify({
    ...(toolkit.entry ? { entry: toolkit.entry } : {}),
    export: exportName,
    ...(toolkit.args ? { args: toolkit.args } : {}),
    ...(key === null ? {} : { key }),
  });
}

/**
 * A locator, read (see locatorOf); throws on a JSON locator that is not one.
 * @param {string} locator
 * @returns {Locator}
 */
function parseLocator(locator) {
  if (locator.startsWith('{')) {
    const o = JSON.parse(locator);
    if (!o || typeof o.export !== 'string') throw new Error(`not a tool locator: ${locator.slice(0, 200)}`);
    return {
      ...(typeof o.entry === 'string' ? { entry: o.entry } : {}),
      exportName: o.export,
      ...(Array.isArray(o.args) ? { args: o.args } : {}),
      key: typeof o.key === 'string' ? o.key : null,
    };
  }
  const hash = locator.indexOf('#');
  return hash === -1 ? { exportName: locator, key: null } : { exportName: locator.slice(0, hash), key: locator.slice(hash + 1) };
}

/**
 * The members of what an export yields: [key or null, tool][] and how they were found, or a note why none. With a
 * Toolkit's arguments, every exported function and class is called with them (toolkit).
 * @param {string} name
 * @param {unknown} value
 * @param {Toolkit} [toolkit]
 * @returns {Promise<Expanded>}
 */
async function expand(name, value, toolkit) {
  if (toolkit?.args && madeByArguments(value)) {
    return { how: 'toolkit', members: await toolkitMembers(await madeWith(name, value, toolkit.args)) };
  }
  const direct = asTool(value);
  if (direct) {
    if (isAgenticFunction(value)) return { how: 'agentic-function', members: [[null, direct, value.spec.name]] };
    if (isLangChainTool(value)) return { how: 'langchain-tool', members: [[null, direct, value.name]] };
    return { how: 'ai-sdk-tool', members: [[null, direct]] };
  }
  if (isLangChainToolClass(value)) {
    const instance = await withDeadline(() => construct(value), `new ${name}()`);
    return { how: 'langchain-class', members: [[null, langChainTool(instance), instance.name]] };
  }
  if (isProviderClass(value)) {
    const instance = await withDeadline(() => construct(value), `new ${name}()`);
    return { how: 'agentic-provider', members: providerMembers(instance) };
  }
  if (isRecordOfTools(value)) return { how: 'record', members: collected(value) };
  if (typeof value === 'function' && !isClass(value) && value.length === 0) {
    const made = await withDeadline(() => value(), `${name}()`);
    const tool = asTool(made);
    if (tool) return { how: isLangChainTool(made) ? 'langchain-tool' : 'factory', members: [[null, tool, ownNameOf(made)]] };
    if (isRecordOfTools(made)) return { how: 'factory-record', members: collected(made) };
    // A factory whose result holds its tools beside other things (bash-tool's `{ bash, tools, sandbox }`).
    if (isPlainObject(made) && isRecordOfTools(made.tools)) return { how: 'factory-record', members: collected(made.tools) };
  }
  return { how: null, members: [] };
}

/**
 * expand, again while its failure names an unset variable the package read (`WolframAlphaClient missing required
 * "appId" (defaults to "WOLFRAM_APP_ID")`): such a name is not credential-like, yet the constructor insists on it, so
 * from then on it reads as a placeholder too (and is reported) and the export is examined once more.
 * @param {string} name
 * @param {unknown} value
 * @param {WatchedEnv | undefined} env
 * @param {Toolkit} [toolkit]
 * @returns {Promise<Expanded>}
 */
async function examine(name, value, env, toolkit) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await expand(name, value, toolkit);
    } catch (err) {
      const said = String(/** @type {{ message?: unknown }} */ (err)?.message ?? '');
      const named = env && attempt < RETRIES ? [...env.unset].filter((n) => !env.named.has(n) && new RegExp(`\\b${n}\\b`).test(said)) : [];
      if (named.length === 0) throw err;
      for (const n of named) env?.named.add(n);
    }
  }
}

/**
 * Every tool among the exports: [{ locator, name, how, tool }], plus notes on exports that could not be examined.
 * Throws when the package exports too much to examine.
 * @param {Map<string, unknown>} exportsMap
 * @param {WatchedEnv} [env]
 * @param {Toolkit} [toolkit]
 * @returns {Promise<{ found: Found[], notes: string[] }>}
 */
async function discoverTools(exportsMap, env, toolkit) {
  if (exportsMap.size > MAX_EXPORTS) {
    throw new Error(`the package has ${exportsMap.size} exports; at most ${MAX_EXPORTS} are examined when discovering tools`);
  }
  /** @type {Found[]} */
  const found = [];
  /** @type {string[]} */
  const notes = [];
  // One tool exported under two names (firecrawl-aisdk's `scrape` and `scrapeTool`) is one tool, under the first name.
  /** @type {Set<FoundTool>} */
  const seen = new Set();
  for (const [name, value] of exportsMap) {
    let r;
    try {
      r = await examine(name, value, env, toolkit);
    } catch (err) {
      const e = /** @type {{ message?: unknown }} */ (err);
      notes.push(`${name}: ${e && typeof e.message === 'string' ? e.message : String(err)}`);
      continue;
    }
    for (const [key, tool, ownName] of r.members) {
      if (!tool || seen.has(tool)) continue;
      seen.add(tool);
      const toolName = key ?? (typeof ownName === 'string' && ownName !== '' ? ownName : name);
      found.push({ locator: locatorOf(toolkit, name, key), name: cleanName(toolName), how: r.how, tool, keyed: key !== null });
      if (found.length > MAX_TOOLS) throw new Error(`the package yields more than ${MAX_TOOLS} tools`);
    }
  }
  // Nothing found: the 400 says what the package exports, and of what kind, first.
  if (found.length === 0 && exportsMap.size > 0) {
    const kinds = [...exportsMap].map(([name, v]) => `${name} (${kindOf(v)})`);
    notes.unshift(`exports found, none a tool: ${kinds.slice(0, 12).join(', ')}${kinds.length > 12 ? `, and ${kinds.length - 12} more` : ''}`);
  }
  // Nothing found, and functions or classes that take arguments were left uncalled: the import may give them some.
  if (found.length === 0 && !toolkit?.args) {
    const takes = [...exportsMap].flatMap(([name, v]) => {
      if (typeof v !== 'function' || isAgenticFunction(v) || isToolShaped(v)) return [];
      if (isClass(v)) return [`new ${name}(…)`];
      return v.length > 0 ? [`${name}(${v.length} argument${v.length === 1 ? '' : 's'})`] : [];
    });
    if (takes.length > 0) {
      const shown = takes.slice(0, 6).join(', ') + (takes.length > 6 ? ', …' : '');
      notes.push(`exports made with arguments were not called: ${shown}; an import with \`options\` (their arguments) calls them`);
    }
  }
  // A factory whose tool is also exported ready-made (`searchTool` and `createSearchTool()`) is the same tool once; so
  // is a toolkit's tool made by two exports (@supermemory/tools' `searchMemoriesTool(key)` and `supermemoryTools(key)`),
  // under its key in the toolkit's record when it has one.
  const ready = new Set(found.filter((f) => f.how === 'ai-sdk-tool').map((f) => f.tool.description));
  const inRecords = new Set(found.filter((f) => f.how === 'toolkit' && f.keyed).map((f) => f.tool.description));
  const made = new Set();
  const once = found.filter((f) => {
    if (f.how === 'factory') return !ready.has(f.tool.description);
    if (f.how !== 'toolkit' || typeof f.tool.description !== 'string' || f.tool.description === '') return true;
    if (made.has(f.tool.description) || (!f.keyed && inRecords.has(f.tool.description))) return false;
    made.add(f.tool.description);
    return true;
  });
  return { found: once, notes };
}

/**
 * What an export is, in a few words, for a package in which no tool was found.
 * @param {unknown} v
 */
function kindOf(v) {
  if (typeof v === 'function') {
    if (isClass(v)) return `class, ${v.length} constructor argument${v.length === 1 ? '' : 's'}`;
    return `function, ${v.length} argument${v.length === 1 ? '' : 's'}`;
  }
  if (Array.isArray(v)) return `array of ${v.length}`;
  if (v !== null && typeof v === 'object') {
    const keys = Object.keys(v);
    const own = /** @type {Record<string, unknown>} */ (v);
    const tooly = 'execute' in own || 'invoke' in own ? ' (has execute/invoke but no input schema)' : '';
    return `object of ${keys.length} key${keys.length === 1 ? '' : 's'}${tooly}`;
  }
  return v === null ? 'null' : typeof v;
}

/** @param {unknown} s */
const cleanName = (s) =>
  String(s)
    .replace(/[^A-Za-z0-9_-]/g, '_')
    .slice(0, 64);

/**
 * The tool a discovered locator names (see the header), or undefined. A plain export name is first read by
 * load.cjs's rules (`toolFromExport`); what those do not take (an Agentic function, a factory returning one) is read here.
 * @param {Map<string, unknown>} exportsMap
 * @param {string} locator
 * @param {typeof import('./load.cjs').toolFromExport} toolFromExport
 * @returns {Promise<FoundTool | undefined>}
 */
async function resolveTool(exportsMap, locator, toolFromExport) {
  const { exportName, key, args } = parseLocator(locator);
  const value = exportsMap.get(exportName);
  if (value === undefined) return undefined;
  if (args && madeByArguments(value)) return (await toolkitMembers(await madeWith(exportName, value, args))).find(([k]) => k === key)?.[1];
  if (key === null) {
    if (isLangChainToolClass(value)) return langChainTool(construct(value));
    const direct = asTool(value) ?? (await toolFromExport(value, { callFactories: 'all' }));
    if (direct || typeof value !== 'function' || isClass(value)) return direct;
    return asTool(await value());
  }
  if (isProviderClass(value)) {
    const fn = providerFunctions(construct(value)).get(key);
    return fn ? agenticTool(fn) : undefined;
  }
  const made = typeof value === 'function' && !isClass(value) ? await value() : value;
  const record = isPlainObject(made) && !Object.hasOwn(made, key) && isRecordOfTools(made.tools) ? made.tools : made;
  return isPlainObject(record) && Object.hasOwn(record, key) ? asTool(record[key]) : undefined;
}

/**
 * While describing: credential-like env names that are not set read as a placeholder, and address-like ones as a
 * placeholder URL (so that factories and constructors that insist on a key or a base URL can be described), and are
 * recorded; so do names a failure named (examine). Other unset names read are noted for examine. No request is made
 * while describing (the sandbox has no network then).
 * @returns {WatchedEnv}
 */
function watchEnv() {
  /** @type {WatchedEnv} */
  const env = { read: new Set(), unset: new Set(), named: new Set() };
  const real = process.env;
  process.env = new Proxy(real, {
    get(target, prop) {
      if (typeof prop === 'string' && !(prop in target)) {
        if (SECRET_NAME.test(prop) || URL_NAME.test(prop) || env.named.has(prop)) {
          env.read.add(prop);
          return URL_NAME.test(prop) ? PLACEHOLDER_URL : PLACEHOLDER;
        }
        if (ENV_NAME.test(prop) && env.unset.size < 1000) env.unset.add(prop);
      }
      return Reflect.get(target, prop);
    },
  });
  return env;
}

module.exports = { discoverTools, resolveTool, parseLocator, watchEnv, JSON_HINT, PLACEHOLDER };

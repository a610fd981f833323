// @ts-check
// A fresh V8 context for one reuse-mode execution: its own globals and built-in prototypes (a bare vm context), plus
// Node's globals (Buffer, URL, fetch, ...) copied in by descriptor, and per-context versions of what must not leak
// between executions: `process` (an object of its own over the real one, so assignments stay in this context), the
// timers (tracked, and all cleared when the execution ends), `console` (to stderr), and the module loader of
// modules.cjs. Creating one costs well under a millisecond.
'use strict';
const { Console } = require('node:console');
const timers = require('node:timers');
const { promisify } = require('node:util');
const vm = require('node:vm');
const { createLoader } = require('./modules.cjs');

/** Globals that each context gets its own version of (or, for the CommonJS module scope, none at all). */
const PER_CONTEXT = new Set([
  'global',
  'globalThis',
  'process',
  'console',
  'require',
  'module',
  'exports',
  '__filename',
  '__dirname',
  'setTimeout',
  'setInterval',
  'setImmediate',
  'clearTimeout',
  'clearInterval',
  'clearImmediate',
]);

/** @type {WeakSet<object>} */
const hardened = new WeakSet();
/** @type {Set<unknown> | undefined} */
let unfrozen;
/**
 * Host objects left as they are: the host realm's Object.prototype and Function.prototype (which everything inherits
 * from) and its errors, whose prototypes' `name` and `message` Node's own code overrides by assignment on instances.
 * @param {Set<string>} bare
 */
function unfrozenHostObjects(bare) {
  unfrozen ??= new Set([Object.prototype, Function.prototype]);
  for (const name of bare) {
    const v = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (globalThis))[name];
    if (/Error$/.test(name) && typeof v === 'function') unfrozen.add(v).add(v.prototype);
  }
  return unfrozen;
}
/**
 * Freezes a shared Node global, and everything its data properties and prototypes lead to (save the host objects
 * above): one execution cannot stash a value on `Buffer`, `URL.prototype` or `Uint8Array` for the next one to read.
 * @param {unknown} root
 */
function harden(root) {
  const stack = [root];
  while (stack.length > 0) {
    const v = stack.pop();
    if ((typeof v !== 'object' && typeof v !== 'function') || v === null || hardened.has(v) || unfrozen?.has(v)) continue;
    hardened.add(v);
    stack.push(Object.getPrototypeOf(v));
    for (const key of Reflect.ownKeys(v)) {
      const d = Object.getOwnPropertyDescriptor(v, key);
      if (d && 'value' in d) stack.push(d.value);
    }
    Object.freeze(v);
  }
  return root;
}

/** @type {PropertyDescriptorMap | undefined} */
let nodeGlobals;
/**
 * Descriptors of Node's globals that a bare context lacks, read once per sandbox. Their objects are shared by every
 * context of the sandbox, so they are frozen (harden); a lazily loaded one (Node defines fetch & co. as getters) is
 * frozen when first read.
 */
function nodeGlobalDescriptors() {
  if (!nodeGlobals) {
    /** @type {Set<string>} */
    const bare = new Set(vm.runInNewContext('Object.getOwnPropertyNames(globalThis)'));
    unfrozenHostObjects(bare);
    nodeGlobals = {};
    for (const name of Object.getOwnPropertyNames(globalThis)) {
      if (bare.has(name) || PER_CONTEXT.has(name)) continue;
      const d = /** @type {PropertyDescriptor} */ (Object.getOwnPropertyDescriptor(globalThis, name));
      if ('value' in d) harden(d.value);
      else if (d.get) {
        const get = d.get;
        d.get = function () {
          return harden(get.call(this));
        };
      }
      nodeGlobals[name] = d;
    }
  }
  return nodeGlobals;
}

/** setTimeout & co. that remember what they scheduled, so that nothing of an execution fires after it ended. */
function trackedTimers() {
  /** A timer's handle, and the function that clears it. @type {Map<unknown, (handle: any) => void>} */
  const live = new Map();
  /**
   * @param {Function} set
   * @param {(handle: any) => void} clear
   * @param {boolean} repeats
   */
  const track = (set, clear, repeats) => {
    /**
     * @param {unknown} fn
     * @param {...unknown} args
     */
    const wrapped = (fn, ...args) => {
      if (typeof fn !== 'function') return set(fn, ...args); // Node's own error
      /** @type {unknown} */
      let handle;
      const callback = repeats
        ? fn
        : /** @this {unknown} @param {...unknown} a */ function once(...a) {
            live.delete(handle);
            return fn.apply(this, a);
          };
      handle = set(callback, ...args);
      live.set(handle, clear);
      return handle;
    };
    // setTimeout's util.promisify version (timers/promises): not tracked, like the promise API.
    const custom = /** @type {{ [promisify.custom]?: unknown }} */ (set);
    if (custom[promisify.custom]) /** @type {{ [promisify.custom]?: unknown }} */ (wrapped)[promisify.custom] = custom[promisify.custom];
    return wrapped;
  };
  /** @param {(handle: any) => void} clear */
  const untrack = (clear) => (/** @type {any} */ handle) => {
    live.delete(handle);
    clear(handle);
  };
  return {
    setTimeout: track(setTimeout, clearTimeout, false),
    setInterval: track(setInterval, clearInterval, true),
    setImmediate: track(setImmediate, clearImmediate, false),
    clearTimeout: untrack(clearTimeout),
    clearInterval: untrack(clearInterval),
    clearImmediate: untrack(clearImmediate),
    clearAll() {
      for (const [handle, clear] of live) clear(handle);
      live.clear();
    },
  };
}

/**
 * A new context for one execution. `onExit(code)` is called when the tool calls process.exit. The returned realm
 * imports files in the context, turns host values into values of the context (`fromHost`), and `dispose()` clears
 * whatever the execution scheduled.
 * @param {import('./modules.cjs').ModuleCache} cache
 * @param {{ onExit: (code?: string | number | null) => void }} options
 */
function createRealm(cache, { onExit }) {
  const context = vm.createContext({});
  /** @type {typeof globalThis} */
  const global = vm.runInContext('globalThis', context);
  Object.defineProperties(global, nodeGlobalDescriptors());
  const { clearAll, ...timerFns } = trackedTimers();
  const proc = Object.create(process, {
    exit: { value: (/** @type {string | number | null | undefined} */ code) => onExit(code), writable: true, configurable: true, enumerable: true },
  });
  const cons = new Console({ stdout: process.stderr, stderr: process.stderr });
  Object.assign(global, { global, process: proc, console: cons, ...timerFns });
  const loader = createLoader(cache, {
    context,
    global,
    overrides: {
      process: proc,
      console: cons,
      timers: Object.assign(Object.create(Object.getPrototypeOf(timers), Object.getOwnPropertyDescriptors(timers)), timerFns),
    },
  });
  return {
    importFile: loader.importFile,
    /** A JSON-able host value rebuilt in the context (so `instanceof Array` holds for the tool's params). */
    /** @param {unknown} value */
    fromHost: (value) => (value === undefined ? undefined : global.JSON.parse(JSON.stringify(value))),
    dispose() {
      clearAll();
      if (cache.current === loader) cache.current = undefined;
    },
  };
}

module.exports = { createRealm };

// @ts-check
// Reuse mode of the guest: serves a sequence of requests (one per stdin line, all for the same caller and package)
// in one sandbox, one at a time. Each request runs in a fresh V8 context (realm.cjs) that evaluates the package
// afresh, with process.env set to that request's env only while it runs. Afterwards everything it scheduled is
// cleared, listeners it added to `process` are removed, every other process in the sandbox is killed and /tmp is
// wiped. When an execution leaves something behind that cannot be cleared (an open handle, a pending callback, an
// uncaught error, process.exit), its result says `retire` and the guest exits after writing it.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { readManifestFile, resolveEntry } = require('./load.cjs');
const { createRealm } = require('./realm.cjs');
const { readPackageJson } = require('./resolve.cjs');
const { ensureHome, looksLikeOom, messageOf, runOp, setEnv } = require('./run-op.cjs');

/** @typedef {import('./run-op.cjs').OpResult} OpResult */
/** @typedef {import('./run-op.cjs').Failure} Failure */
/**
 * A reuse-mode request (sandbox/reuse.ts): an op, its env, and the nonce its result line carries.
 * @typedef {import('./run-op.cjs').OpRequest & { nonce?: unknown, reuse?: unknown, env?: unknown, params?: unknown }} ReuseRequest
 */

const RESULT_MARKER = '@@toolshed-result';

function wipeTmp() {
  if (process.pid !== 1) return;
  for (const entry of fs.readdirSync('/tmp')) {
    fs.rmSync(path.join('/tmp', entry), { recursive: true, force: true });
  }
}

function killStrays() {
  if (process.pid !== 1) return;
  try {
    process.kill(-1, 'SIGKILL');
  } catch {
    // no other process
  }
}

/** What keeps the event loop alive (handles and requests), counted by kind. */
function activeResources() {
  /** @type {Map<string, number>} */
  const counts = new Map();
  for (const kind of process.getActiveResourcesInfo()) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  return counts;
}

/** Whether an execution left a handle or request open that was not there before (a server, a pending callback). */
/** @param {Map<string, number>} baseline */
const leftOpen = (baseline) => [...activeResources()].some(([kind, n]) => n > (baseline.get(kind) ?? 0));

const listenerSnapshot = () => new Map(process.eventNames().map((name) => [name, process.rawListeners(name)]));

/** @param {ReturnType<typeof listenerSnapshot>} snapshot */
function restoreListeners(snapshot) {
  for (const name of process.eventNames()) {
    const keep = snapshot.get(name) ?? [];
    for (const listener of process.rawListeners(name)) {
      if (!keep.includes(listener)) process.removeListener(name, /** @type {(...args: any[]) => void} */ (listener));
    }
  }
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * Serves `first` and every further request line (`nextLine()` resolves to a line, or undefined at the end of input),
 * writing result lines with `writeOut`. Returns when the input ends or the sandbox must retire. `cache` is the
 * sandbox's module cache (modules.cjs).
 * @param {ReuseRequest} first
 * @param {() => Promise<string | undefined>} nextLine
 * @param {import('./mcp-pipe.cjs').WriteOut} writeOut
 * @param {import('./modules.cjs').ModuleCache} cache
 */
async function serveReuse(first, nextLine, writeOut, cache) {
  // The clean-up between executions (kill(-1), emptying /tmp) is only right as pid 1 — the init of a sandbox's own
  // pid namespace, with its own tmpfs at /tmp. Anywhere else it would hit the host, so reuse mode refuses to run.
  if (process.pid !== 1) {
    writeOut(`\n${RESULT_MARKER} ${first.nonce ?? ''} {"ok":false,"code":"tool_error","error":"reuse mode runs only as a sandbox's init process"}\n`);
    return;
  }
  /** @type {Map<string, string>} */
  const entries = new Map();
  /** @param {string} pkgDir */
  const entryOf = (pkgDir) => {
    if (!entries.has(pkgDir))
      entries.set(
        pkgDir,
        resolveEntry(pkgDir, (dir) => readPackageJson(cache.packageJson, dir) ?? readManifestFile(dir)),
      );
    return /** @type {string} */ (entries.get(pkgDir));
  };
  /** @type {((result: Failure) => void) | undefined} */
  let interrupt; // ends the running execution early (process.exit, uncaught error)
  let strayError = false;
  process.exit = /** @type {typeof process.exit} */ (
    /** @param {string | number | null} [code] */
    (code) => interrupt?.({ ok: false, code: 'tool_error', error: `the tool called process.exit(${code ?? ''})` })
  );
  /** @param {unknown} err */
  const onFatal = (err) => {
    if (interrupt) interrupt({ ok: false, code: looksLikeOom(err) ? 'oom' : 'tool_error', error: messageOf(err) });
    else strayError = true;
  };
  process.on('uncaughtException', onFatal);
  process.on('unhandledRejection', onFatal);
  // The baseline of what may stay open: the standard streams (created lazily, so create them now), once transient
  // requests of the guest's own start (closing warm-up handles) have settled.
  for (const stream of [process.stdin, process.stdout, process.stderr]) void stream.writable;
  await nextTurn();
  const baseline = { resources: activeResources(), listeners: listenerSnapshot() };

  /**
   * @param {import('./run-op.cjs').OpRequest & { params?: unknown }} op
   * @param {unknown} env
   * @returns {Promise<OpResult & { retire?: true }>} `retire`: the sandbox must not serve another
   */
  async function runOne(op, env) {
    setEnv(env);
    /** @type {Failure | undefined} */
    let interrupted;
    /** @type {Promise<Failure>} */
    const stop = new Promise((resolve) => (interrupt = (result) => resolve((interrupted ??= result))));
    const realm = createRealm(cache, { onExit: (code) => process.exit(code) });
    try {
      const io = { importFile: realm.importFile, entryOf };
      const result = await Promise.race([runOp({ ...op, params: realm.fromHost(op.params) }, io), stop]);
      await nextTurn(); // lets this execution's unhandled rejections surface while it is still the current one
      return interrupted ? { ...interrupted, retire: true } : result;
    } finally {
      interrupt = undefined;
      realm.dispose();
      setEnv({});
      restoreListeners(baseline.listeners);
    }
  }

  let req = first;
  while (req) {
    const { nonce = '', reuse, env, ...op } = req;
    const { outputJson, retire: mustRetire, ...rest } = await runOne(op, env);
    const retire = mustRetire === true || strayError || leftOpen(baseline.resources);
    const tail = retire ? ',"retire":true}' : '}';
    const body = outputJson !== undefined ? `{"ok":true,"output":${outputJson}${tail}` : `${JSON.stringify(rest).slice(0, -1)}${tail}`;
    await new Promise((resolve) => writeOut(`\n${RESULT_MARKER} ${nonce} ${body}\n`, resolve));
    // Clean up before reading the next request (which may already be waiting on stdin).
    killStrays();
    try {
      process.chdir('/tmp');
    } catch {
      // stays where the tool left it; /tmp is emptied below either way
    }
    try {
      wipeTmp();
    } catch {
      // best effort; what is left belongs to the same caller and package
    }
    try {
      ensureHome(); // emptied with /tmp
    } catch {
      // /tmp is full of what could not be removed: the next execution finds no home, as it would find no space
    }
    if (retire) return;
    const line = await nextLine();
    if (line === undefined) return;
    try {
      req = JSON.parse(line);
    } catch {
      return;
    }
  }
}

module.exports = { serveReuse };

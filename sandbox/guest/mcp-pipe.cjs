// @ts-check
// MCP servers (op `mcp`). By default (`inGuest`) the guest runs the server itself: it already runs, from its startup
// snapshot, so the server pays only for loading its own modules (with the guest's loader, modules.cjs), not for
// starting another Node (about half of a server's start under gVisor). The guest sets the server's env, argv and cwd,
// gives it the real stdout, prints the pipe marker and loads the bin; stdin chunks that come before the server listens
// are held and handed over in order. A server that cannot run this way (the import tries both, see
// worker/mcp-import.ts) is started as a child process instead:
// the guest starts the package's `bin` with this sandbox's node, as a child process inside
// the same sandbox (same limits, same read-only package, same private /tmp), with the request's env only, prints
// `@@toolshed-pipe <nonce>` and from then on is a plain pipe: its stdin goes to the server's stdin, the server's
// stdout to its stdout (the host's MCP client speaks JSON-RPC over it), the server's stderr to its stderr. When the
// server exits, the guest exits with its code; the host destroys the sandbox after one call anyway, so children the
// server left behind end with it.
'use strict';
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { fillVariables } = require('./variables.cjs');

/**
 * An `mcp` request as the host writes it (sandbox/mcp-run.ts, with the package dir): each field is checked where read.
 * @typedef {{ pkgDir?: unknown, bin?: unknown, args?: unknown, bundle?: unknown, env?: unknown, files?: unknown, nonce?: unknown }} McpRequest
 */
/** main.cjs's write to the real stdout. @typedef {(chunk: string | Uint8Array, cb?: (err?: Error | null) => void) => boolean} WriteOut */
/** Ends the guest with an exit code, once stdout is flushed. @typedef {(code: number) => void} Exit */

const PIPE_MARKER = '@@toolshed-pipe';
/** The server's V8 heap: most of the sandbox's memory (the guest itself needs little once it only pipes). */
const SERVER_HEAP_MB = 160;

/**
 * The server's entry, argv and env, or undefined (after saying why) when the entry is outside the package. `entry` is
 * what is loaded: the bin, or the one-file bundle made of it at import (`req.bundle`, sandbox/mcp-bundle.ts), which
 * runs with the bin as its argv[1] (servers compare it with their own import.meta.url, which the bundle keeps).
 */
/** @param {McpRequest} req */
function launchOf(req) {
  const pkgDir = String(req.pkgDir ?? '');
  /** @param {string} p */
  const inPkg = (p) => p.startsWith(`${pkgDir}/`);
  const bin = path.resolve(pkgDir, String(req.bin ?? ''));
  const entry = typeof req.bundle === 'string' && req.bundle ? path.resolve(pkgDir, req.bundle) : bin;
  if (!pkgDir || !inPkg(bin) || !inPkg(entry)) {
    process.stderr.write('mcp: the server entry is not inside the package\n');
    return undefined;
  }
  const home = process.env.HOME || process.cwd();
  /** @type {Record<string, string>} */
  const given = {};
  for (const [k, v] of Object.entries(req.env && typeof req.env === 'object' ? req.env : {})) given[k] = String(v);
  writeFiles(Array.isArray(req.files) ? req.files.map(String) : [], given);
  // An argument may name a variable (`${MONDAY_TOKEN}`, core/packages/mcp-server.ts): the request's value goes there.
  const args = (Array.isArray(req.args) ? req.args.map(String) : []).map((a) =>
    fillVariables(a, (name) => (Object.hasOwn(given, name) ? given[name] : undefined)),
  );
  // A .NET server shipped through npm (@azure/mcp) refuses to start without ICU, which the sandbox does not hold;
  // invariant globalization is what its error suggests instead.
  const env = { HOME: home, TMPDIR: '/tmp', PATH: '/usr/bin:/bin', NODE_ENV: 'production', DOTNET_SYSTEM_GLOBALIZATION_INVARIANT: '1', ...given };
  return { bin, entry, args, home, env };
}

/**
 * A variable whose value is a file's content (a credentials JSON, core/types.ts EnvVarSpec.file): the content goes
 * into a file of a directory only this sandbox's user can read (0700, the file 0600) on the sandbox's /tmp, a tmpfs of
 * its own (sandbox/bundle.ts), never the package or the host's disk, and the variable names the file instead. The
 * files are removed when the guest exits (the sandbox, and its tmpfs, go after one call anyway).
 * @param {string[]} names
 * @param {Record<string, string>} given
 */
function writeFiles(names, given) {
  const wanted = names.filter((n) => Object.hasOwn(given, n) && /^[A-Za-z_][A-Za-z0-9_]*$/.test(n));
  if (wanted.length === 0) return;
  const dir = fs.mkdtempSync(path.join('/tmp', 'toolshed-files-'));
  fs.chmodSync(dir, 0o700);
  for (const name of wanted) {
    const file = path.join(dir, name);
    fs.writeFileSync(file, given[name], { mode: 0o600, flag: 'wx' });
    given[name] = file;
  }
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
}

/**
 * Runs the server in this process (see above); `importFile` is the guest loader's.
 * @param {McpRequest} req
 * @param {WriteOut} writeOut
 * @param {import('./load.cjs').ImportFile} importFile
 * @param {Exit} exit
 */
async function serveMcpInGuest(req, writeOut, importFile, exit) {
  const launch = launchOf(req);
  if (!launch) return exit(2);
  for (const key of Object.keys(process.env)) delete process.env[key];
  Object.assign(process.env, launch.env);
  process.argv = [process.execPath, launch.bin, ...launch.args];
  process.chdir(launch.home);
  // The request reader lets go of stdin; chunks until the server listens are held, then replayed before any other.
  const stdin = process.stdin;
  stdin.removeAllListeners('data');
  stdin.removeAllListeners('end');
  // Node's internal state of the stream: its decoder would turn the server's bytes into the request reader's strings.
  const state = /** @type {{ _readableState?: { decoder: unknown, encoding: unknown } }} */ (/** @type {unknown} */ (stdin))._readableState;
  if (state) {
    state.decoder = null;
    state.encoding = null;
  }
  /** @type {Buffer[]} */
  const held = [];
  /** @param {string | Buffer} chunk */
  const hold = (chunk) => held.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  stdin.on('data', hold);
  /**
   * @param {string | symbol} event
   * @param {Function} listener
   */
  const handOver = (event, listener) => {
    if (event !== 'data' || listener === hold) return;
    stdin.off('newListener', handOver);
    process.nextTick(() => {
      stdin.off('data', hold);
      for (const chunk of held.splice(0)) stdin.emit('data', chunk);
    });
  };
  stdin.on('newListener', handOver);
  process.stdout.write = /** @type {typeof process.stdout.write} */ (writeOut);
  writeOut(`${PIPE_MARKER} ${String(req.nonce ?? '')}\n`);
  try {
    await importFile(launch.entry);
  } catch (err) {
    const e = /** @type {{ stack?: unknown }} */ (err);
    process.stderr.write(`mcp: the server failed to load: ${e?.stack ? e.stack : String(err)}\n`);
    exit(1);
  }
}

/**
 * @param {McpRequest} req
 * @param {WriteOut} writeOut
 * @param {Exit} exit
 */
function serveMcp(req, writeOut, exit) {
  const launch = launchOf(req);
  if (!launch) return exit(2);
  const { bin, args, home, env } = launch;
  const child = spawn(process.execPath, [`--max-old-space-size=${SERVER_HEAP_MB}`, bin, ...args], {
    cwd: home,
    env,
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  // From here on, stdin is the server's: the request reader lets go of it.
  process.stdin.removeAllListeners('data');
  process.stdin.on('data', (chunk) => child.stdin.write(chunk));
  process.stdin.on('end', () => child.stdin.end());
  child.stdin.on('error', () => {});
  child.on('error', (err) => {
    process.stderr.write(`mcp: cannot start the server: ${err.message}\n`);
    exit(127);
  });
  writeOut(`${PIPE_MARKER} ${String(req.nonce ?? '')}\n`);
  child.stdout.on('data', (chunk) => writeOut(chunk));
  child.on('close', (code, signal) => {
    if (signal) process.stderr.write(`mcp: the server was ended by ${signal}\n`);
    exit(code ?? 1);
  });
}

module.exports = { serveMcp, serveMcpInGuest, PIPE_MARKER };

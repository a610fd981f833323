// @ts-check
// The guest: the only program that runs inside a sandbox. With --serve it prints a ready marker (a warm pool knows it
// is booted and waiting), reads ONE JSON request line on stdin, sets process.env to the request's env, runs the op,
// and prints ONE result line on stdout:
//   @@toolshed-result <nonce> {"ok":true,"output":...} | {"ok":false,"code":...,"error":"..."}
// Anything the tool prints goes to stderr, so stdout carries only the protocol. A request with `reuse: true` switches
// to reuse mode (reuse.cjs): each further request line runs in a fresh V8 context. Never prints env values.
// In gVisor the guest starts from a startup snapshot of these files (bundle.ts builds it, running this file with
// --build-snapshot): everything the guest needs is then loaded and compiled before a sandbox starts. Run directly
// (`node main.cjs --serve`, the process runner) it does the same work at start.
'use strict';
const v8 = require('node:v8');
const { createLoader, createModuleCache } = require('./modules.cjs');
const { serveReuse } = require('./reuse.cjs');
const { initHome, looksLikeOom, messageOf, runOp, setEnv } = require('./run-op.cjs');
const { warmUp, warmUpForSnapshot } = require('./warm.cjs');
const { serveMcp, serveMcpInGuest } = require('./mcp-pipe.cjs');

/**
 * The first request line: one op (run-op.cjs; `mcp`: mcp-pipe.cjs), or the first of a reuse-mode sequence (reuse.cjs).
 * @typedef {import('./run-op.cjs').OpRequest & { nonce?: unknown, reuse?: unknown, env?: unknown, inGuest?: unknown }} GuestRequest
 */

const READY_MARKER = '@@toolshed-ready';
const RESULT_MARKER = '@@toolshed-result';

/** Request lines from stdin: `nextLine()` resolves to the next line, or undefined at the end of input. */
function stdinLines() {
  /** @type {string[]} */
  const queue = [];
  let buffer = '';
  let ended = false;
  /** @type {((value?: unknown) => void) | undefined} */
  let wake;
  const notify = () => wake?.();
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    buffer += chunk;
    for (let at = buffer.indexOf('\n'); at !== -1; at = buffer.indexOf('\n')) {
      queue.push(buffer.slice(0, at));
      buffer = buffer.slice(at + 1);
    }
    notify();
  });
  const end = () => {
    if (buffer) queue.push(buffer);
    buffer = '';
    ended = true;
    notify();
  };
  process.stdin.on('end', end);
  process.stdin.on('error', end);
  return async function nextLine() {
    while (queue.length === 0 && !ended) await new Promise((resolve) => (wake = resolve));
    wake = undefined;
    return queue.shift();
  };
}

async function main() {
  const writeOut = process.stdout.write.bind(process.stdout);
  const realExit = process.exit.bind(process);
  let nonce = '';
  let done = false;
  /**
   * Writes the one-shot result line once and exits.
   * @param {import('./run-op.cjs').OpResult} result
   */
  const finish = (result) => {
    if (done) return;
    done = true;
    const { outputJson, ...rest } = result;
    const body = outputJson !== undefined ? `{"ok":true,"output":${outputJson}}` : JSON.stringify(rest);
    writeOut(`\n${RESULT_MARKER} ${nonce} ${body}\n`, () => realExit(0));
  };
  // Tool output must not corrupt the protocol on stdout: send it to stderr.
  process.stdout.write = /** @type {typeof process.stdout.write} */ (
    /**
     * @param {string | Uint8Array} chunk
     * @param {BufferEncoding} encoding
     * @param {(err?: Error | null) => void} cb
     */
    (chunk, encoding, cb) => process.stderr.write(chunk, encoding, cb)
  );

  initHome();
  const cache = createModuleCache();
  const nextLine = stdinLines();
  const args = process.argv.slice(1);
  if (args.includes('--serve')) {
    const mode = args.find((a) => a.startsWith('--warm='))?.slice(7) ?? 'vm';
    await warmUp(mode, cache).catch(() => {});
    writeOut(`${READY_MARKER}\n`);
  }
  /** @type {GuestRequest} */
  let req;
  try {
    const line = await nextLine();
    if (line === undefined) throw new Error('no request received');
    req = JSON.parse(line);
  } catch (err) {
    finish({ ok: false, code: 'tool_error', error: `bad request: ${messageOf(err)}` });
    return;
  }
  nonce = typeof req.nonce === 'string' ? req.nonce : '';
  if (req.reuse === true) {
    await serveReuse(req, nextLine, writeOut, cache);
    realExit(0);
    return;
  }
  if (req.op === 'mcp') {
    // An MCP server: the guest runs it, or starts it as a child, and pipes its stdio (mcp-pipe.cjs).
    /** @param {number} code */
    const exit = (code) => writeOut('', () => realExit(code));
    if (req.inGuest === true) await serveMcpInGuest(req, writeOut, createLoader(cache).importFile, exit);
    else serveMcp(req, writeOut, exit);
    return;
  }
  setEnv(req.env);
  delete req.env;
  process.exit = /** @type {typeof process.exit} */ (
    /** @param {string | number | null} [code] */
    (code) => {
      finish({ ok: false, code: 'tool_error', error: `the tool called process.exit(${code ?? ''})` });
      // The result is written; the process exits as soon as it is flushed, whatever the tool does meanwhile.
      return undefined;
    }
  );
  /** @param {unknown} err */
  const onFatal = (err) => finish({ ok: false, code: looksLikeOom(err) ? 'oom' : 'tool_error', error: messageOf(err) });
  process.on('uncaughtException', onFatal);
  process.on('unhandledRejection', onFatal);
  const loader = createLoader(cache);
  finish(await runOp(req, { importFile: loader.importFile, entryOf: loader.entryOf }));
}

/** @param {unknown} err */
const crash = (err) => {
  process.stderr.write(`guest failed: ${messageOf(err)}\n`);
  process.exitCode = 1;
};

if (v8.startupSnapshot?.isBuildingSnapshot()) {
  v8.startupSnapshot.setDeserializeMainFunction(() => void main().catch(crash));
  warmUpForSnapshot().catch(crash);
} else {
  void main().catch(crash);
}

// The guest: the only program that runs inside a sandbox. It reads ONE JSON request (a file path argument, or a line
// on stdin; with --serve it first prints a ready marker so a warm pool knows it is booted and waiting), sets
// process.env to the request's env, runs the op, and prints ONE result line on stdout:
//   @@toolshed-result <nonce> {"ok":true,"output":...} | {"ok":false,"code":...,"error":"..."}
// Anything the tool prints goes to stderr, so stdout carries only the protocol. A request with `reuse: true` switches
// to reuse mode (see reuse.mjs): each further request line runs in a fresh worker thread. Never prints env values.
import fs from 'node:fs';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';
import { runOp, messageOf, looksLikeOom } from './run-op.mjs';

export const READY_MARKER = '@@toolshed-ready';
export const RESULT_MARKER = '@@toolshed-result';

const writeOut = process.stdout.write.bind(process.stdout);
const realExit = process.exit.bind(process);
let nonce = '';
let done = false;

/** Writes the result line once and exits. */
function finish(result) {
  if (done) return;
  done = true;
  const { outputJson, ...rest } = result;
  const body = outputJson !== undefined ? `{"ok":true,"output":${outputJson}}` : JSON.stringify(rest);
  writeOut(`\n${RESULT_MARKER} ${nonce} ${body}\n`, () => realExit(0));
}

function redirectStdout() {
  // Tool output must not corrupt the protocol on stdout: send it to stderr.
  process.stdout.write = (chunk, encoding, cb) => process.stderr.write(chunk, encoding, cb);
}

/**
 * Runs describe + execute (--warm=full, the default) or execute only (--warm=light) on a bundled package before
 * reporting ready, so the first real request finds the loader, validator and heap warm (~3x faster under gVisor).
 */
async function warmUp(mode) {
  if (mode === 'none') return;
  const pkgDir = fileURLToPath(new URL('./warmup/', import.meta.url));
  if (mode === 'full') await runOp({ op: 'describe', pkgDir });
  await runOp({ op: 'execute', pkgDir, exportName: 'warm', params: { text: 'x', n: 2 } });
}

function guardProcess() {
  process.exit = (code) => {
    finish({ ok: false, code: 'tool_error', error: `the tool called process.exit(${code ?? ''})` });
    // The result is written; the process exits as soon as it is flushed, whatever the tool does meanwhile.
    return undefined;
  };
  const onFatal = (err) => finish({ ok: false, code: looksLikeOom(err) ? 'oom' : 'tool_error', error: messageOf(err) });
  process.on('uncaughtException', onFatal);
  process.on('unhandledRejection', onFatal);
}

function setEnv(env) {
  for (const key of Object.keys(process.env)) delete process.env[key];
  if (env && typeof env === 'object') {
    for (const [key, value] of Object.entries(env)) if (typeof value === 'string') process.env[key] = value;
  }
}

async function readRequest(lines) {
  if (process.argv[2] && process.argv[2] !== '--serve') return JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const { value, done: eof } = await lines.next();
  if (eof) throw new Error('no request received');
  return JSON.parse(value);
}

async function main() {
  const serve = process.argv.includes('--serve');
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity })[Symbol.asyncIterator]();
  redirectStdout();
  if (serve) {
    const mode = process.argv.find((a) => a.startsWith('--warm='))?.slice(7) ?? 'full';
    await warmUp(mode).catch(() => {});
    writeOut(`${READY_MARKER}\n`);
  }
  let req;
  try {
    req = await readRequest(lines);
  } catch (err) {
    finish({ ok: false, code: 'tool_error', error: `bad request: ${messageOf(err)}` });
    return;
  }
  nonce = typeof req.nonce === 'string' ? req.nonce : '';
  if (req.reuse === true) {
    const { serveReuse } = await import('./reuse.mjs');
    await serveReuse(req, lines, writeOut);
    realExit(0);
    return;
  }
  setEnv(req.env);
  delete req.env;
  guardProcess();
  finish(await runOp(req));
}

main().catch((err) => finish({ ok: false, code: 'tool_error', error: messageOf(err) }));

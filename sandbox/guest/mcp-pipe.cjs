// MCP servers (op `mcp`): the guest starts the package's `bin` with this sandbox's node, as a child process inside
// the same sandbox (same limits, same read-only package, same private /tmp), with the request's env only, prints
// `@@toolshed-pipe <nonce>` and from then on is a plain pipe: its stdin goes to the server's stdin, the server's
// stdout to its stdout (the host's MCP client speaks JSON-RPC over it), the server's stderr to its stderr. When the
// server exits, the guest exits with its code; the host destroys the sandbox after one call anyway, so children the
// server left behind end with it.
'use strict';
const { spawn } = require('node:child_process');
const path = require('node:path');

const PIPE_MARKER = '@@toolshed-pipe';
/** The server's V8 heap: most of the sandbox's memory (the guest itself needs little once it only pipes). */
const SERVER_HEAP_MB = 160;

function serveMcp(req, writeOut, exit) {
  const pkgDir = String(req.pkgDir ?? '');
  const bin = path.resolve(pkgDir, String(req.bin ?? ''));
  if (!pkgDir || !bin.startsWith(`${pkgDir}/`)) {
    process.stderr.write('mcp: the server entry is not inside the package\n');
    exit(2);
    return;
  }
  const args = Array.isArray(req.args) ? req.args.map(String) : [];
  const home = process.env.HOME || process.cwd();
  const env = { HOME: home, TMPDIR: '/tmp', PATH: '/usr/bin:/bin', NODE_ENV: 'production' };
  for (const [k, v] of Object.entries(req.env && typeof req.env === 'object' ? req.env : {})) env[k] = String(v);
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

module.exports = { serveMcp, PIPE_MARKER };

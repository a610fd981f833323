// Reuse mode of the guest: serves a sequence of requests (one per stdin line, all for the same caller and package)
// in one sandbox. Each request runs in a fresh worker thread — a new V8 isolate with its own module graph, globals
// and process.env (the request's env, never set on the main thread) — and afterwards /tmp is wiped and every other
// process in the sandbox is killed, so nothing an execution leaves behind is seen by the next one.
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { messageOf } from './run-op.mjs';

const RESULT_MARKER = '@@toolshed-result';

function heapLimitMb() {
  const flag = process.execArgv.find((a) => a.startsWith('--max-old-space-size='));
  return flag ? Math.max(16, Math.floor(Number(flag.split('=')[1]) * 0.8)) : 128;
}

function runInWorker(req) {
  const { env, nonce, reuse, ...op } = req;
  return new Promise((resolve) => {
    let result;
    const worker = new Worker(new URL('./worker.mjs', import.meta.url), {
      workerData: op,
      env: env && typeof env === 'object' ? { ...env } : {},
      resourceLimits: { maxOldGenerationSizeMb: heapLimitMb() },
    });
    worker.once('message', (m) => (result = m));
    worker.once('error', (err) => {
      const oom = err?.code === 'ERR_WORKER_OUT_OF_MEMORY';
      result ??= { ok: false, code: oom ? 'oom' : 'tool_error', error: messageOf(err) };
    });
    worker.once('exit', (code) => {
      resolve(result ?? { ok: false, code: 'tool_error', error: `the tool ended its thread (exit code ${code})` });
    });
  });
}

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

export async function serveReuse(first, lines, writeOut) {
  // The clean-up between executions (kill(-1), emptying /tmp) is only right as pid 1 — the init of a sandbox's own
  // pid namespace, with its own tmpfs at /tmp. Anywhere else it would hit the host, so reuse mode refuses to run.
  if (process.pid !== 1) {
    writeOut(`\n${RESULT_MARKER} ${first.nonce ?? ''} {"ok":false,"code":"tool_error","error":"reuse mode runs only as a sandbox's init process"}\n`);
    return;
  }
  let req = first;
  while (req) {
    const { outputJson, ...rest } = await runInWorker(req);
    const body = outputJson !== undefined ? `{"ok":true,"output":${outputJson}}` : JSON.stringify(rest);
    writeOut(`\n${RESULT_MARKER} ${req.nonce ?? ''} ${body}\n`);
    // Clean up before reading the next request (which may already be waiting on stdin).
    killStrays();
    try {
      wipeTmp();
    } catch {
      // best effort; what is left belongs to the same caller and package
    }
    const next = await lines.next();
    if (next.done) return;
    try {
      req = JSON.parse(next.value);
    } catch {
      return;
    }
  }
}

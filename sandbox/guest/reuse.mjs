// Reuse mode of the guest: serves a sequence of requests (one per stdin line, all for the same caller and package)
// in one sandbox. Each request runs in a fresh worker thread — a new V8 isolate with its own module graph, globals
// and process.env (the request's env, never set on the main thread), booted while the previous result travels —
// and afterwards every other process in the sandbox is killed and /tmp is wiped, so nothing an execution leaves
// behind is seen by the next one.
import fs from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { messageOf } from './run-op.mjs';

const RESULT_MARKER = '@@toolshed-result';

function heapLimitMb() {
  const flag = process.execArgv.find((a) => a.startsWith('--max-old-space-size='));
  return flag ? Math.max(16, Math.floor(Number(flag.split('=')[1]) * 0.8)) : 128;
}

/** A worker thread booted ahead of its request (the boot of an isolate is the slow part under gVisor). */
function startWorker(warm) {
  const worker = new Worker(new URL('./worker.mjs', import.meta.url), {
    env: {},
    workerData: { warm },
    resourceLimits: { maxOldGenerationSizeMb: heapLimitMb() },
  });
  let settle;
  const result = new Promise((resolve) => (settle = resolve));
  let failure;
  worker.once('message', (m) => {
    settle(m);
    void worker.terminate();
  });
  worker.once('error', (err) => {
    const oom = err?.code === 'ERR_WORKER_OUT_OF_MEMORY';
    failure ??= { ok: false, code: oom ? 'oom' : 'tool_error', error: messageOf(err) };
  });
  worker.once('exit', (code) => settle(failure ?? { ok: false, code: 'tool_error', error: `the tool ended its thread (exit code ${code})` }));
  return {
    run(req) {
      const { nonce, reuse, ...op } = req;
      worker.postMessage(op);
      return result;
    },
  };
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
  let worker = startWorker(false);
  while (req) {
    const { outputJson, ...rest } = await worker.run(req);
    const body = outputJson !== undefined ? `{"ok":true,"output":${outputJson}}` : JSON.stringify(rest);
    writeOut(`\n${RESULT_MARKER} ${req.nonce ?? ''} ${body}\n`);
    // Clean up before reading the next request (which may already be waiting on stdin).
    killStrays();
    try {
      wipeTmp();
    } catch {
      // best effort; what is left belongs to the same caller and package
    }
    worker = startWorker(true);
    const next = await lines.next();
    if (next.done) return;
    try {
      req = JSON.parse(next.value);
    } catch {
      return;
    }
  }
}

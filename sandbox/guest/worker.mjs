// Worker-thread entry for reuse mode. Started ahead of time with an empty private process.env, it warms up on the
// bundled warm-up package (unless it is needed at once), then waits for ONE request (queued on the port until then),
// sets process.env to the request's env, runs it in this fresh isolate and posts the result. The guest terminates the
// thread afterwards.
import { parentPort, workerData } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import { runOp } from './run-op.mjs';

const warmDir = fileURLToPath(new URL('./warmup/', import.meta.url));
if (workerData?.warm) await runOp({ op: 'execute', pkgDir: warmDir, exportName: 'warm', params: { text: 'x' } });

parentPort.once('message', async (req) => {
  for (const key of Object.keys(process.env)) delete process.env[key];
  for (const [key, value] of Object.entries(req.env ?? {})) if (typeof value === 'string') process.env[key] = value;
  delete req.env;
  parentPort.postMessage(await runOp(req));
});

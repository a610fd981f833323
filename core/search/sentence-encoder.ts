/**
 * A sentence encoder in its own worker thread, so that encoding (about 15 ms of CPU per query, 8–25 ms per document)
 * never blocks the event loop: `embed(texts)` resolves to one unit vector (512 dimensions) per text. Requests are
 * answered in order; the model loads once, in the thread, when the encoder is created.
 */
import { Worker } from 'node:worker_threads';

export interface SentenceEncoder {
  embed(texts: string[]): Promise<Float32Array[]>;
  /** Why the thread is gone (it failed or exited), or undefined while it lives; after that every embed() rejects. */
  failure(): string | undefined;
  close(): Promise<void>;
}

function startWorker(): Worker {
  const url = new URL(`./sentence-encoder-worker${import.meta.url.endsWith('.ts') ? '.ts' : '.js'}`, import.meta.url);
  if (url.pathname.endsWith('.js')) return new Worker(url);
  // Run from TypeScript sources (npm start, tests): the thread registers tsx before loading the worker module.
  return new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(url.href)}); })`, { eval: true });
}

export function createSentenceEncoder(): SentenceEncoder {
  const worker = startWorker();
  worker.unref();
  let next = 0;
  let failure: Error | undefined;
  const waiting = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>();
  const failAll = (err: Error) => {
    failure = err;
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
  };
  worker.on('message', (m: { id: number; vectors?: Float32Array[]; error?: string }) => {
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.error !== undefined) w.reject(new Error(`sentence encoder: ${m.error}`));
    else w.resolve(m.vectors!);
  });
  worker.on('error', (err) => failAll(new Error(`sentence encoder: ${err.message}`)));
  worker.on('exit', (code) => failAll(new Error(`sentence encoder: thread exited (${code})`)));
  return {
    embed(texts) {
      if (failure) return Promise.reject(failure);
      const id = next++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.ref();
        worker.postMessage({ id, texts });
      }).finally(() => {
        if (waiting.size === 0) worker.unref();
      }) as Promise<Float32Array[]>;
    },
    failure: () => failure?.message,
    async close() {
      await worker.terminate();
    },
  };
}

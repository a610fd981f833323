/**
 * A sentence encoder in its own worker thread, so that encoding (about 15 ms of CPU per query, 8–25 ms per document)
 * never blocks the event loop: `embed(texts)` resolves to one unit vector (512 dimensions) per text. The model loads
 * in the thread when the encoder is created (about 0.5 s on a quiet machine, more on a busy one); `ready()` says
 * whether it has, and the search does not wait for it (long queries are ranked by words until then). A query
 * (`urgent`) is answered before the tools still waiting to be encoded.
 */
import { Worker } from 'node:worker_threads';

export interface SentenceEncoder {
  embed(texts: string[], opts?: { urgent?: boolean }): Promise<Float32Array[]>;
  /** Whether the model is loaded (embed() is answered without waiting for it). */
  ready(): boolean;
  /** Resolves once the model is loaded or the thread failed (then failure() says why). */
  whenReady(): Promise<void>;
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
  let loaded = false;
  let markReady: () => void = () => {};
  const readiness = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  const waiting = new Map<number, { resolve: (v: Float32Array[]) => void; reject: (e: Error) => void }>();
  const failAll = (err: Error) => {
    failure ??= err;
    for (const w of waiting.values()) w.reject(err);
    waiting.clear();
    markReady();
  };
  worker.on('message', (m: { id: number; vectors?: Float32Array[]; error?: string; ready?: boolean; loadError?: string }) => {
    if (m.ready) {
      loaded = true;
      markReady();
      return;
    }
    if (m.loadError !== undefined) {
      failAll(new Error(`sentence encoder: the model did not load: ${m.loadError}`));
      void worker.terminate();
      return;
    }
    const w = waiting.get(m.id);
    if (!w) return;
    waiting.delete(m.id);
    if (m.error !== undefined) w.reject(new Error(`sentence encoder: ${m.error}`));
    else w.resolve(m.vectors!);
  });
  worker.on('error', (err) => failAll(new Error(`sentence encoder: ${err.message}`)));
  worker.on('exit', (code) => failAll(new Error(`sentence encoder: thread exited (${code})`)));
  return {
    embed(texts, opts = {}) {
      if (failure) return Promise.reject(failure);
      const id = next++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.ref();
        worker.postMessage({ id, texts, urgent: opts.urgent === true });
      }).finally(() => {
        if (waiting.size === 0) worker.unref();
      }) as Promise<Float32Array[]>;
    },
    ready: () => loaded && !failure,
    whenReady: () => readiness,
    failure: () => failure?.message,
    async close() {
      await worker.terminate();
    },
  };
}

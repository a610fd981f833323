/**
 * The warm pool: keeps `size` gVisor sandboxes booted with the guest waiting on stdin, so that an execution pays only
 * for handing over its request, loading its tool and reading the result. Each sandbox leaves the pool for good when
 * acquired (it serves one execution, or one reuse slot) and the pool refills in the background — once the taken
 * sandbox is done, so that a boot does not compete with the execution for CPU — with a bounded number of
 * concurrent boots and a backoff when boots fail (so a broken runsc does not spin the CPU). When the pool is empty,
 * executions wait for the next boots in order, within the same bound.
 */
import type { GvisorSandbox } from './gvisor-sandbox.js';

export interface WarmPoolOptions {
  size: number;
  /** Boots at once, for the pool and for executions waiting on an empty pool (each costs ~0.2 CPU-s). */
  maxConcurrentBoots: number;
  /** A sandbox not ready within this time is destroyed and counted as a failure. */
  bootTimeoutMs: number;
  create: () => GvisorSandbox;
  onBootError?: (err: Error) => void;
  /** A sandbox became ready this many ms after it was started (the worker records it as a metric). */
  onBoot?: (ms: number) => void;
}

export interface WarmPool {
  /** A ready sandbox, taken out of the pool (the caller must destroy it). Waits for the next boot when the pool is empty. */
  acquire(): Promise<GvisorSandbox>;
  /** `misses`: acquire() calls since the start that found no ready sandbox and waited for a boot. */
  stats(): { ready: number; booting: number; misses: number };
  /** Resolves when the pool is full (or `timeoutMs` passed); for benchmarks and tests. */
  whenFull(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** Longest wait before replacing a sandbox taken from the pool (see acquire). */
const REFILL_DELAY_MS = 250;
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

export function createWarmPool(o: WarmPoolOptions): WarmPool {
  const ready: GvisorSandbox[] = [];
  const booting = new Set<GvisorSandbox>();
  /** acquire() calls waiting for a boot (the pool was empty). */
  const waiters: Array<{ resolve: (s: GvisorSandbox) => void; reject: (err: Error) => void }> = [];
  let failures = 0;
  let backoffUntil = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let closed = false;
  let misses = 0;

  async function waitReady(sandbox: GvisorSandbox): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`sandbox not ready after ${o.bootTimeoutMs} ms`)), o.bootTimeoutMs);
    });
    try {
      await Promise.race([sandbox.ready, timeout]);
    } catch (err) {
      void sandbox.destroy();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  function noteFailure(err: Error): void {
    failures += 1;
    backoffUntil = Date.now() + Math.min(30_000, 200 * 2 ** Math.min(failures, 8));
    o.onBootError?.(err);
    // The oldest waiting execution gets the error (its job retries) rather than waiting through the backoff.
    waiters.shift()?.reject(err);
    clearTimeout(retryTimer);
    retryTimer = setTimeout(refill, backoffUntil - Date.now());
    retryTimer.unref();
  }

  /** Booting the replacement of a sandbox handed out would take CPU from its execution: wait until it is done. */
  function refillAfter(sandbox: GvisorSandbox): void {
    void Promise.race([sandbox.exited, delay(REFILL_DELAY_MS)]).then(refill);
  }

  /** A booted sandbox goes to the oldest waiting acquire(), or into the pool. */
  function deliver(sandbox: GvisorSandbox): void {
    const waiter = waiters.shift();
    if (waiter) {
      waiter.resolve(sandbox);
      return refillAfter(sandbox);
    }
    ready.push(sandbox);
    // A sandbox that dies while waiting is dropped and replaced.
    void sandbox.exited.then(() => {
      const at = ready.indexOf(sandbox);
      if (at === -1) return;
      ready.splice(at, 1);
      void sandbox.destroy();
      noteFailure(new Error(`idle sandbox ${sandbox.id} exited`));
    });
  }

  function start(): void {
    const sandbox = o.create();
    const startedAt = performance.now();
    booting.add(sandbox);
    waitReady(sandbox).then(
      () => {
        booting.delete(sandbox);
        o.onBoot?.(performance.now() - startedAt);
        failures = 0;
        if (closed) return void sandbox.destroy();
        deliver(sandbox);
        refill();
      },
      (err: Error) => {
        booting.delete(sandbox);
        // A pool that is closing sees its booting sandboxes stop: that is the shutdown, not a failure to report.
        if (closed) return;
        noteFailure(err);
      },
    );
  }

  /** Boots (at most maxConcurrentBoots at once) until the pool is full and every waiting acquire() has one coming. */
  function refill(): void {
    if (closed || Date.now() < backoffUntil) return;
    while (ready.length + booting.size < o.size + waiters.length && booting.size < o.maxConcurrentBoots) start();
  }

  refill();

  return {
    async acquire() {
      if (closed) throw new Error('sandbox pool is closed');
      while (ready.length > 0) {
        const sandbox = ready.shift() as GvisorSandbox;
        if (!sandbox.alive) continue;
        refillAfter(sandbox);
        return sandbox;
      }
      misses += 1;
      return new Promise<GvisorSandbox>((resolve, reject) => {
        waiters.push({ resolve, reject });
        refill();
      });
    },
    stats: () => ({ ready: ready.length, booting: booting.size, misses }),
    async whenFull(timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (ready.length >= o.size) return true;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return false;
    },
    async close() {
      closed = true;
      clearTimeout(retryTimer);
      for (const waiter of waiters.splice(0)) waiter.reject(new Error('sandbox pool is closed'));
      const all = [...ready, ...booting];
      ready.length = 0;
      booting.clear();
      await Promise.all(all.map((s) => s.destroy()));
    },
  };
}

/**
 * The warm pool: keeps `size` gVisor sandboxes booted with the guest waiting on stdin, so that an execution pays only
 * for handing over its request, loading its tool and reading the result. Each sandbox leaves the pool for good when
 * acquired (it serves one execution, or one reuse slot) and the pool refills in the background, with a bounded
 * number of concurrent boots and a backoff when boots fail (so a broken runsc does not spin the CPU).
 */
import type { GvisorSandbox } from './gvisor-sandbox.js';

export interface WarmPoolOptions {
  size: number;
  /** Background boots at once (each costs ~0.2 CPU-s). */
  maxConcurrentBoots: number;
  /** A sandbox not ready within this time is destroyed and counted as a failure. */
  bootTimeoutMs: number;
  create: () => GvisorSandbox;
  onBootError?: (err: Error) => void;
}

export interface WarmPool {
  /** A ready sandbox, taken out of the pool (the caller must destroy it). Cold-boots one when the pool is empty. */
  acquire(): Promise<GvisorSandbox>;
  stats(): { ready: number; booting: number };
  /** Resolves when the pool is full (or `timeoutMs` passed); for benchmarks and tests. */
  whenFull(timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

export function createWarmPool(o: WarmPoolOptions): WarmPool {
  const ready: GvisorSandbox[] = [];
  const booting = new Set<GvisorSandbox>();
  let failures = 0;
  let backoffUntil = 0;
  let retryTimer: NodeJS.Timeout | undefined;
  let closed = false;

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
    clearTimeout(retryTimer);
    retryTimer = setTimeout(refill, backoffUntil - Date.now());
    retryTimer.unref();
  }

  function start(): void {
    const sandbox = o.create();
    booting.add(sandbox);
    waitReady(sandbox).then(
      () => {
        if (!booting.delete(sandbox)) return; // claimed by acquire() while booting
        failures = 0;
        if (closed) return void sandbox.destroy();
        ready.push(sandbox);
        // A sandbox that dies while waiting is dropped and replaced.
        void sandbox.exited.then(() => {
          const at = ready.indexOf(sandbox);
          if (at === -1) return;
          ready.splice(at, 1);
          void sandbox.destroy();
          noteFailure(new Error(`idle sandbox ${sandbox.id} exited`));
        });
        refill();
      },
      (err: Error) => {
        if (!booting.delete(sandbox)) return;
        noteFailure(err);
      },
    );
  }

  function refill(): void {
    if (closed || Date.now() < backoffUntil) return;
    while (ready.length + booting.size < o.size && booting.size < o.maxConcurrentBoots) start();
  }

  refill();

  return {
    async acquire() {
      if (closed) throw new Error('sandbox pool is closed');
      let sandbox: GvisorSandbox | undefined;
      while (!sandbox && ready.length > 0) {
        const candidate = ready.shift() as GvisorSandbox;
        if (candidate.alive) sandbox = candidate;
      }
      if (!sandbox) {
        // Prefer a sandbox already half-way booted over starting a new one.
        const first = booting.values().next();
        if (!first.done) {
          sandbox = first.value;
          booting.delete(sandbox);
        } else sandbox = o.create();
        refill();
        await waitReady(sandbox);
        return sandbox;
      }
      refill();
      return sandbox;
    },
    stats: () => ({ ready: ready.length, booting: booting.size }),
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
      const all = [...ready, ...booting];
      ready.length = 0;
      booting.clear();
      await Promise.all(all.map((s) => s.destroy()));
    },
  };
}

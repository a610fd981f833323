/**
 * Opt-in reuse mode: a sandbox taken from the warm pool is bound to one reuse key (API key + package version) and
 * serves that key only, one execution at a time, each in a fresh worker thread (a new V8 isolate with its own module
 * graph and process.env) with /tmp wiped and stray processes killed in between (see guest/reuse.mjs). It is retired
 * after `maxExecutions` or `maxAgeMs`, and destroyed after any timeout, crash, out-of-memory or oversized output.
 */
import type { GvisorSandbox, RunResult } from './gvisor-sandbox.js';
import type { WarmPool } from './pool.js';

export interface ReuseOptions {
  maxExecutions: number;
  maxAgeMs: number;
}

export interface ReuseSlots {
  run(key: string, request: Record<string, unknown>, timeoutMs: number, signal?: AbortSignal): Promise<RunResult | Error>;
  /** Number of idle bound sandboxes per key (for tests). */
  idle(key: string): number;
  close(): Promise<void>;
}

export function createReuseSlots(pool: WarmPool, o: ReuseOptions): ReuseSlots {
  const idle = new Map<string, GvisorSandbox[]>();
  const expiry = new Map<GvisorSandbox, NodeJS.Timeout>();
  let closed = false;

  const usable = (s: GvisorSandbox) => s.alive && s.executions < o.maxExecutions && Date.now() - s.createdAt < o.maxAgeMs;

  function retire(key: string, sandbox: GvisorSandbox): void {
    clearTimeout(expiry.get(sandbox));
    expiry.delete(sandbox);
    const list = idle.get(key);
    const at = list?.indexOf(sandbox) ?? -1;
    if (list && at !== -1) list.splice(at, 1);
    if (list?.length === 0) idle.delete(key);
    void sandbox.destroy(2000);
  }

  function park(key: string, sandbox: GvisorSandbox): void {
    if (closed || !usable(sandbox)) return retire(key, sandbox);
    const list = idle.get(key) ?? [];
    list.push(sandbox);
    idle.set(key, list);
    const left = Math.max(0, o.maxAgeMs - (Date.now() - sandbox.createdAt));
    const timer = setTimeout(() => retire(key, sandbox), left);
    timer.unref();
    expiry.set(sandbox, timer);
  }

  function take(key: string): GvisorSandbox | undefined {
    const list = idle.get(key);
    while (list && list.length > 0) {
      const sandbox = list.pop() as GvisorSandbox;
      clearTimeout(expiry.get(sandbox));
      expiry.delete(sandbox);
      if (usable(sandbox)) return sandbox;
      void sandbox.destroy();
    }
    idle.delete(key);
    return undefined;
  }

  return {
    async run(key, request, timeoutMs, signal) {
      let sandbox = take(key);
      if (!sandbox) {
        try {
          sandbox = await pool.acquire();
        } catch (err) {
          return err instanceof Error ? err : new Error(String(err));
        }
      }
      const result = await sandbox.run({ ...request, reuse: true }, timeoutMs, signal);
      const healthy = result.kind === 'end' && result.end.kind === 'result' && result.end.result.code !== 'oom';
      if (healthy) park(key, sandbox);
      else retire(key, sandbox);
      return result;
    },
    idle: (key) => idle.get(key)?.length ?? 0,
    async close() {
      closed = true;
      const all = [...idle.values()].flat();
      idle.clear();
      for (const timer of expiry.values()) clearTimeout(timer);
      expiry.clear();
      await Promise.all(all.map((s) => s.destroy()));
    },
  };
}

/**
 * Reuse mode (opt-in for executions; the default for scenario runs' tool calls): a sandbox taken from the warm pool is bound to one reuse key (API key + package version) and to
 * that package's directory (the only package it is given, see package-view.ts), and serves that key only, one execution at a time, each in a fresh V8 context with /tmp wiped and stray processes
 * killed in between (see guest/reuse.cjs). A key may hold a few sandboxes at once, so that concurrent executions of
 * one caller are not serialised onto one. A sandbox is retired after `maxExecutions` or `maxAgeMs`, or once idle for
 * `idleMs` or the longest idle of more than `maxIdle` over all keys, and destroyed
 * after any timeout, crash, out-of-memory, oversized output, or an execution the guest could not clean up after.
 */
import type { GvisorSandbox, RunResult } from './gvisor-sandbox.js';
import type { WarmPool } from './pool.js';
import { createSlots } from './slots.js';

export interface ReuseOptions {
  maxExecutions: number;
  maxAgeMs: number;
  /** Sandboxes one key may hold at once (busy or idle); further executions of the key wait for one. Default 4. */
  maxSandboxesPerKey?: number;
  /** An idle sandbox unused for this long is destroyed (its memory back to the host). Default 60 s. */
  idleMs?: number;
  /** Idle sandboxes over all keys; past it, the one idle longest is destroyed. Default 8. */
  maxIdle?: number;
}

export interface ReuseSlots {
  /** Runs `request` for `key` on the package at `pkgHostDir` (absolute); the guest is told where it is inside. */
  run(key: string, pkgHostDir: string, request: Record<string, unknown>, timeoutMs: number, signal?: AbortSignal): Promise<RunResult | Error>;
  /** Number of idle bound sandboxes per key (for tests). */
  idle(key: string): number;
  /** Number of sandboxes bound to a key, busy or idle (for tests). */
  held(key: string): number;
  close(): Promise<void>;
}

/** A key's sandboxes beside its idle ones (those are in the slots). */
interface KeyState {
  /** Sandboxes of this key running an execution, or being acquired for one. */
  busy: number;
  /** Executions waiting for a sandbox of this key: given one, or undefined when a slot opened. */
  waiters: Array<(sandbox: GvisorSandbox | undefined) => void>;
}

export function createReuseSlots(pool: WarmPool, o: ReuseOptions): ReuseSlots {
  const cap = Math.max(1, o.maxSandboxesPerKey ?? 4);
  const idleMs = o.idleMs ?? 60_000;
  const maxIdle = Math.max(0, o.maxIdle ?? 8);
  const keys = new Map<string, KeyState>();
  let closed = false;
  /** Idle sandboxes by key; one idle for idleMs (or past its age limit), or idle longest over maxIdle, is destroyed. */
  const slots = createSlots<GvisorSandbox>({
    idleMs,
    maxIdle,
    destroy: (s, closing) => s.destroy(closing ? 0 : 2000),
    onGone: (key) => {
      const state = keys.get(key);
      if (state) forget(key, state);
    },
  });

  const usable = (s: GvisorSandbox) => s.alive && s.executions < o.maxExecutions && Date.now() - s.createdAt < o.maxAgeMs;
  /** An idle sandbox of the key serves this package (a key's package version may be re-imported as another dir). */
  const serves = (s: GvisorSandbox, pkgHostDir: string) => s.packageDir === undefined || s.packageDir === pkgHostDir;
  const stateOf = (key: string): KeyState => {
    let state = keys.get(key);
    if (!state) keys.set(key, (state = { busy: 0, waiters: [] }));
    return state;
  };
  const forget = (key: string, state: KeyState) => {
    if (slots.idle(key) === 0 && state.busy === 0 && state.waiters.length === 0) keys.delete(key);
  };

  /** A busy sandbox goes away: its slot is free for the next waiter (which acquires a new sandbox). */
  function retire(key: string, state: KeyState, sandbox: GvisorSandbox): void {
    state.busy -= 1;
    void sandbox.destroy(2000);
    const waiter = state.waiters.shift();
    if (waiter) waiter(undefined);
    forget(key, state);
  }

  /** A busy sandbox is done with an execution: to the next waiter of its key, or idle until its age limit. */
  function release(key: string, state: KeyState, sandbox: GvisorSandbox): void {
    if (closed || !usable(sandbox)) return retire(key, state, sandbox);
    const waiter = state.waiters.shift();
    if (waiter) return waiter(sandbox);
    state.busy -= 1;
    // Idle until idleMs or its age limit, whichever comes first (or until the idle cap over all keys evicts it).
    slots.park(key, sandbox, Math.max(0, o.maxAgeMs - (Date.now() - sandbox.createdAt)));
  }

  /** A new sandbox from the pool, for a slot of the key already counted in `busy`. */
  async function fromPool(key: string, state: KeyState): Promise<GvisorSandbox | Error> {
    try {
      return await pool.acquire();
    } catch (err) {
      state.busy -= 1;
      state.waiters.shift()?.(undefined);
      forget(key, state);
      return err instanceof Error ? err : new Error(String(err));
    }
  }

  /** A sandbox for one execution of `key`: an idle one, a new one from the pool while under the cap, or the next freed. */
  async function obtain(key: string, pkgHostDir: string): Promise<GvisorSandbox | Error> {
    for (;;) {
      if (closed) return new Error('sandbox runner is closed');
      const state = stateOf(key); // afresh each turn: a key's state is dropped when it holds nothing
      for (let sandbox = slots.take(key); sandbox; sandbox = slots.take(key)) {
        if (usable(sandbox) && serves(sandbox, pkgHostDir)) {
          state.busy += 1;
          return sandbox;
        }
        void sandbox.destroy();
      }
      if (state.busy < cap) {
        state.busy += 1;
        return fromPool(key, state);
      }
      const handed = await new Promise<GvisorSandbox | undefined>((resolve) => state.waiters.push(resolve));
      if (handed && serves(handed, pkgHostDir)) return handed;
      if (handed) {
        // Bound to another package dir (the worker's keys name the dir, so this is only a safeguard): the handed-over
        // slot is refilled from the pool.
        void handed.destroy();
        return fromPool(key, state);
      }
    }
  }

  return {
    async run(key, pkgHostDir, request, timeoutMs, signal) {
      const sandbox = await obtain(key, pkgHostDir);
      if (sandbox instanceof Error) return sandbox;
      const state = stateOf(key);
      let pkgDir: string;
      try {
        pkgDir = await sandbox.attach(pkgHostDir);
      } catch (err) {
        retire(key, state, sandbox);
        return err instanceof Error ? err : new Error(String(err));
      }
      const result = await sandbox.run({ ...request, pkgDir, reuse: true }, timeoutMs, signal);
      const end = result.kind === 'end' ? result.end : undefined;
      const healthy = end?.kind === 'result' && end.result.code !== 'oom' && end.result.retire !== true;
      if (healthy) release(key, state, sandbox);
      else retire(key, state, sandbox);
      return result;
    },
    idle: (key) => slots.idle(key),
    held: (key) => slots.idle(key) + (keys.get(key)?.busy ?? 0),
    async close() {
      closed = true;
      for (const state of keys.values()) for (const waiter of state.waiters.splice(0)) waiter(undefined);
      await slots.close();
    },
  };
}

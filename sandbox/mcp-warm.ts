/**
 * Warm MCP servers: a call must not pay for booting a sandbox, starting the server's Node and loading its modules,
 * and `initialize` (together 2–3 s for a real server under gVisor's ptrace platform). So servers are kept started and
 * initialised ahead of calls, each in a sandbox of its own taken from the warm pool:
 *
 * - Keyed by what the server process was started with: the package (dir, bin, args) and the caller's env. A call
 *   only ever gets a server started with exactly its own env, so no server holds anyone's key for someone else; the
 *   env part of the key is an HMAC under a per-process random key (the map never holds a plain digest of a secret).
 * - One call per server, then the sandbox is destroyed (as every sandbox), and a replacement is started once the call
 *   is done (so it does not take CPU from the call). In `SANDBOX_REUSE=caller-package` mode the key also holds the
 *   caller's reuse key, and a server serves that caller's calls one after the other (a session of calls, up to the
 *   reuse limits) instead of being destroyed after one.
 * - Sized by use: a key is warmed only once it has been called (or asked for by an import, `prewarm`), up to the
 *   number of its calls that ran at once lately (at most `maxPerKey`); a warm server nobody takes within `idleMs` is
 *   destroyed and its key forgotten. Over all keys at most `maxServers` wait at once (the memory bound: each holds one
 *   sandbox's memory); a new key evicts the server of another key waiting longest (slots.ts).
 * - A server that cannot start is not retried for its key until the key is called again (the call that finds no warm
 *   server starts its own, and reports why it failed).
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { ExitEnd, GuestPipe } from './guest-channel.js';
import type { GvisorSandbox } from './gvisor-sandbox.js';
import { openSession, type McpSession } from './mcp-client.js';
import { createSlots } from './slots.js';
import type { PackageRef } from './types.js';

export interface McpWarmOptions {
  /** Started servers waiting for a call, over all packages. 0 turns warming off (every call starts its server). */
  maxServers: number;
  /** Started servers waiting for one key (package + env), at most. */
  maxPerKey: number;
  /** A waiting server nobody took for this long is destroyed. */
  idleMs: number;
  /** Time for a server to start and answer `initialize`. */
  startTimeoutMs: number;
  /** Caller-package mode: a server serves its caller's calls up to these limits. */
  reuse?: { maxExecutions: number; maxAgeMs: number };
}

/** What a server is started for. */
export interface ServerSpec {
  pkg: PackageRef;
  env: Record<string, string>;
  /** Caller-package mode: the caller's key (API key + package version); the server serves only it. */
  reuseKey?: string;
}

/** A server started and initialised in its sandbox. */
export interface StartedServer {
  readonly sandbox: GvisorSandbox;
  readonly session: McpSession;
  readonly startedAt: number;
  calls: number;
}

/** Starts a server in a sandbox from the pool: a sandbox error, or the server's own failure to start. */
export type StartServer = (spec: ServerSpec, timeoutMs: number) => Promise<{ sandbox: GvisorSandbox; pipe: GuestPipe | ExitEnd } | Error>;

export type Acquired = { server: StartedServer; warm: boolean } | { error: Error } | { failed: string };

export interface McpWarm {
  /**
   * A server for `spec`: a warm one when one waits, else one started now (a cold call). The caller runs one call on
   * it and hands it back with `release` whatever happened.
   */
  acquire(spec: ServerSpec, timeoutMs: number): Promise<Acquired>;
  /** After the call: `reusable` (the call ended normally) lets a caller-package server serve the next call. */
  release(spec: ServerSpec, server: StartedServer, reusable: boolean): void;
  /** Starts a server for `spec` ahead of its first call (after an import). */
  prewarm(spec: ServerSpec): void;
  stats(): { waiting: number; starting: number; keys: number };
  /** Resolves when `spec`'s key has a server waiting (or `timeoutMs` passed); for benchmarks and tests. */
  whenWarm(spec: ServerSpec, timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** A key's servers beside those waiting (which are in the slots). */
interface KeyState {
  spec: ServerSpec;
  starting: number;
  /** Calls of this key running now, and the most that ran at once since the key last went idle. */
  running: number;
  peak: number;
  /** A start failed: no more warming until the key is called again. */
  failing: boolean;
}

export function createMcpWarm(o: McpWarmOptions, start: StartServer): McpWarm {
  const secret = randomBytes(32);
  const keys = new Map<string, KeyState>();
  let closed = false;
  /** Waiting servers by key: one nobody took within idleMs is destroyed; over maxServers, the one waiting longest. */
  const slots = createSlots<StartedServer>({
    idleMs: o.idleMs,
    maxIdle: o.maxServers,
    destroy: (server) => destroy(server),
    onGone: (key) => {
      const state = keys.get(key);
      if (state) forgetIfIdle(key, state);
    },
  });

  function keyOf(spec: ServerSpec): string {
    const h = createHmac('sha256', secret);
    const env = Object.entries(spec.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    h.update(JSON.stringify([spec.pkg.dir, spec.pkg.mcp?.bin, spec.pkg.mcp?.args ?? [], env, o.reuse ? (spec.reuseKey ?? null) : null]));
    return h.digest('base64url');
  }

  const reusing = (spec: ServerSpec) => o.reuse !== undefined && spec.reuseKey !== undefined;
  const waitingTotal = () => slots.idle() + [...keys.values()].reduce((n, k) => n + k.starting, 0);

  function stateOf(spec: ServerSpec): [string, KeyState] {
    const key = keyOf(spec);
    let state = keys.get(key);
    if (!state) keys.set(key, (state = { spec, starting: 0, running: 0, peak: 0, failing: false }));
    return [key, state];
  }

  function forgetIfIdle(key: string, state: KeyState): void {
    if (slots.idle(key) === 0 && state.starting === 0 && state.running === 0) keys.delete(key);
  }

  function destroy(server: StartedServer): Promise<void> {
    return server.session.close().finally(() => server.sandbox.destroy());
  }

  /** A server waits for its key's next call until idleMs passes or it dies. */
  function park(key: string, server: StartedServer): void {
    slots.park(key, server);
    void server.sandbox.exited.then(() => slots.drop(key, server));
  }

  async function startOne(spec: ServerSpec, timeoutMs: number): Promise<Acquired> {
    const started = await start(spec, timeoutMs);
    if (started instanceof Error) return { error: started };
    if ('kind' in started.pipe) {
      void started.sandbox.destroy();
      const tail = started.pipe.stderrTail.trim().split('\n').slice(-3).join(' | ').slice(0, 500);
      return { failed: `the sandbox ended before the server started: ${tail}` };
    }
    const session = await openSession(started.pipe, timeoutMs);
    if ('failed' in session) {
      void started.sandbox.destroy();
      return { failed: session.failed };
    }
    return { server: { sandbox: started.sandbox, session, startedAt: Date.now(), calls: 0 }, warm: false };
  }

  /** The server of another key waiting longest goes, to make room within maxServers. */
  const evictFor = (key: string) => slots.evictOldest(key);

  /** Starts servers for the key until it has as many waiting as its calls used at once lately. */
  function refill(key: string, state: KeyState): void {
    if (closed || o.maxServers <= 0 || state.failing || reusing(state.spec)) return;
    const target = Math.min(o.maxPerKey, Math.max(1, state.peak));
    while (slots.idle(key) + state.starting < target) {
      if (waitingTotal() >= o.maxServers && !evictFor(key)) return;
      state.starting += 1;
      void startOne(state.spec, o.startTimeoutMs).then((r) => {
        state.starting -= 1;
        if ('server' in r) {
          if (closed || keys.get(key) !== state) void destroy(r.server);
          else park(key, r.server);
        } else state.failing = true;
        forgetIfIdle(key, state);
      });
    }
  }

  return {
    async acquire(spec, timeoutMs) {
      if (closed) return { error: new Error('the sandbox runner is closed') };
      const [key, state] = stateOf(spec);
      state.running += 1;
      state.peak = Math.max(state.peak, state.running);
      state.failing = false;
      for (let server = slots.take(key); server; server = slots.take(key)) {
        if (server.sandbox.alive && server.session.open) return { server, warm: true };
        void destroy(server);
      }
      const r = await startOne(spec, timeoutMs);
      if (!('server' in r)) {
        state.running -= 1;
        forgetIfIdle(key, state);
      }
      return r;
    },
    release(spec, server, reusable) {
      const [key, state] = stateOf(spec);
      state.running = Math.max(0, state.running - 1);
      server.calls += 1;
      const r = o.reuse;
      if (
        !closed &&
        reusable &&
        r &&
        reusing(spec) &&
        server.sandbox.alive &&
        server.session.open &&
        server.calls < r.maxExecutions &&
        Date.now() - server.startedAt < r.maxAgeMs &&
        slots.idle(key) < o.maxPerKey &&
        (waitingTotal() < o.maxServers || evictFor(key))
      ) {
        park(key, server);
        return;
      }
      // One call per server: the replacement starts once this sandbox is gone (it does not compete with the call).
      void server.session
        .close()
        .then(() => server.sandbox.destroy())
        .finally(() => {
          refill(key, state);
          forgetIfIdle(key, state);
        });
    },
    prewarm(spec) {
      if (closed || o.maxServers <= 0) return;
      const [key, state] = stateOf(spec);
      refill(key, state);
    },
    stats: () => ({
      waiting: slots.idle(),
      starting: [...keys.values()].reduce((n, k) => n + k.starting, 0),
      keys: keys.size,
    }),
    async whenWarm(spec, timeoutMs) {
      const key = keyOf(spec);
      const deadline = Date.now() + timeoutMs;
      while (Date.now() < deadline) {
        if (slots.idle(key) > 0) return true;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return false;
    },
    async close() {
      closed = true;
      keys.clear();
      await slots.close();
    },
  };
}

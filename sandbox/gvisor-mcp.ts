/**
 * The MCP half of the gVisor runner (gvisor-runner.ts): a server started in a sandbox of its own for one operation
 * (describe at import, or a call that needs network, in an egress sandbox), and calls on warm servers (mcp-warm.ts),
 * whose sandboxes come from the runner's warm pool. Every server's package gets a throwaway writable layer.
 */
import path from 'node:path';
import { executionLimit } from './guest-channel.js';
import type { GvisorSandbox } from './gvisor-sandbox.js';
import { callOnSession, failedCall } from './mcp-client.js';
import { mcpRequest, type OpenPipe } from './mcp-run.js';
import { createMcpWarm, type McpWarm, type McpWarmOptions, type ServerSpec } from './mcp-warm.js';
import type { WritableOptions } from './package-view.js';
import type { WarmPool } from './pool.js';
import type { ExecuteOutcome, ExecuteRequest, PackageRef } from './types.js';

export interface GvisorMcpOptions {
  /** The runner's warm pool: servers without network start in its sandboxes. */
  pool: WarmPool;
  /** Egress mode: sandboxes with network, for a server whose import or tool asks for it. */
  egressPool: WarmPool | undefined;
  /** The size of a server's writable layer over its package (as /tmp's). */
  tmpSizeMb: number;
  warm: McpWarmOptions;
}

export interface GvisorMcp {
  readonly mcpWarm: McpWarm;
  /** One tools/call on a warm server for the caller's env, or one started now. */
  callMcp(req: ExecuteRequest): Promise<ExecuteOutcome>;
  /** An operation on a server started for it in a sandbox of its own, destroyed after it. */
  withServer<T>(pkg: PackageRef, env: Record<string, string>, network: boolean, use: (open: OpenPipe) => Promise<T>, signal?: AbortSignal): Promise<T>;
}

export function createGvisorMcp(d: GvisorMcpOptions): GvisorMcp {
  /** An MCP server gets a throwaway writable layer over its package, as large as /tmp (package-view.ts). */
  const writableFor = (pkg: PackageRef): WritableOptions => ({ beside: pkg.mcp ? [pkg.mcp.bin] : [], sizeMb: d.tmpSizeMb });
  const asError = (err: unknown) => (err instanceof Error ? err : new Error(String(err)));

  /** Starts an MCP server in a sandbox of its own from the pool (for a call, or ahead of one). */
  async function startServer(spec: ServerSpec) {
    let sandbox: GvisorSandbox;
    try {
      sandbox = await d.pool.acquire();
    } catch (err) {
      return asError(err);
    }
    try {
      const pkgDir = await sandbox.attach(path.resolve(spec.pkg.dir), writableFor(spec.pkg));
      return { sandbox, pipe: await sandbox.pipe({ ...mcpRequest(spec.pkg.mcp!, spec.env), pkgDir }) };
    } catch (err) {
      void sandbox.destroy();
      return asError(err);
    }
  }
  const mcpWarm = createMcpWarm(d.warm, startServer);

  /**
   * One tools/call on a server for this caller's env: a warm one when one waits, else started now. The time limit
   * and the abort signal cover both; a server whose call did not end normally is destroyed (mcp-warm.ts).
   */
  async function callMcp(req: ExecuteRequest): Promise<ExecuteOutcome> {
    const started = performance.now();
    const durationMs = () => Math.round(performance.now() - started);
    const spec: ServerSpec = { pkg: req.pkg, env: req.env, reuseKey: req.reuseKey };
    const limit = executionLimit(req.timeoutMs, req.signal);
    const stopped = (why: 'timeout' | 'aborted'): ExecuteOutcome =>
      why === 'timeout' ? { kind: 'timeout', durationMs: durationMs() } : { kind: 'sandbox_error', message: 'aborted', durationMs: durationMs() };
    try {
      const acquiring = mcpWarm.acquire(spec, req.timeoutMs);
      const got = await Promise.race([acquiring, limit.reached]);
      if (got === 'timeout' || got === 'aborted') {
        void acquiring.then((r) => 'server' in r && mcpWarm.release(spec, r.server, false));
        return stopped(got);
      }
      if ('error' in got) return { kind: 'sandbox_error', message: `cannot start a sandbox: ${got.error.message}`, durationMs: durationMs() };
      if ('failed' in got) return failedCall(got.failed, req.env, durationMs());
      const remaining = Math.max(1, req.timeoutMs - (performance.now() - started));
      const r = await Promise.race([
        callOnSession(got.server.session, req.exportName, req.params, req.env, remaining, { op: req.mcpOp, onProgress: req.onProgress }),
        limit.reached,
      ]);
      if (r === 'timeout' || r === 'aborted') {
        mcpWarm.release(spec, got.server, false);
        return stopped(r);
      }
      mcpWarm.release(spec, got.server, r.kind === 'ok' || r.kind === 'tool_error');
      return { ...r, durationMs: durationMs() };
    } finally {
      limit.clear();
    }
  }

  /** An MCP server's operation: a sandbox of its own, started for it and destroyed after it (mcp-run.ts). */
  async function withServer<T>(
    pkg: PackageRef,
    env: Record<string, string>,
    network: boolean,
    use: (open: OpenPipe) => Promise<T>,
    signal?: AbortSignal,
  ): Promise<T> {
    let sandbox: GvisorSandbox | undefined;
    // An abort (the worker stopping) ends the server: its pipe closes and the operation ends as the server's failure.
    const onAbort = () => void sandbox?.destroy();
    signal?.addEventListener('abort', onAbort, { once: true });
    const open: OpenPipe = async () => {
      try {
        if (signal?.aborted) throw new Error('aborted');
        sandbox = await (network && d.egressPool ? d.egressPool : d.pool).acquire();
        const pkgDir = await sandbox.attach(path.resolve(pkg.dir), writableFor(pkg));
        return await sandbox.pipe({ ...mcpRequest(pkg.mcp!, env), pkgDir });
      } catch (err) {
        return asError(err);
      }
    };
    try {
      return await use(open);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      void sandbox?.destroy();
    }
  }

  return { mcpWarm, callMcp, withServer };
}

/**
 * SandboxRunner for machines without gVisor: each operation is `node guest/main.cjs` in a child process with an empty
 * environment (only the execution's env), a fresh temp dir as cwd, a V8 heap limit, a wall-time limit (the whole
 * process group is killed) and an output cap. This is NOT isolation: the tool can read the host's files and network.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { GUEST_NODE_FLAGS, GUEST_SOURCE_DIR, v8Flags } from './bundle.js';
import { executionLimit, openGuestChannel, toDescribeOutcome, toExecuteOutcome, type ChannelEnd } from './guest-channel.js';
import { describeMcp, executeMcp, mcpRequest, type OpenPipe } from './mcp-run.js';
import { runPathOf, type RunnerAbilities } from './run-path.js';
import type { DescribeOptions, DescribeOutcome, ExecuteOutcome, ExecuteRequest, PackageRef, SandboxRunner } from './types.js';

export const warning =
  "SANDBOX=process: tools run as plain child processes WITHOUT isolation — they can read this machine's files, " +
  'reach its network and see other processes. Use it only for development, or install gVisor (runsc) and set SANDBOX=gvisor.';

export interface ProcessRunnerOptions {
  nodeBinary?: string;
  memoryMb?: number;
  tmpRoot?: string;
}

/** No network of its own to give, no reuse, no warm servers: every operation runs in a child process of its own. */
const CAN: RunnerAbilities = { egress: false, reuse: false, warmMcp: false };

type Timed = { end: ChannelEnd; durationMs: number } | { timedOut: true; durationMs: number } | { aborted: true; durationMs: number };

export function createProcessRunner(opts: ProcessRunnerOptions = {}): SandboxRunner {
  const nodeBinary = opts.nodeBinary ?? process.execPath;
  const memoryMb = opts.memoryMb ?? 256;
  const tmpRoot = opts.tmpRoot ?? os.tmpdir();
  const live = new Set<number>();

  function killGroup(pid: number | undefined): void {
    if (!pid) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }

  async function run(request: Record<string, unknown>, env: Record<string, string>, timeoutMs: number, signal?: AbortSignal): Promise<Timed> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const cwd = await fs.mkdtemp(path.join(tmpRoot, 'toolshed-exec-'));
    const child = spawn(nodeBinary, [...GUEST_NODE_FLAGS, ...v8Flags(memoryMb), path.join(GUEST_SOURCE_DIR, 'main.cjs')], {
      cwd,
      env: { ...env },
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    if (child.pid) live.add(child.pid);
    const result = openGuestChannel(child).exchange(request);
    const limit = executionLimit(timeoutMs, signal);
    try {
      const first = await Promise.race([result, limit.reached]);
      if (first === 'timeout') return { timedOut: true, durationMs: elapsed() };
      if (first === 'aborted') return { aborted: true, durationMs: elapsed() };
      return { end: first, durationMs: elapsed() };
    } finally {
      limit.clear();
      killGroup(child.pid);
      if (child.pid) live.delete(child.pid);
      await fs.rm(cwd, { recursive: true, force: true }).catch(() => {});
    }
  }

  /** An MCP server's operation in a child process of its own, killed afterwards (mcp-run.ts). */
  async function withServer<T>(pkg: PackageRef, env: Record<string, string>, use: (open: OpenPipe) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const cwd = await fs.mkdtemp(path.join(tmpRoot, 'toolshed-exec-'));
    const child = spawn(nodeBinary, [...GUEST_NODE_FLAGS, ...v8Flags(memoryMb), path.join(GUEST_SOURCE_DIR, 'main.cjs')], {
      cwd,
      env: {},
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    if (child.pid) live.add(child.pid);
    // An abort (the worker stopping) ends the server: its pipe closes and the operation ends as the server's failure.
    const onAbort = () => killGroup(child.pid);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return await use(() => openGuestChannel(child).pipe({ ...mcpRequest(pkg.mcp!, env), pkgDir: pkg.dir }));
    } finally {
      signal?.removeEventListener('abort', onAbort);
      killGroup(child.pid);
      if (child.pid) live.delete(child.pid);
      await fs.rm(cwd, { recursive: true, force: true }).catch(() => {});
    }
  }

  return {
    kind: 'process',
    async describe(pkg: PackageRef, o: DescribeOptions): Promise<DescribeOutcome> {
      const env = o.env ?? {};
      if (runPathOf({ op: 'describe', pkg, network: o.network }, CAN).kind === 'mcp-server') {
        return withServer(pkg, env, (open) => describeMcp(open, o.timeoutMs, o.exportNames), o.signal);
      }
      const request = { op: 'describe', pkgDir: pkg.dir, exportNames: o.exportNames, discover: o.discover === true, toolkit: o.toolkit, env };
      const r = await run(request, env, o.timeoutMs, o.signal);
      if ('timedOut' in r) return { kind: 'timeout', durationMs: r.durationMs };
      if ('aborted' in r) return { kind: 'sandbox_error', message: 'aborted', durationMs: r.durationMs };
      return toDescribeOutcome(r.end, r.durationMs);
    },
    async execute(req: ExecuteRequest): Promise<ExecuteOutcome> {
      if (runPathOf({ op: 'execute', pkg: req.pkg, network: req.network, reuseKey: req.reuseKey }, CAN).kind === 'mcp-server') {
        return withServer(req.pkg, req.env, (open) => executeMcp(open, req));
      }
      const request = { op: 'execute', pkgDir: req.pkg.dir, exportName: req.exportName, params: req.params, env: req.env };
      const r = await run(request, req.env, req.timeoutMs, req.signal);
      if ('timedOut' in r) return { kind: 'timeout', durationMs: r.durationMs };
      if ('aborted' in r) return { kind: 'sandbox_error', message: 'aborted', durationMs: r.durationMs };
      return toExecuteOutcome(r.end, r.durationMs, req.env);
    },
    async close() {
      for (const pid of live) killGroup(pid);
      live.clear();
    },
  };
}

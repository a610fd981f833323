/**
 * SandboxRunner on gVisor. Every execution takes a sandbox from the warm pool (which boots one when it is empty, or
 * when its size is 0) and gives it the one package to run: mounted at /pkg/<dir name> at hand-over, nothing else of
 * the package cache is ever visible (package-view.ts). Every sandbox serves one execution and is destroyed, except in
 * opt-in reuse mode (see reuse.ts), where it serves one caller and that one package. Guests start from a startup
 * snapshot built with the rootfs (snapshot.ts). Wall time is enforced from outside with `runsc kill` (then
 * `runsc delete --force`).
 *
 * Network: the warm pool's sandboxes never have any. In egress mode, an execution whose tool declares `network`
 * (ExecuteRequest.network) gets a sandbox booted for it with its own network namespace (egress.ts): egress sandboxes
 * are cold, so that no tool without the declaration can ever be handed one, and describe never runs with network.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { IN_SANDBOX } from './bundle.js';
import { prepareRootfs } from './rootfs.js';
import { createPackageViews } from './package-view.js';
import { toDescribeOutcome, toExecuteOutcome } from './guest-channel.js';
import { GvisorSandbox, type RunResult, type SandboxSettings } from './gvisor-sandbox.js';
import { DEFAULT_EGRESS_SUBNET, setupEgress } from './egress.js';
import { createWarmPool, type WarmPool } from './pool.js';
import { createReuseSlots, type ReuseOptions, type ReuseSlots } from './reuse.js';
import { runPathOf, type RunnerAbilities } from './run-path.js';
import { listIds, type RunscOptions } from './runsc.js';
import { describeMcp, executeMcp } from './mcp-run.js';
import type { McpWarm, McpWarmOptions } from './mcp-warm.js';
import { createGvisorMcp } from './gvisor-mcp.js';
import type { DescribeOutcome, ExecuteOutcome, ExecuteRequest, PackageRef, SandboxRunner } from './types.js';

export interface GvisorRunnerOptions {
  poolSize: number;
  network: 'none' | 'egress';
  /** Egress mode: the sandboxes' subnet and resolvers (see egress.ts). */
  egress?: { subnet: string; dns?: string[]; warn?: (message: string) => void };
  /** Content-addressed package cache (`<dir>/<name>@<version>/`); a sandbox sees only the package it runs. */
  packageCacheDir: string;
  /** Holds the rootfs, bundles and runsc state; keep the path short (runsc socket paths). */
  stateDir: string;
  /** Where the rootfs is built instead of `stateDir` (content-addressed: runners may share it). */
  rootfsDir?: string;
  memoryMb?: number;
  pidsLimit?: number;
  /** CPU limit of each sandbox, in cores (SANDBOX_CPUS; default 1). */
  cpus?: number;
  tmpSizeMb?: number;
  nodeBinary?: string;
  runscBinary?: string;
  platform?: 'ptrace' | 'kvm';
  maxConcurrentBoots?: number;
  bootTimeoutMs?: number;
  reuse?: ReuseOptions;
  /** Warm MCP servers (mcp-warm.ts); `maxServers: 0` starts every server for its call. */
  mcpWarm?: Partial<Pick<McpWarmOptions, 'maxServers' | 'maxPerKey' | 'idleMs'>>;
  debugLogDir?: string;
  /** Parent cgroup of the sandboxes' cgroups, relative to this process's own (default `toolshed`). */
  cgroupParent?: string;
  /** Start guests from a startup snapshot built once per rootfs (default true; false is for comparisons). */
  snapshot?: boolean;
  /** What a pooled guest runs before it reports ready (guest/warm.cjs; default `vm`). */
  warmUp?: 'none' | 'vm' | 'light' | 'full';
  onBootError?: (err: Error) => void;
  /** A sandbox booted in this many ms (the worker's metrics). */
  onBoot?: (ms: number) => void;
}

export interface GvisorRunner extends SandboxRunner {
  readonly kind: 'gvisor';
  readonly runsc: RunscOptions;
  readonly pool: WarmPool;
  /** Egress mode: where sandboxes with network come from (size 0: each is booted when asked for). */
  readonly egressPool: WarmPool | undefined;
  /** Reuse slots, when reuse mode is on. */
  readonly reuse: ReuseSlots | undefined;
  /** MCP servers started ahead of their calls. */
  readonly mcpWarm: McpWarm;
  /** Ids of containers runsc still knows about (for tests and health checks). */
  listContainers(): Promise<string[]>;
}

export function createGvisorRunner(opts: GvisorRunnerOptions): GvisorRunner {
  const stateDir = path.resolve(opts.stateDir);
  const cacheDir = path.resolve(opts.packageCacheDir);
  const bundlesDir = path.join(stateDir, 'bundles');
  fs.mkdirSync(bundlesDir, { recursive: true });
  fs.mkdirSync(cacheDir, { recursive: true });
  const offline: RunscOptions = {
    binary: opts.runscBinary ?? '/usr/bin/runsc',
    root: path.join(stateDir, 'runsc'),
    network: 'none',
    platform: opts.platform ?? 'ptrace',
    debugLogDir: opts.debugLogDir,
  };
  const egress = opts.network === 'egress' ? setupEgress({ subnet: DEFAULT_EGRESS_SUBNET, ...opts.egress, stateDir }) : undefined;
  const runsc: RunscOptions = egress ? { ...offline, network: 'sandbox', launcher: egress.launcher } : offline;
  const memoryMb = opts.memoryMb ?? 256;
  const cgroupParent = opts.cgroupParent ?? 'toolshed';
  // The snapshot builder runs offline whatever the mode.
  const rootfsDir = path.resolve(opts.rootfsDir ?? stateDir);
  fs.mkdirSync(rootfsDir, { recursive: true });
  const rootfs = prepareRootfs(
    rootfsDir,
    opts.nodeBinary ?? process.execPath,
    opts.snapshot === false ? undefined : { runsc: offline, memoryMb, cgroupParent },
  );
  const views = createPackageViews(stateDir);
  const settings: SandboxSettings = {
    runsc: offline,
    bundlesDir,
    rootfs,
    views,
    memoryMb,
    pidsLimit: opts.pidsLimit ?? 64,
    cpus: opts.cpus ?? 1,
    tmpSizeMb: opts.tmpSizeMb ?? 64,
    cgroupParent,
    snapshot: fs.existsSync(path.join(rootfs, IN_SANDBOX.snapshot)),
    guestArgs: opts.warmUp ? [`--warm=${opts.warmUp}`] : undefined,
  };
  const egressSettings: SandboxSettings | undefined = egress ? { ...settings, runsc, egress } : undefined;
  const live = new Set<GvisorSandbox>();
  const onDestroyed = (s: GvisorSandbox) => live.delete(s);
  const track = (sandbox: GvisorSandbox) => {
    live.add(sandbox);
    return sandbox;
  };
  const pool = createWarmPool({
    size: opts.poolSize,
    // A boot waits on runsc and the gofer part of the time: a few per core keep the cores busy (bench/sandbox.ts).
    maxConcurrentBoots: opts.maxConcurrentBoots ?? 4 * Math.max(1, os.availableParallelism()),
    bootTimeoutMs: opts.bootTimeoutMs ?? 30_000,
    create: () => track(new GvisorSandbox(settings, { onDestroyed })),
    onBootError: opts.onBootError,
    onBoot: opts.onBoot,
  });
  const egressPool = egressSettings
    ? createWarmPool({
        size: 0,
        maxConcurrentBoots: opts.maxConcurrentBoots ?? 4 * Math.max(1, os.availableParallelism()),
        bootTimeoutMs: opts.bootTimeoutMs ?? 30_000,
        create: () => track(new GvisorSandbox(egressSettings, { onDestroyed })),
        onBootError: opts.onBootError,
        onBoot: opts.onBoot,
      })
    : undefined;
  const reuse = opts.reuse ? createReuseSlots(pool, opts.reuse) : undefined;
  /** Warm MCP servers are always kept (`maxServers: 0` only starts each for its call, the same path). */
  const { mcpWarm, callMcp, withServer } = createGvisorMcp({
    pool,
    egressPool,
    tmpSizeMb: settings.tmpSizeMb,
    warm: {
      maxServers: opts.mcpWarm?.maxServers ?? 2,
      maxPerKey: opts.mcpWarm?.maxPerKey ?? 2,
      idleMs: opts.mcpWarm?.idleMs ?? 5 * 60_000,
      startTimeoutMs: opts.bootTimeoutMs ?? 30_000,
      reuse: opts.reuse,
    },
  });
  const can: RunnerAbilities = { egress: egressPool !== undefined, reuse: reuse !== undefined, warmMcp: true };

  const asError = (err: unknown) => (err instanceof Error ? err : new Error(String(err)));

  async function oneShot(
    pkg: PackageRef,
    request: Record<string, unknown>,
    timeoutMs: number,
    signal?: AbortSignal,
    network = false,
  ): Promise<RunResult | Error> {
    let sandbox: GvisorSandbox;
    let pkgDir: string;
    try {
      sandbox = await (network && egressPool ? egressPool : pool).acquire();
    } catch (err) {
      return asError(err);
    }
    try {
      pkgDir = await sandbox.attach(path.resolve(pkg.dir));
    } catch (err) {
      void sandbox.destroy();
      return asError(err);
    }
    const result = await sandbox.run({ ...request, pkgDir }, timeoutMs, signal);
    void sandbox.destroy(2000);
    return result;
  }

  return {
    kind: 'gvisor',
    runsc,
    pool,
    egressPool,
    reuse,
    mcpWarm,
    async describe(pkg, o): Promise<DescribeOutcome> {
      const how = runPathOf({ op: 'describe', pkg, network: o.network }, can);
      if (how.kind === 'mcp-server') {
        return withServer(pkg, o.env ?? {}, how.network, (open) => describeMcp(open, o.timeoutMs, o.exportNames), o.signal);
      }
      const started = performance.now();
      const request = { op: 'describe', exportNames: o.exportNames, discover: o.discover === true, toolkit: o.toolkit, env: o.env ?? {} };
      const r = await oneShot(pkg, request, o.timeoutMs, o.signal);
      const durationMs = Math.round(performance.now() - started);
      if (r instanceof Error) return { kind: 'sandbox_error', message: `cannot start a sandbox: ${r.message}`, durationMs };
      if (r.kind === 'timeout') return { kind: 'timeout', durationMs };
      if (r.kind === 'aborted') return { kind: 'sandbox_error', message: 'aborted', durationMs };
      return toDescribeOutcome(r.end, durationMs);
    },
    async execute(req: ExecuteRequest): Promise<ExecuteOutcome> {
      const how = runPathOf({ op: 'execute', pkg: req.pkg, network: req.network, reuseKey: req.reuseKey }, can);
      // A server with network is started for its call in an egress sandbox (cold, as every egress sandbox).
      if (how.kind === 'mcp-server') return withServer(req.pkg, req.env, how.network, (open) => executeMcp(open, req));
      if (how.kind === 'mcp-warm') return callMcp(req);
      const started = performance.now();
      const request = { op: 'execute', exportName: req.exportName, params: req.params, env: req.env };
      const r: RunResult | Error =
        how.kind === 'module-reuse' && reuse
          ? await reuse.run(how.reuseKey, path.resolve(req.pkg.dir), request, req.timeoutMs, req.signal)
          : await oneShot(req.pkg, request, req.timeoutMs, req.signal, how.kind === 'module' && how.network);
      const durationMs = Math.round(performance.now() - started);
      if (r instanceof Error) return { kind: 'sandbox_error', message: `cannot start a sandbox: ${r.message}`, durationMs };
      if (r.kind === 'timeout') return { kind: 'timeout', durationMs };
      if (r.kind === 'aborted') return { kind: 'sandbox_error', message: 'aborted', durationMs };
      return toExecuteOutcome(r.end, durationMs, req.env, r.killedForMemory);
    },
    prewarm: (pkg) => mcpWarm.prewarm({ pkg, env: {} }),
    poolStats: () => {
      const { ready, misses } = pool.stats();
      return { ready, misses };
    },
    listContainers: () => listIds(runsc),
    async close() {
      await mcpWarm.close();
      await reuse?.close();
      await pool.close();
      await egressPool?.close();
      await Promise.all([...live].map((s) => s.destroy()));
      await views.close();
    },
  };
}

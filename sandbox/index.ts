/**
 * Entry point of the sandbox module: picks the SandboxRunner implementation from configuration. gVisor by default;
 * the child-process runner only when asked for, with a loud warning. Runner state (rootfs, bundles, runsc state)
 * lives under DATA_DIR/sandbox.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Config } from '../core/infra/config.js';
import { createGvisorRunner } from './gvisor-runner.js';
import { createProcessRunner, warning as processWarning } from './process-runner.js';
import type { SandboxRunner } from './types.js';

export type { SandboxRunner } from './types.js';
export type SandboxConfig = Pick<
  Config,
  | 'SANDBOX'
  | 'SANDBOX_NETWORK'
  | 'SANDBOX_EGRESS_SUBNET'
  | 'SANDBOX_DNS'
  | 'SANDBOX_POOL_SIZE'
  | 'SANDBOX_REUSE'
  | 'SCENARIO_SANDBOX_REUSE'
  | 'SANDBOX_MCP_WARM'
  | 'SANDBOX_CPUS'
  | 'SANDBOX_ROOTFS_DIR'
  | 'DATA_DIR'
  | 'PACKAGE_CACHE_DIR'
>;

/** The few logger methods used here (pino's Logger fits). */
export interface SandboxLogger {
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
}

/**
 * Reuse-mode limits: a sandbox bound to one caller + package serves at most this many executions (each in a fresh V8
 * context), for at most this long; one caller + package holds at most this many sandboxes at once; an idle one goes
 * after a minute, and at most 8 wait idle over all callers.
 */
export const REUSE_LIMITS = { maxExecutions: 500, maxAgeMs: 5 * 60_000, maxSandboxesPerKey: 4, idleMs: 60_000, maxIdle: 8 };
const RUNSC = '/usr/bin/runsc';

/** What the caller learns of the sandbox as it works (the worker turns these into metrics; nothing here imports core). */
export interface SandboxHooks {
  onBoot?: (ms: number) => void;
}

export function createSandboxRunner(config: SandboxConfig, logger?: SandboxLogger, hooks: SandboxHooks = {}): SandboxRunner {
  if (config.SANDBOX === 'process') {
    logger?.warn({ sandbox: 'process' }, processWarning);
    if (!logger) console.warn(`WARNING: ${processWarning}`);
    return createProcessRunner();
  }
  const runscBinary = [RUNSC, '/usr/local/bin/runsc'].find((p) => fs.existsSync(p));
  if (!runscBinary) {
    throw new Error('SANDBOX=gvisor but runsc (gVisor) is not installed; install it, or set SANDBOX=process (no isolation)');
  }
  return createGvisorRunner({
    poolSize: config.SANDBOX_POOL_SIZE,
    network: config.SANDBOX_NETWORK,
    egress: { subnet: config.SANDBOX_EGRESS_SUBNET, dns: config.SANDBOX_DNS, warn: (message) => logger?.warn({ sandbox: 'gvisor' }, message) },
    packageCacheDir: config.PACKAGE_CACHE_DIR,
    stateDir: path.join(config.DATA_DIR, 'sandbox'),
    rootfsDir: config.SANDBOX_ROOTFS_DIR,
    cpus: config.SANDBOX_CPUS,
    runscBinary,
    // Reuse slots exist when either kind of call may use them; a call uses them only when it carries a reuse key.
    reuse: config.SANDBOX_REUSE === 'caller-package' || config.SCENARIO_SANDBOX_REUSE === 'caller-package' ? REUSE_LIMITS : undefined,
    mcpWarm: { maxServers: config.SANDBOX_MCP_WARM, maxPerKey: Math.min(4, config.SANDBOX_MCP_WARM) },
    onBootError: (err) => logger?.error({ err: err.message }, 'sandbox boot failed'),
    onBoot: hooks.onBoot,
  });
}

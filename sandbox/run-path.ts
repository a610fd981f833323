/**
 * How an operation runs, decided once for every SandboxRunner (gvisor-runner.ts, process-runner.ts): an MCP server
 * started for the operation or a call on a warm one (mcp-warm.ts), a package's module in a sandbox of its own or in
 * the caller's reused one (reuse.ts), with network or not. Each runner says what it has; the choice is the same rule.
 */
import type { PackageRef } from './types.js';

export type RunPath =
  /** An MCP server started in a sandbox of its own for this operation, destroyed after it. */
  | { kind: 'mcp-server'; network: boolean }
  /** One tools/call on a warm server for the caller's env (or one started now, when none waits). */
  | { kind: 'mcp-warm' }
  /** The package's module in a sandbox bound to the caller's reuse key. */
  | { kind: 'module-reuse'; reuseKey: string }
  /** The package's module in a fresh sandbox, destroyed after it. */
  | { kind: 'module'; network: boolean };

/** What a runner has beside fresh sandboxes. */
export interface RunnerAbilities {
  /** Sandboxes with network (egress mode). */
  egress: boolean;
  /** Reuse mode: sandboxes bound to a caller and a package. */
  reuse: boolean;
  /** MCP servers started ahead of their calls. */
  warmMcp: boolean;
}

export interface RunOperation {
  op: 'describe' | 'execute';
  pkg: PackageRef;
  /** The tool declares `network` (execute), or an MCP server's import allows it (describe). */
  network?: boolean;
  /** The caller's reuse key (API key + package version), when the execution asked for reuse. */
  reuseKey?: string;
}

/**
 * Network only where the runner has egress. A server with network is started for its call (egress sandboxes are cold,
 * so no tool without the declaration is ever handed one, and neither is a warm server). Describing a module never
 * has network, nor reuse: it runs once, at import.
 */
export function runPathOf(o: RunOperation, can: RunnerAbilities): RunPath {
  const network = o.network === true && can.egress;
  if (o.pkg.mcp) {
    if (o.op === 'execute' && !network && can.warmMcp) return { kind: 'mcp-warm' };
    return { kind: 'mcp-server', network };
  }
  if (o.op === 'describe') return { kind: 'module', network: false };
  if (can.reuse && o.reuseKey && !network) return { kind: 'module-reuse', reuseKey: o.reuseKey };
  return { kind: 'module', network };
}

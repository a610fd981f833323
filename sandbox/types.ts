/**
 * The sandbox port: run one operation of one tool package in isolation. Implementations: gVisor (`runsc`), and a
 * child process for machines without gVisor (loudly warned).
 */

import type { McpOffer, McpServerOp } from '../core/packages/mcp-offer.js';
import type { Progress } from '../core/executions/progress.js';

/** Where a package is installed (content-addressed by name@version), and which module to load. */
export interface PackageRef {
  name: string;
  version: string;
  /** Absolute path of the installed package directory (contains package.json and node_modules, if any). */
  dir: string;
  /**
   * The integrity of the bytes the version was recorded from (package_versions.integrity): a run refuses a directory
   * whose install marker names other bytes (sandbox/packages.ts verifyInstalled). Null or absent: recorded before.
   */
  integrity?: string | null;
  /** Set for an MCP server: the package is run as a server (see mcp-run.ts), its tools are the server's tools. */
  mcp?: McpLaunch;
}

/** How an MCP server package is started: its bin (relative to the package dir) with Node, and its arguments. */
export interface McpLaunch {
  bin: string;
  args?: string[];
  /** Run in the guest's own process (faster start, see guest/mcp-pipe.cjs) rather than as a child `node <bin>`. */
  inGuest?: boolean;
  /** In the guest's process: load this one-file bundle of the bin instead (relative to the package dir; mcp-bundle.ts). */
  bundle?: string;
  /**
   * Variables whose value is a file's content (a credentials JSON): the guest writes each into a private file on the
   * sandbox's /tmp tmpfs (mode 0600) and gives the server the file's path instead (guest/mcp-pipe.cjs).
   */
  files?: string[];
}

export interface DescribedTool {
  exportName: string;
  description: string;
  /** JSON Schema of the tool's input. */
  inputSchema: Record<string, unknown>;
  /** JSON Schema of the tool's output, when the tool has an `outputSchema`. */
  outputSchema?: Record<string, unknown>;
  /** Discovery only (a package that lists no tools): the tool's name, and how it was found (guest/discover.cjs). */
  name?: string;
  how?: DiscoveredHow;
  /** MCP servers' tools: their title and annotations (readOnlyHint, destructiveHint, …). */
  title?: string;
  annotations?: Record<string, unknown>;
}

export type DiscoveredHow =
  | 'ai-sdk-tool'
  | 'factory'
  | 'factory-record'
  | 'record'
  | 'agentic-function'
  | 'agentic-provider'
  | 'langchain-tool'
  | 'langchain-class'
  | 'toolkit';

export interface DescribeOptions {
  timeoutMs: number;
  /** The declared tools to describe; without it, tool-shaped exports (zero-argument factories called). */
  exportNames?: string[];
  /** Find every tool among the exports (see guest/discover.cjs), ignoring exportNames. */
  discover?: boolean;
  /**
   * With discover: a subpath export to read instead of the main module, and the arguments functions and classes are
   * called with (core/packages/toolkit.ts); the tools found carry them in their locators.
   */
  toolkit?: { entry?: string; args?: unknown[] };
  /**
   * Env while the package loads (an MCP server: while it starts and lists its tools): placeholders for its declared
   * variables, never real values.
   */
  env?: Record<string, string>;
  /**
   * An MCP server that declared `network` is started in an egress sandbox when the runner has egress: a server that
   * lists its tools from its vendor's endpoint (a proxy to a remote MCP server) can be described only with it.
   */
  network?: boolean;
  /** Ends the describe (a sandbox_error 'aborted'): the worker is stopping. */
  signal?: AbortSignal;
}

export type DescribeOutcome =
  | {
      kind: 'ok';
      tools: DescribedTool[];
      missing: string[];
      durationMs: number;
      /** Discovery: exports that could not be examined (a factory that threw or never returned), and why. */
      notes?: string[];
      /** Discovery: credential-like env names the package read while loading (they got placeholders). */
      envRead?: string[];
      /** An MCP server: what it offers besides tools (icons, resources, prompts; sandbox/mcp-client.ts listServerOffer). */
      mcpOffer?: McpOffer;
    }
  /**
   * `printed`: what an MCP server that exited without speaking MCP wrote to stdout first (a usage text naming a
   * subcommand such as `start`), else the end of what it wrote to stderr, when it wrote any.
   */
  | { kind: 'load_error'; message: string; durationMs: number; printed?: string }
  /** `stderr`: an MCP server's last lines on stderr when it had written any (e.g. that it listens on HTTP instead). */
  | { kind: 'timeout'; durationMs: number; stderr?: string }
  | { kind: 'sandbox_error'; message: string; durationMs: number };

export interface ExecuteRequest {
  pkg: PackageRef;
  exportName: string;
  params: unknown;
  /** Handed to the tool as environment variables; never logged or stored. */
  env: Record<string, string>;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Reuse-mode partition key (API key + package version); undefined = one-shot sandbox. */
  reuseKey?: string;
  /**
   * The tool declared `network`: it may have egress when the runner is in egress mode. Otherwise (the default) it
   * runs in a sandbox without network, whatever the runner's mode.
   */
  network?: boolean;
  /** An MCP server: `resources/read` or `prompts/get` (params are its params) instead of `tools/call`. */
  mcpOp?: McpServerOp;
  /** An MCP server: asked for progress, each `notifications/progress` it sends for the call (checked, unthrottled). */
  onProgress?: (p: Progress) => void;
}

/** The closed union of what one execution can end as. */
export type ExecuteOutcome =
  | { kind: 'ok'; output: unknown; durationMs: number }
  | { kind: 'tool_error'; message: string; durationMs: number }
  | { kind: 'timeout'; durationMs: number }
  | { kind: 'oom'; durationMs: number }
  | { kind: 'output_too_large'; durationMs: number }
  | { kind: 'sandbox_error'; message: string; durationMs: number };

export interface SandboxRunner {
  readonly kind: 'gvisor' | 'process';
  describe(pkg: PackageRef, opts: DescribeOptions): Promise<DescribeOutcome>;
  execute(req: ExecuteRequest): Promise<ExecuteOutcome>;
  /** An MCP server just imported: start one ahead of its first call by a caller passing no env (mcp-warm.ts). */
  prewarm?(pkg: PackageRef): void;
  /** The warm pool now: sandboxes ready, and acquisitions that found it empty since the start (gVisor only). */
  poolStats?(): { ready: number; misses: number };
  close(): Promise<void>;
}

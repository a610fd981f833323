/**
 * The sandbox port: run one operation of one tool package in isolation. Implementations: gVisor (`runsc`), and a
 * child process for machines without gVisor (loudly warned).
 */

/** Where a package is installed (content-addressed by name@version), and which module to load. */
export interface PackageRef {
  name: string;
  version: string;
  /** Absolute path of the installed package directory (contains package.json and node_modules, if any). */
  dir: string;
  /** Set for an MCP server: the package is run as a server (see mcp-run.ts), its tools are the server's tools. */
  mcp?: McpLaunch;
}

/** How an MCP server package is started: its bin (relative to the package dir) with Node, and its arguments. */
export interface McpLaunch {
  bin: string;
  args?: string[];
}

export interface DescribedTool {
  exportName: string;
  description: string;
  /** JSON Schema of the tool's input. */
  inputSchema: Record<string, unknown>;
  /** JSON Schema of the tool's output, when the tool has an `outputSchema`. */
  outputSchema?: Record<string, unknown>;
  /** MCP servers' tools: their title and annotations (readOnlyHint, destructiveHint, …). */
  title?: string;
  annotations?: Record<string, unknown>;
}

export type DescribeOutcome =
  | { kind: 'ok'; tools: DescribedTool[]; missing: string[]; durationMs: number }
  | { kind: 'load_error'; message: string; durationMs: number }
  | { kind: 'timeout'; durationMs: number }
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
  /** `env`: what an MCP server is started with while it is described (placeholders of its declared variables). */
  describe(pkg: PackageRef, opts: { timeoutMs: number; exportNames?: string[]; env?: Record<string, string> }): Promise<DescribeOutcome>;
  execute(req: ExecuteRequest): Promise<ExecuteOutcome>;
  close(): Promise<void>;
}

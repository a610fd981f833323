/**
 * What the start-up rules of an MCP server import read and answer (worker/import/mcp-startup.ts runs them). A rule is a
 * pure function from what the server said and did on its starts so far to the next start, or nothing when it has no
 * answer; the first rule that answers decides (as graphile-worker's loader plugins: each returns early when an earlier
 * one answered). No rule starts anything or reads a file: the package's code is read once, before, into `code`.
 */
import type { McpEnvVar } from '../../../core/packages/mcp-server.js';

/** One start of the server: its arguments, the variables it was given (placeholders), and where it ran. */
export interface Attempt {
  args: string[];
  env: McpEnvVar[];
  /** In the guest's own process (faster) rather than as a child `node <bin>`. */
  inGuest: boolean;
}

/** What one start came to. `printed`: what it wrote on stdout first (a usage text), else the end of stderr. */
export interface AttemptRecord extends Attempt {
  outcome: 'listed' | 'exited' | 'timeout' | 'sandbox_error';
  /** Why it did not list (its exit, with its stderr's words), as the sandbox said it. */
  message?: string;
  printed?: string;
  /** A server that timed out: its last lines on stderr. */
  stderr?: string;
  exitCode?: number;
  /** How many tools it listed (outcome `listed`). */
  tools?: number;
}

/** What the package's own files say, read once before the first start (never run). */
export interface PackageCode {
  /** Its bin only starts a program the package ships (child_process, no MCP in its text). */
  launcher: boolean;
  /** The `process.env` names its own files read, in the order first met (worker/env-named.ts namesRead). */
  envRead: string[];
}

/** A rule that fired: its name, why (in words), and the variables it declared. */
export interface Fired {
  rule: string;
  why: string;
  declared?: string[];
}

export interface RuleContext {
  /** The arguments and variables the import asked for (or server.json gave). */
  planned: { args: string[]; env: McpEnvVar[] };
  code: PackageCode;
  /** Every start so far, the last one last, each with the rule that chose it (none for the first). */
  history: { record: AttemptRecord; chosenBy?: Fired }[];
  /** The start the rules answer (usually the last of history; after a start kept only on condition, the one before). */
  last?: AttemptRecord;
}

export interface Next {
  /** The next start. `inGuest` left out: where the driver prefers (the guest, unless a child did better). */
  attempt: Omit<Attempt, 'inGuest'> & { inGuest?: boolean };
  why: string;
  declared?: McpEnvVar[];
  /** The start is kept only when this holds of its record; else the import goes on from the start before it. */
  keepIf?: (r: AttemptRecord) => boolean;
}

export interface StartupRule {
  name: string;
  /** What the rule answers, for docs/tool-packages.md and the import's record. */
  answers: string;
  next(ctx: RuleContext): Next | undefined;
}

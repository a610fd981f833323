/**
 * Why an MCP server import was refused: a code from a closed set, and one table of the words a person reads (with
 * what to do next). Tests assert the code; the import's record (package_imports.startup) keeps it.
 */
import { NETWORK_FAILURE } from '../outcomes.js';
import type { AttemptRecord } from './mcp-rules/index.js';

export type McpRefusal = 'invalid_package_json' | 'not_runnable' | 'exited' | 'needs_network' | 'timed_out' | 'sandbox_failed' | 'lists_no_tools';

export interface RefusalFacts {
  /** What went wrong, in the sandbox's or the plan's words. */
  detail: string;
  /** Arguments the import chose (a subcommand, `--stdio`), when not the planned ones. */
  chosenArgs?: string[];
  describeMs?: number;
  /** needs_network: why it had none (the import did not say `network`, or the service gives none). */
  offline?: 'not_asked' | 'no_egress' | 'had_egress';
}

const startedWith = (f: RefusalFacts) => (f.chosenArgs ? ` (started with the arguments ${JSON.stringify(f.chosenArgs)}, chosen from what it printed)` : '');
const couldNot = (f: RefusalFacts) => `The MCP server could not be started and described${startedWith(f)}`;

export const REFUSAL_MESSAGES: Record<McpRefusal, (f: RefusalFacts) => string> = {
  invalid_package_json: (f) => `Invalid package.json: ${f.detail}`,
  not_runnable: (f) => `Not a runnable MCP server: ${f.detail}`,
  exited: (f) => `${couldNot(f)}: ${f.detail}`,
  needs_network: (f) =>
    `${couldNot(f)}: ${f.detail}${
      f.offline === 'not_asked'
        ? ' (it was started without network: a server that needs its service while starting imports with `network: true` on a service with SANDBOX_NETWORK=egress)'
        : f.offline === 'no_egress'
          ? ' (it was started without network: this service gives no sandbox network, SANDBOX_NETWORK=none)'
          : ''
    }`,
  timed_out: (f) =>
    `${couldNot(f)}: it did not list its tools within ${(f.describeMs ?? 0) / 1000} s${f.detail ? `; its last lines on stderr: ${f.detail}` : ' and wrote nothing to stderr'}`,
  sandbox_failed: (f) => `${couldNot(f)}: ${f.detail}`,
  lists_no_tools: () => 'The MCP server lists no tools',
};

/** The refusal of a server whose last start (the one that stands) did not list its tools. */
export function refusalOf(final: AttemptRecord): Extract<McpRefusal, 'exited' | 'needs_network' | 'timed_out' | 'sandbox_failed'> {
  if (final.outcome === 'timeout') return 'timed_out';
  if (final.outcome === 'sandbox_error') return 'sandbox_failed';
  // A server that must reach its vendor to start (@upstash/mcp-server checks its key, @sveltejs/mcp fetches its docs)
  // says `getaddrinfo EAI_AGAIN …`.
  return NETWORK_FAILURE.test(final.message ?? '') ? 'needs_network' : 'exited';
}

/** What a refusal's message says of the start that stands: its words, and the arguments the rules chose, if any. */
export function refusalFacts(
  final: AttemptRecord,
  plannedArgs: string[],
  o: { describeMs: number; offline: NonNullable<RefusalFacts['offline']> },
): RefusalFacts {
  const chosenArgs = JSON.stringify(final.args) === JSON.stringify(plannedArgs) ? undefined : final.args;
  const detail = final.outcome === 'timeout' ? (final.stderr ?? '') : (final.message ?? '');
  return { detail, describeMs: o.describeMs, ...(chosenArgs ? { chosenArgs } : {}), ...(refusalOf(final) === 'needs_network' ? { offline: o.offline } : {}) };
}

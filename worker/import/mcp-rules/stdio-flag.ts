/**
 * Add `--stdio`: a server that serves HTTP unless told otherwise (@modelcontextprotocol/server-pdf,
 * figma-developer-mcp) sits silent on stdio, saying on stderr that it listens. Given no arguments, it is started once
 * more, as a child, with `--stdio`; that start is kept when it lists its tools or exits naming the variables it wants
 * (figma-developer-mcp: "Either FIGMA_API_KEY or FIGMA_OAUTH_TOKEN is required"), else the start before it stands.
 */
import { undeclaredVariables } from './named-variables.js';
import type { StartupRule } from './types.js';

/** What a server that listens on HTTP instead of stdio says on stderr (`listening on http://…`, `binding to 0.0.0.0`). */
export const SERVES_HTTP = /\bhttps?:\/\/|\blistening\b|\bbinding to\b|--stdio\b/i;

export const stdioFlag: StartupRule = {
  name: 'stdio-flag',
  answers: 'a server started bare that timed out saying on stderr that it listens on HTTP: started as a child with `--stdio`',
  next: ({ last, planned }) =>
    last?.outcome === 'timeout' && planned.args.length === 0 && last.args.length === 0 && SERVES_HTTP.test(last.stderr ?? '')
      ? {
          attempt: { args: ['--stdio'], env: last.env, inGuest: false },
          why: 'it said on stderr that it serves HTTP, and never answered on stdio',
          keepIf: (r) => r.outcome === 'listed' || (r.outcome === 'exited' && undeclaredVariables(r.message ?? '', r.env).length > 0),
        }
      : undefined,
};

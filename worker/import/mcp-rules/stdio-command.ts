/**
 * Give the server its `stdio` command: a command-line program whose server is a subcommand (Speakeasy's generated
 * servers, as @launchdarkly/mcp-server: `mcp start`; @pipedream/mcp: `stdio`) prints its usage and exits when started
 * bare. Given no arguments, it is started with the subcommand its usage names.
 */
import type { StartupRule } from './types.js';

export const stdioCommand: StartupRule = {
  name: 'stdio-command',
  answers: 'a server started bare that printed a usage naming a `start`/`stdio`/`mcp` command and exited: started with that command',
  next: ({ last, planned }) => {
    if (last?.outcome !== 'exited' || planned.args.length > 0 || last.args.length > 0) return undefined;
    const command = serverSubcommand(last.printed);
    return command && { attempt: { args: command, env: last.env }, why: `it printed its usage, which names the command \`${command.join(' ')}\`` };
  },
};

/**
 * The subcommand that serves MCP on stdio, as arguments, from a usage text a server printed instead of serving: a
 * `start` or `stdio` command in it (`mcp start [--transport stdio|sse] …`, or `start  Run the Model Context Protocol
 * server` under COMMANDS, or commander's `stdio [options]  Start the stdio server`), else a `server start` (@azure/mcp's
 * example `azmcp server start`), else an `mcp` or `serve` command that speaks of an MCP server or service (shadcn's
 * `mcp [options]  MCP server and configuration commands`, @larksuiteoapi/lark-mcp's `mcp [options]  Start Feishu/Lark
 * MCP Service`), else undefined. A `start` or `stdio` line counts in a text that says usage or commands, or when it
 * speaks of a server itself; the others only in a usage text.
 */
export function serverSubcommand(printed: string | undefined): string[] | undefined {
  if (!printed) return undefined;
  const usage = /\busage\b|\bcommands\b/i.test(printed);
  const lines = printed.split('\n');
  // The command (after the program's name, if the line starts with it) and whether the rest of its line agrees.
  const command = (names: string, agrees: (rest: string) => boolean) => {
    const line = new RegExp(`^\\s*(?:[\\w@./-]+\\s+)?(${names})(?:\\s|$)(.*)`, 'i');
    for (const text of lines) {
      const m = line.exec(text);
      if (m && agrees(m[2]!)) return m[1]!.toLowerCase().split(/\s+/);
    }
    return undefined;
  };
  return (
    command('start|stdio', (rest) => usage || /\b(?:server|mcp)\b/i.test(rest)) ??
    (usage
      ? (command('(?:server|mcp)\\s+(?:start|stdio)', () => true) ??
        command('mcp|serve', (rest) => /\bmcp\b.*\bserv(?:er|ice)\b|\bstart\b.*\bmcp\b/i.test(rest)))
      : undefined)
  );
}

/**
 * Packages that list no tools (AI SDK tool packages, Agentic packages, TPMJS packages without `tools`): what the
 * sandbox found among their exports (sandbox/guest/discover.cjs) becomes the manifest's tool list. The package's
 * code never runs here: this only reads the sandbox's answer.
 */
import type { EnvVarSpec } from '../types.js';
import type { Manifest, ManifestTool } from './manifest.js';

/**
 * What a package's env reads as while it is described: its default, else a placeholder; never a real value. One rule
 * for discovered packages and MCP servers (mcp-server.ts).
 */
export { placeholderEnv } from './mcp-server.js';

/** How a discovered tool was found, as the import answer says it. */
export interface DiscoveredTool {
  name: string;
  /** Export name, or `<export>#<key>` for a member of what the export yields. */
  exportName: string;
  how: string;
}

export interface Discovery {
  tools: DiscoveredTool[];
  /** Credential-like variables the package read while loading, added to its env (not required: the tool says). */
  envRead: string[];
  /** Exports that could not be examined, and why. */
  notes: string[];
}

export interface DescribedForDiscovery {
  exportName: string;
  name?: string;
  how?: string;
  description: string;
}

/** A variable the package's code names but was not seen to read (worker/env-named.ts), as its env declares it. */
export const NAMED_IN_CODE = "Named in the package's code (process.env); read when a tool runs";

/**
 * The manifest with the discovered tools (names made unique), and the env the package was seen to read or its code
 * names (`named`: optional, secrets when credential-like, so that callers learn which key to pass).
 */
export function applyDiscovery(
  m: Manifest,
  described: { tools: DescribedForDiscovery[]; notes?: string[]; envRead?: string[] },
  named: { name: string; secret: boolean }[] = [],
): { manifest: Manifest & { discovery: Discovery } } | { error: string } {
  if (described.tools.length === 0) {
    const why = described.notes?.length ? ` (${described.notes.slice(0, 5).join('; ')})` : '';
    return {
      error:
        'declares no tools and none were found among its exports: export AI SDK tools ({ description, inputSchema, execute }), ' +
        `factories returning them, Agentic AIFunctions or AIFunctionsProvider classes, LangChain tools or tool classes, or add a "toolshed" field; a toolkit made ` +
        `with arguments imports with \`options\` (and \`entry\` for a subpath such as "./ai-sdk")${why}`,
    };
  }
  const taken = new Set<string>();
  const tools: ManifestTool[] = described.tools.map((t) => {
    const base = t.name || t.exportName;
    let name = base;
    for (let i = 2; taken.has(name); i++) name = `${base}_${i}`;
    taken.add(name);
    return { exportName: t.exportName, name, how: t.how ?? 'ai-sdk-tool', ...(t.description ? { description: t.description } : {}) };
  });
  const declared = new Set(m.env.map((v) => v.name));
  const envRead = (described.envRead ?? []).filter((n) => !declared.has(n));
  const seen = new Set([...declared, ...envRead]);
  const env: EnvVarSpec[] = [
    ...m.env,
    ...envRead.map((name) => ({ name, required: false, description: 'Read by the package when it loads (found while importing it)' })),
    ...named
      .filter((n) => !seen.has(n.name))
      .map(({ name, secret }) => ({ name, required: false, ...(secret ? { secret: true } : {}), description: NAMED_IN_CODE })),
  ];
  const discovery: Discovery = {
    tools: tools.map((t) => ({ name: t.name!, exportName: t.exportName, how: t.how! })),
    envRead,
    notes: described.notes ?? [],
  };
  return { manifest: { ...m, env, tools, discovery } };
}

/**
 * Whether an imported MCP server runs from the one-file bundle made of it (sandbox/mcp-bundle.ts), and why, as the
 * import records it (package_imports.startup.bundle). An MCP server declares no call that is safe to make, so the
 * bundle is judged by what can be checked: the server started from it lists the very same tools as from its bin
 * (started with the same first attempt), and the modules its code loads by a computed name, which the bundle cannot
 * carry, are named (they load from their own place in the package at run time, as outside).
 */
import type { BundleResult } from '../../sandbox/mcp-bundle.js';
import type { ImportStartup } from '../../core/repos/package-imports.js';
import type { DescribeOutcome } from '../../sandbox/types.js';

export type BundleChoice = NonNullable<ImportStartup['bundle']>;

const MAX_NAMED = 10;

export function chooseBundle(o: {
  bundle: BundleResult;
  /** How many starts the start-up rules needed (the bundle was started with the first attempt only). */
  starts: number;
  fromBin: DescribeOutcome | undefined;
  fromBundle: DescribeOutcome | undefined;
}): BundleChoice {
  const { bundle, fromBin, fromBundle } = o;
  if ('error' in bundle) return { used: false, why: `no bundle: ${bundle.error}` };
  if (bundle.inputs < 2) return { used: false, why: 'one file: a bundle saves nothing' };
  if (o.starts !== 1) return { used: false, why: 'the server needed more than its first start; the bundle was started with that one only' };
  if (fromBin?.kind !== 'ok') return { used: false, why: 'the server listed no tools from its bin at its first start' };
  if (fromBundle?.kind !== 'ok') return { used: false, why: `started from its bundle, the server listed no tools (${fromBundle?.kind ?? 'not started'})` };
  if (JSON.stringify(fromBundle.tools) !== JSON.stringify(fromBin.tools))
    return { used: false, why: 'started from its bundle, the server lists other tools than from its bin' };
  const n = fromBin.tools.length;
  const loads = bundle.computedLoads;
  const same = `from its bundle${bundle.reused ? ' (made by an earlier import of these bytes)' : ''} it lists the same ${n} tool${n === 1 ? '' : 's'} as from its bin`;
  if (loads.length === 0) return { used: true, why: `${same}; no file of it loads a module by a computed name` };
  return {
    used: true,
    why: `${same}; ${loads.length} file${loads.length === 1 ? '' : 's'} of it load${loads.length === 1 ? 's' : ''} a module by a computed name, found from ${loads.length === 1 ? 'its' : 'their'} own place in the package when called`,
    computedLoads: loads.slice(0, MAX_NAMED),
  };
}

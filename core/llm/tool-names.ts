/**
 * Names for a collection's tools as an LLM sees them. Chat-completions APIs accept function names of 1–64 letters,
 * digits, `_` and `-`, and they must be unique: a tool keeps its own name unless another tool of the set has the same
 * one, then every tool of the clash becomes `<package-basename>__<tool>`, then `<full-package>__<tool>`, then
 * `<tool>__<id>`. A pure function of the set, so names never depend on order or time (like MCP's names).
 */
const MAX = 64;
const clean = (s: string) => s.replace(/[^A-Za-z0-9_-]/g, '_');
const basename = (pkg: string) => pkg.slice(pkg.lastIndexOf('/') + 1);

export interface NamedTool {
  id: string;
  name: string;
  packageName: string;
}

const LEVELS: ((t: NamedTool) => string)[] = [
  (t) => clean(t.name).slice(0, MAX),
  (t) => `${clean(basename(t.packageName))}__${clean(t.name)}`.slice(0, MAX),
  (t) => `${clean(t.packageName.replace(/^@/, ''))}__${clean(t.name)}`.slice(0, MAX),
  (t) => {
    const id = clean(t.id.replace(/-/g, '')).slice(0, 32);
    return `${clean(t.name).slice(0, MAX - id.length - 2)}__${id}`;
  },
];

/** LLM tool name → tool, for every tool of the set. */
export function llmToolNames<T extends NamedTool>(tools: T[]): Map<string, T> {
  const level = new Map(tools.map((t) => [t.id, 0]));
  for (;;) {
    const byName = new Map<string, T[]>();
    for (const t of tools) {
      const name = LEVELS[level.get(t.id)!](t);
      byName.set(name, [...(byName.get(name) ?? []), t]);
    }
    const bumpable = [...byName.values()]
      .filter((group) => group.length > 1)
      .flat()
      .filter((t) => level.get(t.id)! < LEVELS.length - 1);
    if (bumpable.length === 0) return new Map([...byName.entries()].map(([name, group]) => [name, group[0]]));
    for (const t of bumpable) level.set(t.id, level.get(t.id)! + 1);
  }
}

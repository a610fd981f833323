/**
 * Unique, stable names for a set of tools, for every consumer that needs them (MCP clients, LLM function calling).
 * A tool keeps its own name unless another tool of the set has the same one; then every tool of the clash becomes
 * `<package-basename>__<tool>`, then `<full-package>__<tool>`, then `<tool>__<id>` (which cannot clash). A pure
 * function of the set: names never depend on order or time. Consumers differ only in length and alphabet.
 */
export interface NamingRules {
  maxLength: number;
  /** The characters a name may hold, as the inside of a regex character class; anything else becomes `_`. */
  allowed: string;
}

export interface NamedTool {
  id: string;
  name: string;
  packageName: string;
}

function levels(rules: NamingRules): ((t: NamedTool) => string)[] {
  const clean = (s: string) => s.replace(new RegExp(`[^${rules.allowed}]`, 'g'), '_');
  const basename = (pkg: string) => pkg.slice(pkg.lastIndexOf('/') + 1);
  const max = rules.maxLength;
  return [
    (t) => clean(t.name).slice(0, max),
    (t) => `${clean(basename(t.packageName))}__${clean(t.name)}`.slice(0, max),
    (t) => `${clean(t.packageName.replace(/^@/, ''))}__${clean(t.name)}`.slice(0, max),
    (t) => {
      const id = clean(t.id.replace(/-/g, '')).slice(0, 32);
      return `${clean(t.name).slice(0, max - id.length - 2)}__${id}`;
    },
  ];
}

/** Name → tool for every tool of the set, sorted by name. */
export function uniqueToolNames<T>(tools: T[], describe: (t: T) => NamedTool, rules: NamingRules): Map<string, T> {
  const named = tools.map((tool) => ({ tool, ...describe(tool) }));
  const steps = levels(rules);
  const level = new Map(named.map((t) => [t.id, 0]));
  for (;;) {
    const byName = new Map<string, typeof named>();
    for (const t of named) {
      const name = steps[level.get(t.id)!](t);
      byName.set(name, [...(byName.get(name) ?? []), t]);
    }
    const bumpable = [...byName.values()]
      .filter((group) => group.length > 1)
      .flat()
      .filter((t) => level.get(t.id)! < steps.length - 1);
    if (bumpable.length === 0) {
      return new Map([...byName.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([name, group]) => [name, group[0].tool]));
    }
    for (const t of bumpable) level.set(t.id, level.get(t.id)! + 1);
  }
}

/**
 * A package version compared with the one it replaced (GET /api/packages/:name → versions[].compatibility, made by
 * core/packages/compatibility.ts), said in plain words: "2.0.0: breaking — required property `x` added to `search`".
 * Also how an import found each tool (its `discovery`), in words.
 */
import type { ComponentChildren } from 'preact';
import type { Compatibility, SchemaChange } from '../../../core/packages/compatibility.js';
import type { PackageAbout, Provenance } from './readme.js';

export type { Compatibility, SchemaChange };

export interface PackageVersion {
  version: string;
  importedAt: string;
  deprecated: string | null;
  compatibility: Compatibility | null;
  tools: { name: string; description: string; healthStatus: string; package: { npmPackageName: string } }[];
  discovery: Discovery | null;
  /** What the package says about itself (README, licence, repository), null when not recorded; and where it came from. */
  about?: PackageAbout | null;
  provenance?: Provenance;
}

export interface Discovery {
  tools: { name: string; exportName: string; how: string }[];
  envRead: string[];
  notes: string[];
}

/** The versions a package answer lists (`versions`, newest first), or its single current version when it has none. */
export function versionsOf(pkg: any): PackageVersion[] {
  // Each entry as this page reads it, whatever a version entry leaves out (a list may carry fewer fields than the detail).
  if (Array.isArray(pkg.versions) && pkg.versions.length > 0) {
    return pkg.versions.map((v: Partial<PackageVersion> & { version: string }) => ({
      version: v.version,
      importedAt: v.importedAt ?? pkg.importedAt,
      deprecated: v.deprecated ?? null,
      compatibility: v.compatibility ?? null,
      tools: v.tools ?? [],
      discovery: v.discovery ?? null,
      about: v.about ?? null,
      provenance: v.provenance,
    }));
  }
  return [
    {
      version: pkg.version,
      importedAt: pkg.importedAt,
      deprecated: pkg.deprecated ?? null,
      compatibility: pkg.compatibility ?? null,
      tools: pkg.tools ?? [],
      discovery: pkg.discovery ?? null,
    },
  ];
}

/** The package's current version among its versions (the one `version` names), else the first listed. */
export function currentVersionOf(pkg: any): PackageVersion {
  const all = versionsOf(pkg);
  return all.find((v) => v.version === pkg.version) ?? all[0];
}

const code = (s: string) => <code>{s}</code>;

/** One change in words: "required property `x` added to `search`", "`lookup` removed". */
export function describeChange(c: SchemaChange): ComponentChildren {
  // The package's own change (env), and a tool's description or permissions: the change says it all.
  if (c.tool === '') return <>the package: {c.change}</>;
  if (c.path === 'description' || c.path.startsWith('permissions.')) {
    return (
      <>
        {code(c.tool)}: {c.change}
      </>
    );
  }
  if (c.path === '') {
    if (c.change === 'tool removed') return <>tool {code(c.tool)} removed</>;
    if (c.change === 'tool added') return <>tool {code(c.tool)} added</>;
    return (
      <>
        {code(c.tool)}: {c.change}
      </>
    );
  }
  const side = c.path.startsWith('output') ? 'output' : 'input';
  const prop = c.path.replace(/^(input|output)\.?/, '');
  const where = prop ? <> {code(prop)}</> : null;
  switch (c.change) {
    case 'required property added':
    case 'optional property added':
      return (
        <>
          {c.change.replace(' added', '')}
          {where} added to {code(c.tool)}
        </>
      );
    case 'property added':
      return (
        <>
          {code(c.tool)}'s output gained{where}
        </>
      );
    case 'property removed':
      return (
        <>
          {side} property{where} removed from {code(c.tool)}
        </>
      );
    case 'now required':
    case 'no longer required':
      return (
        <>
          property{where} of {code(c.tool)} is {c.change}
        </>
      );
    default:
      return (
        <>
          {code(c.tool)} {side}
          {where}: {c.change}
        </>
      );
  }
}

/** "breaking" or "compatible", with a mark as well as a colour. */
export function CompatBadge({ compatible }: { compatible: boolean }) {
  return (
    <span class={`badge ${compatible ? 'verdict-pass' : 'verdict-fail'}`}>
      <span aria-hidden="true">{compatible ? '✓ ' : '✗ '}</span>
      {compatible ? 'compatible' : 'breaking'}
    </span>
  );
}

/**
 * A version against the one it replaced: each change (optionally only those of one tool) in a list, breaking ones
 * marked; "nothing to compare" for a first version.
 */
export function CompatibilityNote({ compat, tool, version }: { compat: Compatibility | null; tool?: string; version: string }) {
  if (!compat) return <p class="muted">{version}: the first version imported, so there is nothing to compare it with.</p>;
  const changes = tool ? compat.changes.filter((c) => c.tool === tool) : compat.changes;
  const compatible = changes.every((c) => !c.breaking);
  const others = compat.changes.length - changes.length;
  return (
    <div class="compat" data-testid="compatibility">
      <p>
        <strong>{compat.to}</strong> against {compat.from}: <CompatBadge compatible={compatible} />
        {changes.length === 0 ? (tool ? ` — no change to ${tool}.` : ' — no tool or schema changed.') : changes.length === 1 ? ' — ' : ':'}
        {changes.length === 1 && <span>{describeChange(changes[0])}.</span>}
      </p>
      {changes.length > 1 && (
        <ul class="changes">
          {changes.map((c) => (
            <li class={c.breaking ? 'breaking' : ''}>
              {describeChange(c)} <span class="muted">({c.breaking ? 'breaking' : c.needsReview ? 'needs review' : 'compatible'})</span>
            </li>
          ))}
        </ul>
      )}
      {tool && others > 0 && (
        <p class="muted">
          {others} {others === 1 ? 'change' : 'changes'} to other tools of the package{compat.compatible ? '' : ' (the package as a whole is breaking)'}.
        </p>
      )}
    </div>
  );
}

const HOW: Record<string, string> = {
  'ai-sdk-tool': 'an AI SDK tool export',
  factory: 'a factory that returns a tool',
  'factory-record': 'a factory that returns a record of tools',
  record: 'a record of tools',
  'agentic-function': 'an Agentic AIFunction',
  'agentic-provider': 'an Agentic AIFunctionsProvider class',
  toolkit: 'a toolkit made with the import’s arguments',
};

/** A tool's locator in words: `calculator`, `weatherTools#forecast`, or a toolkit's JSON as `AcmeToolkit#get_weather in ./ai-sdk`. */
function exportWords(locator: string): string {
  if (!locator.startsWith('{')) return locator;
  try {
    const o = JSON.parse(locator) as { export?: unknown; key?: unknown; entry?: unknown };
    return `${String(o.export)}${typeof o.key === 'string' ? `#${o.key}` : ''}${typeof o.entry === 'string' ? ` in ${o.entry}` : ''}`;
  } catch {
    return locator;
  }
}

/** How an import found a tool, in words: from the manifest, the MCP server's list, or by discovery (which export, as what). */
export function howFound(discovery: Discovery | null, tool: string, kind?: string): string {
  if (kind === 'mcp') return 'listed by the MCP server (tools/list)';
  if (!discovery) return kind === 'tools' ? 'declared in the package manifest' : 'declared by the package';
  const d = discovery.tools.find((x) => x.name === tool);
  if (!d) return 'found in the package';
  return `found as ${HOW[d.how] ?? d.how} (export ${exportWords(d.exportName)})`;
}

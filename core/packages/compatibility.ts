/**
 * Compatibility of a package's new version with the previous one (issue 24, item 4): tools added or removed, and per
 * tool the input and output JSON Schema changes, each classified. For an input (what callers send), a change that
 * accepts at least what was accepted is compatible (an optional property added, a constraint loosened, a property
 * no longer required); one that refuses something accepted before is breaking (a required property added, a type
 * changed, a property removed, a constraint tightened, an enum value dropped). For an output (what callers read),
 * a property removed or a type changed is breaking; a property added is compatible.
 */

export interface SchemaChange {
  tool: string;
  /** `input.city`, `output.items[]`, or '' for the tool itself. */
  path: string;
  change: string;
  breaking: boolean;
}

export interface Compatibility {
  from: string;
  to: string;
  compatible: boolean;
  changes: SchemaChange[];
}

export interface ToolSchemas {
  name: string;
  inputSchema: unknown;
  outputSchema: unknown;
}

type Schema = Record<string, unknown>;
const asSchema = (s: unknown): Schema => (s !== null && typeof s === 'object' && !Array.isArray(s) ? (s as Schema) : {});
const typesOf = (s: Schema): string[] | null => (s.type === undefined ? null : ([] as unknown[]).concat(s.type).map(String).sort());
const props = (s: Schema): Schema => asSchema(s.properties);
const required = (s: Schema): Set<string> => new Set(Array.isArray(s.required) ? s.required.map(String) : []);

/** Lower bounds: raising one tightens; upper bounds: lowering one tightens. */
const LOWER = ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties'];
const UPPER = ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties'];

function diffInput(tool: string, path: string, a: Schema, b: Schema, out: SchemaChange[]): void {
  const push = (change: string, breaking: boolean) => out.push({ tool, path, change, breaking });
  const ta = typesOf(a);
  const tb = typesOf(b);
  if (ta && tb && ta.join() !== tb.join()) {
    // Widening (every old type still accepted; an integer is a number) is compatible.
    const widened = ta.every((t) => tb.includes(t) || (t === 'integer' && tb.includes('number')));
    push(`type ${ta.join('|')} → ${tb.join('|')}`, !widened);
  } else if (!ta && tb) push(`type restricted to ${tb.join('|')}`, true);
  for (const k of LOWER) bound(k, a[k], b[k], (x, y) => y > x);
  for (const k of UPPER) bound(k, a[k], b[k], (x, y) => y < x);
  function bound(k: string, x: unknown, y: unknown, tighter: (x: number, y: number) => boolean) {
    if (x === y) return;
    if (typeof y === 'number' && (typeof x !== 'number' || tighter(x, y))) push(`${k} ${x ?? 'none'} → ${y} (tightened)`, true);
    else if (typeof x === 'number' && (typeof y !== 'number' || !tighter(x, y))) push(`${k} ${x} → ${y ?? 'none'} (loosened)`, false);
  }
  if (a.pattern !== b.pattern && b.pattern !== undefined) push(`pattern ${String(a.pattern ?? 'none')} → ${String(b.pattern)}`, true);
  else if (a.pattern !== undefined && b.pattern === undefined) push('pattern removed', false);
  if (Array.isArray(b.enum)) {
    const before = Array.isArray(a.enum) ? a.enum.map((v) => JSON.stringify(v)) : null;
    const after = b.enum.map((v) => JSON.stringify(v));
    if (!before) push('enum added', true);
    else {
      const dropped = before.filter((v) => !after.includes(v));
      const added = after.filter((v) => !before.includes(v));
      if (dropped.length) push(`enum values removed: ${dropped.join(', ')}`, true);
      if (added.length) push(`enum values added: ${added.join(', ')}`, false);
    }
  } else if (Array.isArray(a.enum)) push('enum removed', false);
  if (a.additionalProperties !== false && b.additionalProperties === false) push('additional properties no longer allowed', true);
  const pa = props(a);
  const pb = props(b);
  const ra = required(a);
  const rb = required(b);
  for (const k of Object.keys(pa)) {
    const at = `${path}.${k}`;
    if (!(k in pb)) {
      out.push({ tool, path: at, change: 'property removed', breaking: true });
      continue;
    }
    if (!ra.has(k) && rb.has(k)) out.push({ tool, path: at, change: 'now required', breaking: true });
    if (ra.has(k) && !rb.has(k)) out.push({ tool, path: at, change: 'no longer required', breaking: false });
    diffInput(tool, at, asSchema(pa[k]), asSchema(pb[k]), out);
  }
  for (const k of Object.keys(pb)) {
    if (k in pa) continue;
    const req = rb.has(k);
    out.push({ tool, path: `${path}.${k}`, change: req ? 'required property added' : 'optional property added', breaking: req });
  }
  if (a.items !== undefined || b.items !== undefined) diffInput(tool, `${path}[]`, asSchema(a.items), asSchema(b.items), out);
}

function diffOutput(tool: string, path: string, a: Schema, b: Schema, out: SchemaChange[]): void {
  const ta = typesOf(a);
  const tb = typesOf(b);
  if (ta && tb && ta.join() !== tb.join()) out.push({ tool, path, change: `type ${ta.join('|')} → ${tb.join('|')}`, breaking: true });
  const pa = props(a);
  const pb = props(b);
  for (const k of Object.keys(pa)) {
    if (!(k in pb)) out.push({ tool, path: `${path}.${k}`, change: 'property removed', breaking: true });
    else diffOutput(tool, `${path}.${k}`, asSchema(pa[k]), asSchema(pb[k]), out);
  }
  for (const k of Object.keys(pb)) if (!(k in pa)) out.push({ tool, path: `${path}.${k}`, change: 'property added', breaking: false });
  if (a.items !== undefined && b.items !== undefined) diffOutput(tool, `${path}[]`, asSchema(a.items), asSchema(b.items), out);
}

/** Compares the tools of two versions of one package. */
export function compareVersions(from: { version: string; tools: ToolSchemas[] }, to: { version: string; tools: ToolSchemas[] }): Compatibility {
  const changes: SchemaChange[] = [];
  const before = new Map(from.tools.map((t) => [t.name, t]));
  const after = new Map(to.tools.map((t) => [t.name, t]));
  for (const [name, a] of before) {
    const b = after.get(name);
    if (!b) {
      changes.push({ tool: name, path: '', change: 'tool removed', breaking: true });
      continue;
    }
    diffInput(name, 'input', asSchema(a.inputSchema), asSchema(b.inputSchema), changes);
    if (a.outputSchema && b.outputSchema) diffOutput(name, 'output', asSchema(a.outputSchema), asSchema(b.outputSchema), changes);
    else if (a.outputSchema && !b.outputSchema) changes.push({ tool: name, path: 'output', change: 'output schema removed', breaking: true });
  }
  for (const name of after.keys()) if (!before.has(name)) changes.push({ tool: name, path: '', change: 'tool added', breaking: false });
  return { from: from.version, to: to.version, compatible: changes.every((c) => !c.breaking), changes };
}

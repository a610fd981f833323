/**
 * Compatibility of a package's new version with the previous one (issue 24, item 4; issue 43, item 3): tools added or
 * removed, per tool the input and output JSON Schema changes, each classified, and the changes of what a model reads
 * or what a tool may do — descriptions, annotations, permissions, env — which are not schema changes and need review. For an input (what callers send), a change that
 * accepts at least what was accepted is compatible (an optional property added, a constraint loosened, a property
 * no longer required); one that refuses something accepted before is breaking (a required property added, a type
 * changed, a property removed, a constraint tightened, an enum value dropped). For an output (what callers read),
 * a property removed or a type changed is breaking; a property added is compatible.
 *
 * `needsReview`: every change but a compatible schema change. That is a breaking schema change, a tool added or
 * removed, a tool's or a parameter's description changed (or a new parameter that comes with one: text the model
 * reads), an annotation changed (`readOnly`, `destructive`, `idempotent`), network gained (also breaking: the tool
 * reaches out where it did not), secrets gained (env values the tool was not given before), and an env variable
 * added to the package (tool '': a change of the package). `compatible` still speaks of schemas only: no change is
 * breaking. A collection following the latest version moves only over a version that needs no review.
 */
import type { EnvVarSpec } from '../types.js';

export interface SchemaChange {
  /** The tool; '' for a change of the package itself (its env). */
  tool: string;
  /** `input.city`, `output.items[]`, `description`, `permissions.network`, `env.API_KEY`, or '' for the tool itself. */
  path: string;
  change: string;
  breaking: boolean;
  /** Anything but a compatible schema change: a follower is held until its owner accepts it. */
  needsReview: boolean;
}

export interface Compatibility {
  from: string;
  to: string;
  /** No change breaks callers (schemas, tools removed, network gained). */
  compatible: boolean;
  /** Some change needs review (a follower does not move over it). */
  needsReview: boolean;
  changes: SchemaChange[];
}

export interface ToolSchemas {
  name: string;
  inputSchema: unknown;
  outputSchema: unknown;
  /** Compared when both versions give it (a version snapshot always does). */
  description?: string;
  /** ToolPermissions (core/packages/manifest.ts): readOnly, destructive, idempotent, network, secrets. */
  permissions?: unknown;
}

/** One side of a comparison: a version's tools, and its env when known (compared only when both sides give it). */
export interface VersionSide {
  version: string;
  tools: ToolSchemas[];
  env?: EnvVarSpec[];
}

type Change = Omit<SchemaChange, 'needsReview'>;

type Schema = Record<string, unknown>;
const asSchema = (s: unknown): Schema => (s !== null && typeof s === 'object' && !Array.isArray(s) ? (s as Schema) : {});
const typesOf = (s: Schema): string[] | null => (s.type === undefined ? null : ([] as unknown[]).concat(s.type).map(String).sort());
const props = (s: Schema): Schema => asSchema(s.properties);
const required = (s: Schema): Set<string> => new Set(Array.isArray(s.required) ? s.required.map(String) : []);

/** Lower bounds: raising one tightens; upper bounds: lowering one tightens. */
const LOWER = ['minLength', 'minimum', 'exclusiveMinimum', 'minItems', 'minProperties'];
const UPPER = ['maxLength', 'maximum', 'exclusiveMaximum', 'maxItems', 'maxProperties'];

function diffInput(tool: string, path: string, a: Schema, b: Schema, out: Change[]): void {
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

function diffOutput(tool: string, path: string, a: Schema, b: Schema, out: Change[]): void {
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

/** A text as a change names it: quoted, on one line, cut to 300 characters. */
function quote(text: string): string {
  const one = text.replace(/\s+/g, ' ').trim();
  return JSON.stringify(one.length > 300 ? `${one.slice(0, 299)}…` : one);
}

/**
 * Descriptions of the schema's properties (and their items), old and new: a changed one, and a new property's (text
 * the model reads, whatever the schema says about it). Each needs review.
 */
function diffDescriptions(tool: string, path: string, a: Schema | null, b: Schema, out: SchemaChange[]): void {
  const da = a && typeof a.description === 'string' ? a.description : undefined;
  const db = typeof b.description === 'string' ? b.description : undefined;
  if (db !== undefined && da !== db) {
    const change = da === undefined ? `description added: ${quote(db)}` : `description changed: ${quote(da)} → ${quote(db)}`;
    out.push({ tool, path, change, breaking: false, needsReview: true });
  }
  const pa = a ? props(a) : {};
  for (const [k, v] of Object.entries(props(b))) diffDescriptions(tool, `${path}.${k}`, k in pa ? asSchema(pa[k]) : null, asSchema(v), out);
  if (b.items !== undefined) diffDescriptions(tool, `${path}[]`, a && a.items !== undefined ? asSchema(a.items) : null, asSchema(b.items), out);
}

const ANNOTATIONS = ['readOnly', 'destructive', 'idempotent'] as const;

/** Annotations, network and secrets of one tool (its `permissions`), old against new. */
function diffPermissions(tool: string, a: Schema, b: Schema, out: SchemaChange[]): void {
  const push = (path: string, change: string, breaking: boolean) => out.push({ tool, path: `permissions.${path}`, change, breaking, needsReview: true });
  for (const k of ANNOTATIONS) {
    if (a[k] !== b[k]) push(k, `${k} ${String(a[k] ?? 'undeclared')} → ${String(b[k] ?? 'undeclared')}`, false);
  }
  if (a.network !== true && b.network === true) push('network', 'network access gained', true);
  // `secrets` undefined: every env variable of the package reaches the tool (core/tools/tool-env.ts).
  const sa = Array.isArray(a.secrets) ? a.secrets.map(String) : null;
  const sb = Array.isArray(b.secrets) ? b.secrets.map(String) : null;
  if (sa && !sb) push('secrets', 'secrets gained: every env variable of the package now reaches the tool', false);
  else if (sa && sb) {
    const gained = sb.filter((x) => !sa.includes(x));
    if (gained.length) push('secrets', `secrets gained: ${gained.join(', ')}`, false);
  }
}

/** Env variables the new version declares that the old one did not (a package's change: tool ''). */
function diffEnv(a: EnvVarSpec[], b: EnvVarSpec[], out: SchemaChange[]): void {
  const before = new Set(a.map((v) => v.name));
  for (const v of b) {
    if (before.has(v.name)) continue;
    const kind = [v.required ? 'required' : 'optional', ...(v.secret ? ['secret'] : [])].join(', ');
    out.push({ tool: '', path: `env.${v.name}`, change: `env variable added: ${v.name} (${kind})`, breaking: false, needsReview: true });
  }
}

/** Compares the tools (and the env, when both sides give it) of two versions of one package. */
export function compareVersions(from: VersionSide, to: VersionSide): Compatibility {
  const changes: SchemaChange[] = [];
  const schema = (found: Change[]) => {
    for (const c of found) changes.push({ ...c, needsReview: c.breaking });
  };
  const before = new Map(from.tools.map((t) => [t.name, t]));
  const after = new Map(to.tools.map((t) => [t.name, t]));
  for (const [name, a] of before) {
    const b = after.get(name);
    if (!b) {
      changes.push({ tool: name, path: '', change: 'tool removed', breaking: true, needsReview: true });
      continue;
    }
    const found: Change[] = [];
    diffInput(name, 'input', asSchema(a.inputSchema), asSchema(b.inputSchema), found);
    if (a.outputSchema && b.outputSchema) diffOutput(name, 'output', asSchema(a.outputSchema), asSchema(b.outputSchema), found);
    else if (a.outputSchema && !b.outputSchema) found.push({ tool: name, path: 'output', change: 'output schema removed', breaking: true });
    schema(found);
    if (a.description !== undefined && b.description !== undefined && a.description !== b.description) {
      changes.push({
        tool: name,
        path: 'description',
        change: `description changed: ${quote(a.description)} → ${quote(b.description)}`,
        breaking: false,
        needsReview: true,
      });
    }
    diffDescriptions(name, 'input', asSchema(a.inputSchema), asSchema(b.inputSchema), changes);
    if (b.outputSchema) diffDescriptions(name, 'output', a.outputSchema ? asSchema(a.outputSchema) : null, asSchema(b.outputSchema), changes);
    if (a.permissions !== undefined || b.permissions !== undefined) diffPermissions(name, asSchema(a.permissions), asSchema(b.permissions), changes);
  }
  for (const name of after.keys()) if (!before.has(name)) changes.push({ tool: name, path: '', change: 'tool added', breaking: false, needsReview: true });
  if (from.env && to.env) diffEnv(from.env, to.env, changes);
  return {
    from: from.version,
    to: to.version,
    compatible: changes.every((c) => !c.breaking),
    needsReview: changes.some((c) => c.needsReview),
    changes,
  };
}

/**
 * A comparison as stored before needsReview was kept (issue 24): each change needs review unless it is a compatible
 * schema change (every change then was a schema change, or a tool added or removed).
 */
export function withReview(c: Compatibility | null): Compatibility | null {
  if (!c || typeof (c as Partial<Compatibility>).needsReview === 'boolean') return c;
  const changes = c.changes.map((x) => ({ ...x, needsReview: (x as Partial<SchemaChange>).needsReview ?? (x.breaking || x.path === '') }));
  return { ...c, changes, needsReview: changes.some((x) => x.needsReview) };
}

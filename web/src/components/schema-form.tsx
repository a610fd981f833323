/**
 * A form generated from a tool's JSON Schema: one labelled field per top-level property (text, number, checkbox,
 * select for enums, JSON text for objects and arrays). Values are read back into params of the right types.
 */
import { useId } from 'preact/hooks';
import { Breakable } from './common.js';

export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  description?: string;
  enum?: unknown[];
  default?: unknown;
  items?: JsonSchema;
  minimum?: number;
  maximum?: number;
  format?: string;
}

export type FieldValues = Record<string, string | boolean>;

const typeOf = (s: JsonSchema): string => (Array.isArray(s.type) ? (s.type.find((t) => t !== 'null') ?? 'string') : (s.type ?? 'string'));

/** The type a schema declares, for people: one with no `type` is known by its keywords, or takes any JSON value. */
function declaredType(s: JsonSchema): string {
  if (s.type !== undefined) return typeOf(s);
  if (s.properties) return 'object';
  if (s.items) return 'array';
  return 'any JSON value';
}

export function describeType(s: JsonSchema): string {
  const t = declaredType(s);
  if (s.enum) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  if (t === 'array' && s.items) return `array of ${declaredType(s.items)}`;
  return s.format ? `${t} (${s.format})` : t;
}

export function initialValues(schema: JsonSchema): FieldValues {
  const values: FieldValues = {};
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    const t = typeOf(s);
    if (t === 'boolean') values[name] = s.default === true;
    else if (s.default !== undefined) values[name] = t === 'object' || t === 'array' ? JSON.stringify(s.default) : String(s.default);
    else values[name] = '';
  }
  return values;
}

/** The params object, or an error naming the field that cannot be read. */
export function readParams(schema: JsonSchema, values: FieldValues): { params: Record<string, unknown> } | { error: string } {
  const params: Record<string, unknown> = {};
  const required = new Set(schema.required ?? []);
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    const raw = values[name];
    const t = typeOf(s);
    if (t === 'boolean') {
      if (raw === true || required.has(name)) params[name] = raw === true;
      continue;
    }
    if (raw === '' || raw === undefined) continue;
    const text = String(raw);
    if (s.enum) params[name] = s.enum.find((v) => String(v) === text) ?? text;
    else if (t === 'number' || t === 'integer') {
      const n = Number(text);
      if (!Number.isFinite(n)) return { error: `${name} must be a number` };
      params[name] = n;
    } else if (t === 'object' || t === 'array') {
      try {
        params[name] = JSON.parse(text);
      } catch {
        return { error: `${name} must be valid JSON` };
      }
    } else params[name] = text;
  }
  return { params };
}

export function SchemaFields({ schema, values, onChange }: { schema: JsonSchema; values: FieldValues; onChange: (v: FieldValues) => void }) {
  const base = useId();
  const required = new Set(schema.required ?? []);
  const props = Object.entries(schema.properties ?? {});
  if (props.length === 0) return <p class="muted">This tool takes no parameters.</p>;
  const set = (name: string, value: string | boolean) => onChange({ ...values, [name]: value });
  return (
    <>
      {props.map(([name, s]) => {
        const id = `${base}-${name}`;
        const t = typeOf(s);
        const hint = s.description ? <small id={`${id}-hint`}>{s.description}</small> : null;
        const common = { id, name, required: required.has(name) && t !== 'boolean', 'aria-describedby': s.description ? `${id}-hint` : undefined };
        const label = (
          <label for={id}>
            {name}
            {required.has(name) && <span aria-hidden="true"> *</span>} <span class="muted">({describeType(s)})</span>
          </label>
        );
        if (t === 'boolean') {
          return (
            <div class="field checkbox">
              <input type="checkbox" {...common} checked={values[name] === true} onChange={(e) => set(name, e.currentTarget.checked)} />
              {label}
              {hint}
            </div>
          );
        }
        let input;
        if (s.enum) {
          input = (
            <select {...common} value={String(values[name] ?? '')} onChange={(e) => set(name, e.currentTarget.value)}>
              <option value="">—</option>
              {s.enum.map((v) => (
                <option value={String(v)}>{String(v)}</option>
              ))}
            </select>
          );
        } else if (t === 'object' || t === 'array' || (t === 'string' && name.match(/text|body|content|html|json|csv|sql|query|data/i))) {
          input = <textarea {...common} rows={4} value={String(values[name] ?? '')} onInput={(e) => set(name, e.currentTarget.value)} />;
        } else {
          const onInput = (e: { currentTarget: HTMLInputElement }) => set(name, e.currentTarget.value);
          input =
            t === 'number' || t === 'integer' ? (
              <input {...common} type="number" step={t === 'integer' ? 1 : 'any'} value={String(values[name] ?? '')} onInput={onInput} />
            ) : (
              <input {...common} type="text" value={String(values[name] ?? '')} onInput={onInput} />
            );
        }
        return (
          <div class="field">
            {label}
            {input}
            {hint}
          </div>
        );
      })}
    </>
  );
}

/** The schema as a table a person can read. */
export function SchemaTable({ schema }: { schema: JsonSchema }) {
  const props = Object.entries(schema.properties ?? {});
  if (props.length === 0) return <p class="muted">No parameters.</p>;
  const required = new Set(schema.required ?? []);
  return (
    <table class="stack schema">
      <caption class="visually-hidden">Input parameters</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Type</th>
          <th scope="col">Required</th>
          <th scope="col">Description</th>
        </tr>
      </thead>
      <tbody>
        {props.map(([name, s]) => (
          <tr>
            <th scope="row">
              <code>
                <Breakable text={name} />
              </code>
            </th>
            <td data-label="Type">{describeType(s)}</td>
            <td data-label="Required">{required.has(name) ? 'yes' : 'no'}</td>
            <td data-label="Description">
              {s.description ?? ''}
              {s.default !== undefined && <span class="muted"> Default: {JSON.stringify(s.default)}.</span>}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** Example params from the schema (defaults, or a placeholder per type), for snippets. */
export function exampleParams(schema: JsonSchema): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const required = new Set(schema.required ?? []);
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    if (!required.has(name) && s.default === undefined) continue;
    const t = typeOf(s);
    out[name] = s.default ?? s.enum?.[0] ?? ({ number: 1, integer: 1, boolean: true, array: [], object: {} } as Record<string, unknown>)[t] ?? '…';
  }
  return out;
}

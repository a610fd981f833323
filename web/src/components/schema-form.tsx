/**
 * A form generated from a tool's JSON Schema: one labelled field per property (text, number, checkbox, select for
 * enums), a group of fields for an object with declared properties, a list of such groups for an array of objects
 * (items added and removed one by one), lines or JSON for an array of strings, JSON text for anything else. Values
 * are read back into params of the right types; the input table lists nested properties by path (`entities[].name`).
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

/**
 * A form's values by property name: text as typed, a checkbox's state, a nested object's own values, or an array of
 * objects as one set of values per item.
 */
export type FieldValue = string | boolean | FieldValues | FieldValues[];
export interface FieldValues {
  [name: string]: FieldValue;
}

const typeOf = (s: JsonSchema): string => (Array.isArray(s.type) ? (s.type.find((t) => t !== 'null') ?? 'string') : (s.type ?? 'string'));

/** The type a schema declares, for people: one with no `type` is known by its keywords, or takes any JSON value. */
function declaredType(s: JsonSchema): string {
  if (s.type !== undefined) return typeOf(s);
  if (s.properties) return 'object';
  if (s.items) return 'array';
  return 'any JSON value';
}

/** An object whose properties are declared: a nested group of fields (one without is typed as JSON). */
const isObjectWithProps = (s: JsonSchema | undefined): boolean => !!s && declaredType(s) === 'object' && Object.keys(s.properties ?? {}).length > 0;
/** An array of such objects: a list of item groups, added and removed one by one. */
const isArrayOfObjects = (s: JsonSchema): boolean => declaredType(s) === 'array' && isObjectWithProps(s.items);

export function describeType(s: JsonSchema): string {
  const t = declaredType(s);
  if (s.enum) return `one of ${s.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  if (t === 'array' && s.items) return `array of ${declaredType(s.items)}`;
  return s.format ? `${t} (${s.format})` : t;
}

export function initialValues(schema: JsonSchema): FieldValues {
  const values: FieldValues = {};
  const required = new Set(schema.required ?? []);
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    const t = typeOf(s);
    if (isObjectWithProps(s)) values[name] = initialValues(s);
    // A required array of objects starts with one item to fill in.
    else if (isArrayOfObjects(s)) values[name] = required.has(name) ? [initialValues(s.items!)] : [];
    else if (t === 'boolean') values[name] = s.default === true;
    else if (s.default !== undefined) values[name] = t === 'object' || t === 'array' ? JSON.stringify(s.default) : String(s.default);
    else values[name] = '';
  }
  return values;
}

const isGroup = (v: FieldValue | undefined): v is FieldValues => !!v && typeof v === 'object' && !Array.isArray(v);

/** The params object, or an error naming the field that cannot be read (`entities[1].name` in a nested one). */
export function readParams(schema: JsonSchema, values: FieldValues, prefix = ''): { params: Record<string, unknown> } | { error: string } {
  const params: Record<string, unknown> = {};
  const required = new Set(schema.required ?? []);
  for (const [name, s] of Object.entries(schema.properties ?? {})) {
    const raw = values[name];
    const t = typeOf(s);
    const at = `${prefix}${name}`;
    if (isObjectWithProps(s) && isGroup(raw)) {
      const inner = readParams(s, raw, `${at}.`);
      if ('error' in inner) return inner;
      if (Object.keys(inner.params).length > 0 || required.has(name)) params[name] = inner.params;
      continue;
    }
    if (isArrayOfObjects(s) && Array.isArray(raw)) {
      const items: unknown[] = [];
      for (const [i, item] of raw.entries()) {
        const inner = readParams(s.items!, item, `${at}[${i}].`);
        if ('error' in inner) return inner;
        items.push(inner.params);
      }
      if (items.length > 0 || required.has(name)) params[name] = items;
      continue;
    }
    if (t === 'boolean') {
      if (raw === true || required.has(name)) params[name] = raw === true;
      continue;
    }
    if (raw === '' || raw === undefined || typeof raw !== 'string') continue;
    const text = raw;
    if (s.enum) params[name] = s.enum.find((v) => String(v) === text) ?? text;
    else if (t === 'number' || t === 'integer') {
      const n = Number(text);
      if (!Number.isFinite(n)) return { error: `${at} must be a number` };
      params[name] = n;
    } else if (t === 'array' && s.items && typeOf(s.items) === 'string' && !text.trim().startsWith('[')) {
      // An array of strings may be typed one per line.
      params[name] = text.split('\n').filter((line) => line.trim() !== '');
    } else if (t === 'object' || t === 'array') {
      try {
        params[name] = JSON.parse(text);
      } catch {
        return { error: `${at} must be valid JSON` };
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
  const set = (name: string, value: FieldValue) => onChange({ ...values, [name]: value });
  return (
    <>
      {props.map(([name, s]) => {
        const id = `${base}-${name}`;
        const t = typeOf(s);
        const hint = s.description ? <small id={`${id}-hint`}>{s.description}</small> : null;
        const legend = (
          <legend>
            {name}
            {required.has(name) && <span aria-hidden="true"> *</span>} <span class="muted">({describeType(s)})</span>
          </legend>
        );
        if (isObjectWithProps(s)) {
          const inner = values[name];
          return (
            <fieldset class="nested">
              {legend}
              {hint}
              <SchemaFields schema={s} values={isGroup(inner) ? inner : initialValues(s)} onChange={(v) => set(name, v)} />
            </fieldset>
          );
        }
        if (isArrayOfObjects(s)) {
          const raw = values[name];
          const list = Array.isArray(raw) ? raw : [];
          return (
            <fieldset class="nested">
              {legend}
              {hint}
              {list.map((item, i) => (
                <fieldset class="item">
                  <legend>
                    {name} {i + 1}
                  </legend>
                  <SchemaFields
                    schema={s.items!}
                    values={item}
                    onChange={(v) =>
                      set(
                        name,
                        list.map((x, j) => (j === i ? v : x)),
                      )
                    }
                  />
                  <button
                    type="button"
                    class="secondary small"
                    onClick={() =>
                      set(
                        name,
                        list.filter((_, j) => j !== i),
                      )
                    }
                  >
                    Remove {name} {i + 1}
                  </button>
                </fieldset>
              ))}
              <button type="button" class="secondary small" onClick={() => set(name, [...list, initialValues(s.items!)])}>
                Add to {name}
              </button>
            </fieldset>
          );
        }
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
          const lines = t === 'array' && s.items && typeOf(s.items) === 'string';
          input = (
            <textarea
              {...common}
              rows={4}
              placeholder={lines ? 'One per line (or a JSON array)' : t === 'object' || t === 'array' ? 'JSON' : undefined}
              value={String(values[name] ?? '')}
              onInput={(e) => set(name, e.currentTarget.value)}
            />
          );
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
/** Every property, nested ones under their path (`entities[].name`, `options.limit`), with whether it is required. */
function flatProps(schema: JsonSchema, prefix = ''): [string, JsonSchema, boolean][] {
  const required = new Set(schema.required ?? []);
  return Object.entries(schema.properties ?? {}).flatMap(([name, s]): [string, JsonSchema, boolean][] => {
    const row: [string, JsonSchema, boolean] = [`${prefix}${name}`, s, required.has(name)];
    if (isObjectWithProps(s)) return [row, ...flatProps(s, `${prefix}${name}.`)];
    if (isArrayOfObjects(s)) return [row, ...flatProps(s.items!, `${prefix}${name}[].`)];
    return [row];
  });
}

export function SchemaTable({ schema }: { schema: JsonSchema }) {
  const flat = flatProps(schema);
  if (flat.length === 0) return <p class="muted">No parameters.</p>;
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
        {flat.map(([name, s, isRequired]) => (
          <tr>
            <th scope="row">
              <code>
                <Breakable text={name} />
              </code>
            </th>
            <td data-label="Type">{describeType(s)}</td>
            <td data-label="Required">{isRequired ? 'yes' : 'no'}</td>
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
    if (s.default === undefined && isObjectWithProps(s)) out[name] = exampleParams(s);
    else if (s.default === undefined && isArrayOfObjects(s)) out[name] = [exampleParams(s.items!)];
    else out[name] = s.default ?? s.enum?.[0] ?? ({ number: 1, integer: 1, boolean: true, array: [], object: {} } as Record<string, unknown>)[t] ?? '…';
  }
  return out;
}

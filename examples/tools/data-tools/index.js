// @toolshed-examples/data-tools — CSV/JSON conversion, JSON path queries, JSON diff, JSON Schema validation
// and unit conversion. Plain ESM, no dependencies.

// ---------------------------------------------------------------------------
// Input checking shared by the tools in this file. Self-contained on purpose:
// this package has no dependencies. `tool()` returns a plain Vercel AI SDK
// style tool object ({ description, inputSchema, execute }) whose execute
// checks its params against inputSchema (and fills defaults) before running.
// ---------------------------------------------------------------------------
const kindOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : Number.isInteger(v) ? 'integer' : typeof v);
const joinPath = (path, key) => (path ? `${path}${typeof key === 'number' ? `[${key}]` : `.${key}`}` : String(key));

function checkInput(schema, value, path) {
  const where = path ? `"${path}"` : 'Input';
  if (schema.type !== undefined) {
    const types = [].concat(schema.type);
    const kind = kindOf(value);
    if (!types.some((t) => t === kind || (t === 'number' && kind === 'integer'))) {
      throw new Error(`${where} must be of type ${types.join(' or ')}, but got ${kind}`);
    }
  }
  if (schema.enum && !schema.enum.includes(value)) {
    throw new Error(`${where} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}; got ${JSON.stringify(value)}`);
  }
  if (typeof value === 'string') {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) throw new Error(`${where} must be at least ${schema.minLength} character(s) long`);
    if (schema.maxLength !== undefined && length > schema.maxLength) throw new Error(`${where} must be at most ${schema.maxLength} characters long`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(value)) throw new Error(`${where} must match the pattern ${schema.pattern}`);
  }
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`${where} must be a finite number`);
    if (schema.minimum !== undefined && value < schema.minimum) throw new Error(`${where} must be >= ${schema.minimum}; got ${value}`);
    if (schema.maximum !== undefined && value > schema.maximum) throw new Error(`${where} must be <= ${schema.maximum}; got ${value}`);
    if (schema.exclusiveMinimum !== undefined && value <= schema.exclusiveMinimum)
      throw new Error(`${where} must be > ${schema.exclusiveMinimum}; got ${value}`);
    if (schema.exclusiveMaximum !== undefined && value >= schema.exclusiveMaximum)
      throw new Error(`${where} must be < ${schema.exclusiveMaximum}; got ${value}`);
  }
  if (Array.isArray(value)) {
    if (schema.minItems !== undefined && value.length < schema.minItems) throw new Error(`${where} must contain at least ${schema.minItems} item(s)`);
    if (schema.maxItems !== undefined && value.length > schema.maxItems) throw new Error(`${where} must contain at most ${schema.maxItems} items`);
    if (schema.items) value.forEach((item, i) => checkInput(schema.items, item, joinPath(path, i)));
  }
  if (kindOf(value) === 'object') {
    const props = schema.properties ?? {};
    for (const key of schema.required ?? []) {
      if (value[key] === undefined) throw new Error(`Missing required parameter "${joinPath(path, key)}"`);
    }
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined) continue;
      if (props[key]) checkInput(props[key], item, joinPath(path, key));
      else if (schema.additionalProperties === false) {
        throw new Error(
          `Unknown parameter "${joinPath(path, key)}"; expected ${
            Object.keys(props)
              .map((k) => `"${k}"`)
              .join(', ') || 'none'
          }`,
        );
      } else if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
        checkInput(schema.additionalProperties, item, joinPath(path, key));
      }
    }
  }
}

function tool({ description, inputSchema, execute }) {
  return {
    description,
    inputSchema,
    async execute(params, options) {
      const input = params === undefined || params === null ? {} : params;
      checkInput(inputSchema, input, '');
      const args = { ...input };
      for (const [key, prop] of Object.entries(inputSchema.properties ?? {})) {
        if (args[key] === undefined && prop.default !== undefined) args[key] = structuredClone(prop.default);
      }
      return execute(args, options);
    },
  };
}
// ---------------------------------------------------------------------------

// ----------------------------------------------------------------------------- CSV
function parseCsv(text, delimiter) {
  const rows = [];
  let row = [];
  let field = '';
  let quoted = false;
  let wasQuoted = false;
  let line = 1;
  let quoteStartLine = 0;
  let i = 0;
  if (text.charCodeAt(0) === 0xfeff) i = 1; // BOM
  const endField = () => {
    row.push({ value: field, quoted: wasQuoted });
    field = '';
    wasQuoted = false;
  };
  const endRow = () => {
    endField();
    rows.push({ fields: row, line });
    row = [];
  };
  for (; i < text.length; i++) {
    const c = text[i];
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (c === '\n') line++;
        field += c;
      }
    } else if (c === '"' && field === '' && !wasQuoted) {
      quoted = true;
      wasQuoted = true;
      quoteStartLine = line;
    } else if (c === delimiter) {
      endField();
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      endRow();
      line++;
    } else if (wasQuoted) {
      throw new Error(`Unexpected character ${JSON.stringify(c)} after a closing quote on line ${line}`);
    } else {
      field += c;
    }
  }
  if (quoted) throw new Error(`Unterminated quoted field starting on line ${quoteStartLine}`);
  if (field !== '' || wasQuoted || row.length > 0) endRow();
  return rows;
}

function inferValue(s) {
  if (s === '') return null;
  if (/^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/.test(s)) {
    const n = Number(s);
    if (Number.isFinite(n) && (!Number.isInteger(n) || Number.isSafeInteger(n))) return n;
  }
  if (/^true$/i.test(s)) return true;
  if (/^false$/i.test(s)) return false;
  if (/^null$/i.test(s)) return null;
  return s;
}

const DELIMITERS = { comma: ',', semicolon: ';', tab: '\t', pipe: '|' };

export const csvToJson = tool({
  description:
    'Converts CSV text to an array of JSON objects (or arrays), handling quoted fields, embedded commas, newlines and doubled quotes as in RFC 4180; can infer numbers and booleans.',
  inputSchema: {
    type: 'object',
    properties: {
      csv: { type: 'string', description: 'The CSV text to parse.', maxLength: 900000 },
      delimiter: { type: 'string', description: 'Field delimiter.', enum: ['comma', 'semicolon', 'tab', 'pipe'], default: 'comma' },
      header: { type: 'boolean', description: 'Whether the first row holds column names. If false, rows are returned as arrays.', default: true },
      inferTypes: { type: 'boolean', description: 'Convert numeric, true/false and empty unquoted fields to numbers, booleans and null.', default: false },
      skipEmptyLines: { type: 'boolean', description: 'Ignore lines that are completely empty.', default: true },
    },
    required: ['csv'],
    additionalProperties: false,
  },
  async execute({ csv, delimiter, header, inferTypes, skipEmptyLines }) {
    let rows = parseCsv(csv, DELIMITERS[delimiter]);
    if (skipEmptyLines) rows = rows.filter((r) => !(r.fields.length === 1 && r.fields[0].value === '' && !r.fields[0].quoted));
    const convert = (f) => (inferTypes && !f.quoted ? inferValue(f.value) : f.value);
    if (!header) {
      const data = rows.map((r) => r.fields.map(convert));
      return { rows: data, rowCount: data.length, columns: [] };
    }
    if (rows.length === 0) throw new Error('The CSV has no header row');
    const seen = new Map();
    const columns = rows[0].fields.map((f, i) => {
      const base = f.value.trim() || `column${i + 1}`;
      const n = (seen.get(base) ?? 0) + 1;
      seen.set(base, n);
      return n === 1 ? base : `${base}_${n}`;
    });
    const data = rows.slice(1).map((r) => {
      if (r.fields.length !== columns.length) {
        throw new Error(`Row on line ${r.line} has ${r.fields.length} field(s) but the header has ${columns.length}`);
      }
      return Object.fromEntries(columns.map((c, i) => [c, convert(r.fields[i])]));
    });
    return { columns, rows: data, rowCount: data.length };
  },
});

function csvField(value, delimiter) {
  let s;
  if (value === null || value === undefined) s = '';
  else if (typeof value === 'object') s = JSON.stringify(value);
  else s = String(value);
  if (s.includes(delimiter) || /["\r\n]/.test(s) || /^\s|\s$/.test(s)) s = `"${s.replace(/"/g, '""')}"`;
  return s;
}

export const jsonToCsv = tool({
  description:
    'Converts an array of JSON objects (or arrays) to CSV text with a header row, quoting fields that contain delimiters, quotes or newlines; nested values become JSON strings.',
  inputSchema: {
    type: 'object',
    properties: {
      rows: {
        type: 'array',
        description: 'The records: objects (keys become columns) or arrays of values.',
        items: { description: 'One record: an object, or an array of values.' },
        maxItems: 100000,
      },
      columns: {
        type: 'array',
        description: 'Optional column order/subset; defaults to every key in order of first appearance.',
        items: { type: 'string', description: 'A column (object key).' },
      },
      delimiter: { type: 'string', description: 'Field delimiter.', enum: ['comma', 'semicolon', 'tab', 'pipe'], default: 'comma' },
      includeHeader: { type: 'boolean', description: 'Whether to write a header row with the column names.', default: true },
      lineEnding: { type: 'string', description: 'Line ending to use.', enum: ['lf', 'crlf'], default: 'lf' },
    },
    required: ['rows'],
    additionalProperties: false,
  },
  async execute({ rows, columns, delimiter, includeHeader, lineEnding }) {
    const d = DELIMITERS[delimiter];
    const eol = lineEnding === 'crlf' ? '\r\n' : '\n';
    const bad = rows.findIndex((r) => r === null || typeof r !== 'object');
    if (bad !== -1) throw new Error(`"rows[${bad}]" must be an object or an array, got ${JSON.stringify(rows[bad])}`);
    const objects = rows.every((r) => !Array.isArray(r));
    const arrays = rows.every((r) => Array.isArray(r));
    if (!objects && !arrays) throw new Error('"rows" must contain either only objects or only arrays, not a mix');
    const lines = [];
    if (objects) {
      let cols = columns;
      if (!cols) {
        const set = new Set();
        for (const r of rows) for (const k of Object.keys(r)) set.add(k);
        cols = [...set];
      }
      if (includeHeader) lines.push(cols.map((c) => csvField(c, d)).join(d));
      for (const r of rows) lines.push(cols.map((c) => csvField(r[c], d)).join(d));
      return { csv: lines.join(eol) + (lines.length ? eol : ''), columns: cols, rowCount: rows.length };
    }
    if (columns && includeHeader) lines.push(columns.map((c) => csvField(c, d)).join(d));
    for (const r of rows) lines.push(r.map((v) => csvField(v, d)).join(d));
    return { csv: lines.join(eol) + (lines.length ? eol : ''), columns: columns ?? [], rowCount: rows.length };
  },
});

// ----------------------------------------------------------------------------- JSON path
function parsePath(path) {
  const tokens = [];
  let i = 0;
  const s = path.trim();
  if (s.startsWith('$')) i = 1;
  while (i < s.length) {
    const c = s[i];
    if (c === '.') {
      i++;
      if (s[i] === '.') throw new Error(`Recursive descent ("..") is not supported (position ${i})`);
      const m = /^(\*|[^.[\]\s]+)/.exec(s.slice(i));
      if (!m) throw new Error(`Expected a property name after "." at position ${i}`);
      tokens.push(m[1] === '*' ? { wildcard: true } : { key: m[1] });
      i += m[1].length;
    } else if (c === '[') {
      const rest = s.slice(i);
      let m;
      if ((m = /^\[\s*(-?\d+)\s*\]/.exec(rest))) tokens.push({ index: Number(m[1]) });
      else if ((m = /^\[\s*\*\s*\]/.exec(rest))) tokens.push({ wildcard: true });
      else if ((m = /^\[\s*'((?:[^'\\]|\\.)*)'\s*\]/.exec(rest)) || (m = /^\[\s*"((?:[^"\\]|\\.)*)"\s*\]/.exec(rest))) {
        tokens.push({ key: m[1].replace(/\\(.)/g, '$1') });
      } else throw new Error(`Malformed bracket expression at position ${i}: use [0], [-1], [*] or ["key"]`);
      i += m[0].length;
    } else if (tokens.length === 0 && i === (s.startsWith('$') ? 1 : 0)) {
      const m = /^(\*|[^.[\]\s]+)/.exec(s.slice(i));
      if (!m) throw new Error(`Unexpected character ${JSON.stringify(c)} at position ${i}`);
      tokens.push(m[1] === '*' ? { wildcard: true } : { key: m[1] });
      i += m[1].length;
    } else throw new Error(`Unexpected character ${JSON.stringify(c)} at position ${i}`);
  }
  return tokens;
}
const fmtKey = (p, k) => (typeof k === 'number' ? `${p}[${k}]` : /^[A-Za-z_$][\w$]*$/.test(k) ? `${p}.${k}` : `${p}[${JSON.stringify(k)}]`);

export const queryJson = tool({
  description:
    'Extracts values from JSON data with a JSONPath-style path such as "$.users[0].name", "items[*].price" or "data[\\"key with spaces\\"]"; supports negative indexes and wildcards.',
  inputSchema: {
    type: 'object',
    properties: {
      data: { description: 'The JSON value (object, array or scalar) to query.' },
      path: {
        type: 'string',
        description: 'Dot/bracket path, e.g. "$.store.book[-1].title" or "orders[*].id". "$" alone selects the root.',
        minLength: 1,
        maxLength: 2000,
      },
    },
    required: ['data', 'path'],
    additionalProperties: false,
  },
  async execute({ data, path }) {
    const tokens = parsePath(path);
    let current = [{ path: '$', value: data }];
    for (const t of tokens) {
      const next = [];
      for (const { path: p, value } of current) {
        if (t.wildcard) {
          if (Array.isArray(value)) value.forEach((v, i) => next.push({ path: fmtKey(p, i), value: v }));
          else if (value && typeof value === 'object') for (const [k, v] of Object.entries(value)) next.push({ path: fmtKey(p, k), value: v });
        } else if (t.index !== undefined) {
          if (Array.isArray(value)) {
            const i = t.index < 0 ? value.length + t.index : t.index;
            if (i >= 0 && i < value.length) next.push({ path: fmtKey(p, i), value: value[i] });
          }
        } else if (value && typeof value === 'object' && Object.hasOwn(value, t.key)) {
          next.push({ path: fmtKey(p, Array.isArray(value) && /^\d+$/.test(t.key) ? Number(t.key) : t.key), value: value[t.key] });
        }
      }
      current = next;
    }
    const wildcard = tokens.some((t) => t.wildcard);
    return {
      found: current.length > 0,
      value: wildcard ? current.map((m) => m.value) : (current[0]?.value ?? null),
      count: current.length,
      matches: current,
    };
  },
});

// ----------------------------------------------------------------------------- JSON diff
const ptr = (base, key) => `${base}/${String(key).replace(/~/g, '~0').replace(/\//g, '~1')}`;
const jsonKind = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
function deepEqual(a, b) {
  if (a === b) return true;
  const ka = jsonKind(a);
  if (ka !== jsonKind(b)) return false;
  if (ka === 'array') return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  if (ka === 'object') {
    const keys = Object.keys(a);
    return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && deepEqual(a[k], b[k]));
  }
  return false;
}
function diff(a, b, path, out) {
  if (deepEqual(a, b)) return;
  const ka = jsonKind(a);
  if (ka === jsonKind(b) && ka === 'object') {
    for (const k of Object.keys(a)) {
      if (!Object.hasOwn(b, k)) out.push({ op: 'remove', path: ptr(path, k), oldValue: a[k] });
      else diff(a[k], b[k], ptr(path, k), out);
    }
    for (const k of Object.keys(b)) if (!Object.hasOwn(a, k)) out.push({ op: 'add', path: ptr(path, k), value: b[k] });
    return;
  }
  if (ka === jsonKind(b) && ka === 'array') {
    const common = Math.min(a.length, b.length);
    for (let i = 0; i < common; i++) diff(a[i], b[i], ptr(path, i), out);
    for (let i = a.length - 1; i >= common; i--) out.push({ op: 'remove', path: ptr(path, i), oldValue: a[i] });
    for (let i = common; i < b.length; i++) out.push({ op: 'add', path: ptr(path, i), value: b[i] });
    return;
  }
  out.push({ op: 'replace', path: path || '', oldValue: a, value: b });
}

export const diffJson = tool({
  description:
    'Compares two JSON documents and lists every added, removed and changed value as JSON Patch style operations with JSON Pointer paths (deep object and array diff).',
  inputSchema: {
    type: 'object',
    properties: {
      before: { description: 'The original JSON value.' },
      after: { description: 'The new JSON value.' },
    },
    required: ['before', 'after'],
    additionalProperties: false,
  },
  async execute({ before, after }) {
    const changes = [];
    diff(before, after, '', changes);
    return {
      equal: changes.length === 0,
      changes,
      summary: {
        added: changes.filter((c) => c.op === 'add').length,
        removed: changes.filter((c) => c.op === 'remove').length,
        changed: changes.filter((c) => c.op === 'replace').length,
      },
    };
  },
});

// ----------------------------------------------------------------------------- JSON Schema
const FORMATS = {
  email: (s) => /^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(s),
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s + 'T00:00:00Z')) && new Date(s + 'T00:00:00Z').toISOString().startsWith(s),
  time: (s) => /^([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)?$/i.test(s),
  'date-time': (s) =>
    /^\d{4}-\d{2}-\d{2}[Tt ]([01]\d|2[0-3]):[0-5]\d:([0-5]\d|60)(\.\d+)?(Z|z|[+-]([01]\d|2[0-3]):[0-5]\d)$/.test(s) && !Number.isNaN(Date.parse(s)),
  uri: (s) => {
    try {
      return /^[a-z][a-z0-9+.-]*:/i.test(s) && !!new URL(s);
    } catch {
      return false;
    }
  },
  uuid: (s) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(s),
  ipv4: (s) => /^((25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/.test(s),
  ipv6: (s) => {
    try {
      return s.includes(':') && new URL(`http://[${s}]`).hostname.length > 2;
    } catch {
      return false;
    }
  },
  hostname: (s) => s.length <= 253 && /^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))*$/i.test(s),
  regex: (s) => {
    try {
      new RegExp(s, 'u');
      return true;
    } catch {
      return false;
    }
  },
};

function resolveRef(root, ref) {
  if (!ref.startsWith('#')) throw new Error(`Only local $ref values (starting with "#") are supported; got ${JSON.stringify(ref)}`);
  let node = root;
  for (const raw of ref.slice(1).split('/').slice(1)) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (node === null || typeof node !== 'object' || !(part in node)) throw new Error(`Cannot resolve $ref ${JSON.stringify(ref)}`);
    node = node[part];
  }
  return node;
}

function validate(schema, data, path, root, errors, depth = 0) {
  if (depth > 100) throw new Error('Schema recursion is too deep (a $ref cycle?)');
  const err = (keyword, message) => errors.push({ instancePath: path, keyword, message });
  if (schema === true) return;
  if (schema === false) return err('false', 'no value is allowed here');
  if (schema === null || typeof schema !== 'object' || Array.isArray(schema))
    throw new Error(`Invalid schema at ${path || 'root'}: a schema must be an object or a boolean`);
  if (schema.$ref !== undefined) validate(resolveRef(root, schema.$ref), data, path, root, errors, depth + 1);
  const kind = jsonKind(data);
  if (schema.type !== undefined) {
    const types = [].concat(schema.type);
    const ok = types.some((t) => t === kind || (t === 'integer' && kind === 'number' && Number.isInteger(data)) || (t === 'number' && kind === 'number'));
    if (!ok) return err('type', `must be ${types.join(' or ')}, got ${kind === 'number' && Number.isInteger(data) ? 'integer' : kind}`);
  }
  if (schema.const !== undefined && !deepEqual(schema.const, data)) err('const', `must be equal to ${JSON.stringify(schema.const)}`);
  if (schema.enum !== undefined && !schema.enum.some((e) => deepEqual(e, data)))
    err('enum', `must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  if (kind === 'string') {
    const len = [...data].length;
    if (schema.minLength !== undefined && len < schema.minLength) err('minLength', `must have at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && len > schema.maxLength) err('maxLength', `must have at most ${schema.maxLength} characters`);
    if (schema.pattern !== undefined && !new RegExp(schema.pattern, 'u').test(data)) err('pattern', `must match pattern ${JSON.stringify(schema.pattern)}`);
    if (schema.format !== undefined && FORMATS[schema.format] && !FORMATS[schema.format](data)) err('format', `must be a valid ${schema.format}`);
  }
  if (kind === 'number') {
    if (schema.minimum !== undefined && data < schema.minimum) err('minimum', `must be >= ${schema.minimum}`);
    if (schema.maximum !== undefined && data > schema.maximum) err('maximum', `must be <= ${schema.maximum}`);
    if (schema.exclusiveMinimum !== undefined && data <= schema.exclusiveMinimum) err('exclusiveMinimum', `must be > ${schema.exclusiveMinimum}`);
    if (schema.exclusiveMaximum !== undefined && data >= schema.exclusiveMaximum) err('exclusiveMaximum', `must be < ${schema.exclusiveMaximum}`);
    if (schema.multipleOf !== undefined) {
      const q = data / schema.multipleOf;
      if (Math.abs(q - Math.round(q)) > 1e-9) err('multipleOf', `must be a multiple of ${schema.multipleOf}`);
    }
  }
  if (kind === 'array') {
    if (schema.minItems !== undefined && data.length < schema.minItems) err('minItems', `must have at least ${schema.minItems} items`);
    if (schema.maxItems !== undefined && data.length > schema.maxItems) err('maxItems', `must have at most ${schema.maxItems} items`);
    if (schema.uniqueItems) {
      outer: for (let i = 0; i < data.length; i++)
        for (let j = i + 1; j < data.length; j++) {
          if (deepEqual(data[i], data[j])) {
            err('uniqueItems', `must not contain duplicate items (items ${i} and ${j} are equal)`);
            break outer;
          }
        }
    }
    const prefix = schema.prefixItems ?? [];
    prefix.forEach((s, i) => {
      if (i < data.length) validate(s, data[i], `${path}/${i}`, root, errors, depth + 1);
    });
    if (schema.items !== undefined) for (let i = prefix.length; i < data.length; i++) validate(schema.items, data[i], `${path}/${i}`, root, errors, depth + 1);
    if (schema.contains !== undefined) {
      const n = data.filter((item) => {
        const e = [];
        validate(schema.contains, item, path, root, e, depth + 1);
        return e.length === 0;
      }).length;
      const min = schema.minContains ?? 1;
      if (n < min) err('contains', `must contain at least ${min} matching item(s)`);
      if (schema.maxContains !== undefined && n > schema.maxContains) err('maxContains', `must contain at most ${schema.maxContains} matching item(s)`);
    }
  }
  if (kind === 'object') {
    const keys = Object.keys(data);
    for (const key of schema.required ?? []) if (!Object.hasOwn(data, key)) err('required', `must have required property ${JSON.stringify(key)}`);
    if (schema.minProperties !== undefined && keys.length < schema.minProperties) err('minProperties', `must have at least ${schema.minProperties} properties`);
    if (schema.maxProperties !== undefined && keys.length > schema.maxProperties) err('maxProperties', `must have at most ${schema.maxProperties} properties`);
    const props = schema.properties ?? {};
    const patterns = Object.entries(schema.patternProperties ?? {}).map(([p, s]) => [new RegExp(p, 'u'), s]);
    for (const key of keys) {
      const child = ptr(path, key);
      let matched = false;
      if (Object.hasOwn(props, key)) {
        matched = true;
        validate(props[key], data[key], child, root, errors, depth + 1);
      }
      for (const [re, s] of patterns)
        if (re.test(key)) {
          matched = true;
          validate(s, data[key], child, root, errors, depth + 1);
        }
      if (!matched && schema.additionalProperties !== undefined) {
        if (schema.additionalProperties === false) err('additionalProperties', `must not have additional property ${JSON.stringify(key)}`);
        else validate(schema.additionalProperties, data[key], child, root, errors, depth + 1);
      }
    }
    if (schema.propertyNames !== undefined) for (const key of keys) validate(schema.propertyNames, key, ptr(path, key), root, errors, depth + 1);
    for (const [key, deps] of Object.entries(schema.dependentRequired ?? {})) {
      if (key in data)
        for (const d of deps) if (!(d in data)) err('dependentRequired', `must have property ${JSON.stringify(d)} when ${JSON.stringify(key)} is present`);
    }
  }
  const sub = (s) => {
    const e = [];
    validate(s, data, path, root, e, depth + 1);
    return e;
  };
  if (schema.allOf) for (const s of schema.allOf) errors.push(...sub(s));
  if (schema.anyOf && !schema.anyOf.some((s) => sub(s).length === 0)) err('anyOf', 'must match at least one schema in anyOf');
  if (schema.oneOf) {
    const n = schema.oneOf.filter((s) => sub(s).length === 0).length;
    if (n !== 1) err('oneOf', `must match exactly one schema in oneOf (matched ${n})`);
  }
  if (schema.not !== undefined && sub(schema.not).length === 0) err('not', 'must not match the schema in "not"');
  if (schema.if !== undefined) {
    if (sub(schema.if).length === 0) {
      if (schema.then !== undefined) errors.push(...sub(schema.then));
    } else if (schema.else !== undefined) errors.push(...sub(schema.else));
  }
}

export const validateJsonSchema = tool({
  description:
    'Validates JSON data against a JSON Schema (draft 2020-12 core keywords: type, properties, required, enum, items, pattern, format, min/max, anyOf/oneOf/allOf, $ref) and lists every error.',
  inputSchema: {
    type: 'object',
    properties: {
      schema: { description: 'The JSON Schema to validate against (an object, or true/false).' },
      data: { description: 'The JSON value to validate.' },
    },
    required: ['schema', 'data'],
    additionalProperties: false,
  },
  async execute({ schema, data }) {
    const errors = [];
    validate(schema, data, '', schema, errors);
    return { valid: errors.length === 0, errorCount: errors.length, errors };
  },
});

// ----------------------------------------------------------------------------- units
// factor: how many base units one unit is (length: metre, mass: kilogram, volume: litre, data: byte,
// time: second, area: square metre, speed: metre per second)
const UNITS = {
  length: {
    base: 'm',
    units: { nm: 1e-9, um: 1e-6, mm: 1e-3, cm: 1e-2, dm: 0.1, m: 1, km: 1000, in: 0.0254, ft: 0.3048, yd: 0.9144, mi: 1609.344, nmi: 1852 },
  },
  mass: {
    base: 'kg',
    units: {
      ug: 1e-9,
      mg: 1e-6,
      g: 1e-3,
      kg: 1,
      t: 1000,
      oz: 0.028349523125,
      lb: 0.45359237,
      st: 6.35029318,
      'short ton': 907.18474,
      'long ton': 1016.0469088,
    },
  },
  volume: {
    base: 'l',
    units: {
      ml: 1e-3,
      cl: 1e-2,
      dl: 0.1,
      l: 1,
      m3: 1000,
      cm3: 1e-3,
      tsp: 0.00492892159375,
      tbsp: 0.01478676478125,
      floz: 0.0295735295625,
      cup: 0.2365882365,
      pt: 0.473176473,
      qt: 0.946352946,
      gal: 3.785411784,
      'imp gal': 4.54609,
      'imp pt': 0.56826125,
      ft3: 28.316846592,
      in3: 0.016387064,
    },
  },
  data: {
    base: 'B',
    units: {
      bit: 0.125,
      B: 1,
      kB: 1e3,
      MB: 1e6,
      GB: 1e9,
      TB: 1e12,
      PB: 1e15,
      KiB: 1024,
      MiB: 1024 ** 2,
      GiB: 1024 ** 3,
      TiB: 1024 ** 4,
      PiB: 1024 ** 5,
      kbit: 125,
      Mbit: 125e3,
      Gbit: 125e6,
    },
  },
  time: { base: 's', units: { ns: 1e-9, us: 1e-6, ms: 1e-3, s: 1, min: 60, h: 3600, d: 86400, wk: 604800, yr: 31557600 } },
  area: {
    base: 'm2',
    units: { mm2: 1e-6, cm2: 1e-4, m2: 1, km2: 1e6, ha: 1e4, in2: 0.00064516, ft2: 0.09290304, yd2: 0.83612736, acre: 4046.8564224, mi2: 2589988.110336 },
  },
  speed: { base: 'm/s', units: { 'm/s': 1, 'km/h': 1000 / 3600, mph: 0.44704, kn: 1852 / 3600, 'ft/s': 0.3048 } },
  temperature: { base: 'C', units: { C: null, F: null, K: null } },
};
const ALIASES = {
  meter: 'm',
  metre: 'm',
  meters: 'm',
  metres: 'm',
  kilometer: 'km',
  kilometre: 'km',
  kilometers: 'km',
  kilometres: 'km',
  centimeter: 'cm',
  centimeters: 'cm',
  centimetre: 'cm',
  millimeter: 'mm',
  millimeters: 'mm',
  millimetre: 'mm',
  micrometer: 'um',
  µm: 'um',
  nanometer: 'nm',
  inch: 'in',
  inches: 'in',
  '"': 'in',
  foot: 'ft',
  feet: 'ft',
  "'": 'ft',
  yard: 'yd',
  yards: 'yd',
  mile: 'mi',
  miles: 'mi',
  'nautical mile': 'nmi',
  'nautical miles': 'nmi',
  gram: 'g',
  grams: 'g',
  kilogram: 'kg',
  kilograms: 'kg',
  kilo: 'kg',
  kilos: 'kg',
  milligram: 'mg',
  milligrams: 'mg',
  microgram: 'ug',
  µg: 'ug',
  tonne: 't',
  tonnes: 't',
  'metric ton': 't',
  ounce: 'oz',
  ounces: 'oz',
  pound: 'lb',
  pounds: 'lb',
  lbs: 'lb',
  stone: 'st',
  liter: 'l',
  litre: 'l',
  liters: 'l',
  litres: 'l',
  milliliter: 'ml',
  millilitre: 'ml',
  milliliters: 'ml',
  millilitres: 'ml',
  'cubic meter': 'm3',
  'm³': 'm3',
  'cm³': 'cm3',
  cc: 'cm3',
  teaspoon: 'tsp',
  tablespoon: 'tbsp',
  'fl oz': 'floz',
  'fluid ounce': 'floz',
  cups: 'cup',
  pint: 'pt',
  quart: 'qt',
  gallon: 'gal',
  gallons: 'gal',
  'us gal': 'gal',
  'imperial gallon': 'imp gal',
  'ft³': 'ft3',
  'in³': 'in3',
  byte: 'B',
  bytes: 'B',
  bits: 'bit',
  b: 'bit',
  kb: 'kB',
  KB: 'kB',
  kilobyte: 'kB',
  megabyte: 'MB',
  gigabyte: 'GB',
  terabyte: 'TB',
  petabyte: 'PB',
  kibibyte: 'KiB',
  mebibyte: 'MiB',
  gibibyte: 'GiB',
  tebibyte: 'TiB',
  Kb: 'kbit',
  Mb: 'Mbit',
  Gb: 'Gbit',
  second: 's',
  seconds: 's',
  sec: 's',
  millisecond: 'ms',
  milliseconds: 'ms',
  microsecond: 'us',
  µs: 'us',
  nanosecond: 'ns',
  minute: 'min',
  minutes: 'min',
  hour: 'h',
  hours: 'h',
  hr: 'h',
  day: 'd',
  days: 'd',
  week: 'wk',
  weeks: 'wk',
  year: 'yr',
  years: 'yr',
  'm²': 'm2',
  'km²': 'km2',
  'cm²': 'cm2',
  'mm²': 'mm2',
  'ft²': 'ft2',
  'in²': 'in2',
  'yd²': 'yd2',
  'mi²': 'mi2',
  hectare: 'ha',
  hectares: 'ha',
  acres: 'acre',
  kph: 'km/h',
  kmh: 'km/h',
  knot: 'kn',
  knots: 'kn',
  kt: 'kn',
  mps: 'm/s',
  celsius: 'C',
  '°c': 'C',
  c: 'C',
  fahrenheit: 'F',
  '°f': 'F',
  f: 'F',
  kelvin: 'K',
  k: 'K',
};
function resolveUnit(raw) {
  const candidates = [raw.trim(), ALIASES[raw.trim()], ALIASES[raw.trim().toLowerCase()]];
  for (const c of candidates) {
    if (!c) continue;
    for (const [category, def] of Object.entries(UNITS)) if (c in def.units) return { unit: c, category };
  }
  // case-insensitive match on canonical symbols (but keep bit/byte distinct through the alias table)
  for (const [category, def] of Object.entries(UNITS)) {
    const hit = Object.keys(def.units).find((u) => u.toLowerCase() === raw.trim().toLowerCase());
    if (hit) return { unit: hit, category };
  }
  throw new Error(
    `Unknown unit ${JSON.stringify(raw)}. Supported: ${Object.entries(UNITS)
      .map(([c, d]) => `${c} (${Object.keys(d.units).join(', ')})`)
      .join('; ')}`,
  );
}
const toCelsius = { C: (v) => v, F: (v) => ((v - 32) * 5) / 9, K: (v) => v - 273.15 };
const fromCelsius = { C: (v) => v, F: (v) => (v * 9) / 5 + 32, K: (v) => v + 273.15 };

export const convertUnits = tool({
  description:
    'Converts a quantity between units of length, mass/weight, temperature (Celsius, Fahrenheit, Kelvin), volume, area, speed, time and data size (bytes, KB, MiB, GB...).',
  inputSchema: {
    type: 'object',
    properties: {
      value: { type: 'number', description: 'The quantity to convert.' },
      from: { type: 'string', description: 'Source unit symbol or name, e.g. "km", "lb", "F", "GiB", "cup".', minLength: 1, maxLength: 40 },
      to: { type: 'string', description: 'Target unit symbol or name, e.g. "mi", "kg", "C", "MB", "ml".', minLength: 1, maxLength: 40 },
      precision: { type: 'integer', description: 'Significant digits in the result.', minimum: 1, maximum: 17, default: 12 },
    },
    required: ['value', 'from', 'to'],
    additionalProperties: false,
  },
  async execute({ value, from, to, precision }) {
    const a = resolveUnit(from);
    const b = resolveUnit(to);
    if (a.category !== b.category) throw new Error(`Cannot convert ${a.category} (${a.unit}) to ${b.category} (${b.unit})`);
    let result;
    if (a.category === 'temperature') {
      const celsius = toCelsius[a.unit](value);
      if (celsius < -273.15 - 1e-9) throw new Error(`${value} ${a.unit} is below absolute zero`);
      result = fromCelsius[b.unit](celsius);
    } else {
      const units = UNITS[a.category].units;
      result = (value * units[a.unit]) / units[b.unit];
    }
    result = Number(result.toPrecision(precision));
    if (Object.is(result, -0)) result = 0;
    return { value: result, from: a.unit, to: b.unit, category: a.category, input: value };
  },
});

// @toolshed-examples/sql-tools — SQL formatting, identifier quoting, safe INSERT generation and CREATE TABLE
// inference from JSON rows, for PostgreSQL, MySQL, SQLite and SQL Server. Plain ESM, no dependencies.

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

const DIALECTS = ['postgres', 'mysql', 'sqlite', 'mssql'];

/** Tail helpers that avoid end-anchored regexes (which rescan the whole growing string). */
function trimTail(s, chars) {
  let i = s.length;
  while (i > 0 && chars.includes(s[i - 1])) i--;
  return i === s.length ? s : s.slice(0, i);
}

// ----------------------------------------------------------------------------- tokenizer
function tokenizeSql(sql, backslashEscapes = false) {
  const tokens = [];
  let i = 0;
  const n = sql.length;
  const push = (type, value) => tokens.push({ type, value });
  while (i < n) {
    const c = sql[i];
    const rest = sql.slice(i);
    let m;
    if (/\s/.test(c)) {
      const s = /^\s+/.exec(rest)[0];
      i += s.length;
      if (/\n\s*\n/.test(s)) push('blank', s);
      continue;
    }
    if (rest.startsWith('--') || c === '#') {
      const end = sql.indexOf('\n', i);
      push('line-comment', sql.slice(i, end === -1 ? n : end).trimEnd());
      i = end === -1 ? n : end;
      continue;
    }
    if (rest.startsWith('/*')) {
      const end = sql.indexOf('*/', i + 2);
      if (end === -1) throw new Error('Unterminated /* block comment */ in the SQL');
      push('block-comment', sql.slice(i, end + 2));
      i = end + 2;
      continue;
    }
    if ((m = /^([EeNnXxBb])?'/.exec(rest))) {
      let j = i + m[0].length;
      for (;;) {
        if (j >= n) throw new Error(`Unterminated string literal starting at position ${i}`);
        if (sql[j] === '\\' && (backslashEscapes || /^[Ee]/.test(m[0]))) {
          j += 2;
          continue;
        }
        if (sql[j] === "'") {
          if (sql[j + 1] === "'") {
            j += 2;
            continue;
          }
          break;
        }
        j++;
      }
      push('string', sql.slice(i, j + 1));
      i = j + 1;
      continue;
    }
    if ((m = /^\$([A-Za-z_]\w*)?\$/.exec(rest))) {
      const end = sql.indexOf(m[0], i + m[0].length);
      if (end === -1) throw new Error(`Unterminated dollar-quoted string ${m[0]}`);
      push('string', sql.slice(i, end + m[0].length));
      i = end + m[0].length;
      continue;
    }
    if (c === '"' || c === '`' || c === '[') {
      const close = c === '[' ? ']' : c;
      let j = i + 1;
      for (;;) {
        if (j >= n) throw new Error(`Unterminated quoted identifier starting at position ${i}`);
        if (sql[j] === close) {
          if (sql[j + 1] === close) {
            j += 2;
            continue;
          }
          break;
        }
        j++;
      }
      push('ident', sql.slice(i, j + 1));
      i = j + 1;
      continue;
    }
    if ((m = /^(?:\d+\.?\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)/.exec(rest))) {
      push('number', m[0]);
      i += m[0].length;
      continue;
    }
    if ((m = /^(?:\$\d+|\?\d*|:[A-Za-z_]\w*|@[A-Za-z_]\w*)/.exec(rest))) {
      push('param', m[0]);
      i += m[0].length;
      continue;
    }
    if ((m = /^[A-Za-z_\u0080-\uffff][\w$\u0080-\uffff]*/.exec(rest))) {
      push('word', m[0]);
      i += m[0].length;
      continue;
    }
    if ((m = /^(?:::|<=|>=|<>|!=|\|\||->>|->|=>|<<|>>|#>>|#>|@>|<@|&&|[-+*/%=<>!~^&|])/.exec(rest))) {
      push('op', m[0]);
      i += m[0].length;
      continue;
    }
    if ('(),;.'.includes(c)) {
      push(c, c);
      i++;
      continue;
    }
    throw new Error(`Unexpected character ${JSON.stringify(c)} at position ${i}`);
  }
  return tokens;
}

const KEYWORDS = new Set(
  `ADD ALL ALTER AND ANY AS ASC BETWEEN BY CASE CAST CHECK COLUMN CONFLICT CONSTRAINT CREATE CROSS CURRENT_DATE
CURRENT_TIMESTAMP DATABASE DEFAULT DELETE DESC DISTINCT DO DROP ELSE END EXCEPT EXISTS FALSE FETCH FILTER FIRST FOR FOREIGN FROM FULL
GROUP HAVING ILIKE IN INDEX INNER INSERT INTERSECT INTERVAL INTO IS JOIN KEY LATERAL LEFT LIKE LIMIT NATURAL NEXT NOT NOTHING NULL
NULLS OFFSET ON ONLY OR ORDER OUTER OVER PARTITION PRIMARY RECURSIVE REFERENCES RETURNING RIGHT ROW ROWS SELECT SET TABLE THEN TOP TRUE
TRUNCATE UNION UNIQUE UPDATE USING VALUES VIEW WHEN WHERE WINDOW WITH`.split(/\s+/),
);
const FUNCTIONS_AFTER = new Set([
  'IN',
  'EXISTS',
  'VALUES',
  'ANY',
  'ALL',
  'OVER',
  'FILTER',
  'AS',
  'ON',
  'USING',
  'AND',
  'OR',
  'NOT',
  'WHERE',
  'SELECT',
  'FROM',
  'JOIN',
  'THEN',
  'ELSE',
  'WHEN',
  'CASE',
  'IS',
  'LIKE',
  'BY',
  'SET',
  'INTO',
  'TABLE',
  'KEY',
  'REFERENCES',
  'CHECK',
  'UNIQUE',
  'RETURNING',
  'LATERAL',
  'WITH',
]);
const CLAUSES = [
  'WITH RECURSIVE',
  'WITH',
  'SELECT DISTINCT',
  'SELECT',
  'FROM',
  'WHERE',
  'GROUP BY',
  'HAVING',
  'WINDOW',
  'ORDER BY',
  'LIMIT',
  'OFFSET',
  'FETCH',
  'UNION ALL',
  'UNION',
  'INTERSECT',
  'EXCEPT',
  'INSERT INTO',
  'VALUES',
  'UPDATE',
  'SET',
  'DELETE FROM',
  'RETURNING',
  'ON CONFLICT',
  'NATURAL JOIN',
  'LEFT OUTER JOIN',
  'RIGHT OUTER JOIN',
  'FULL OUTER JOIN',
  'LEFT JOIN',
  'RIGHT JOIN',
  'FULL JOIN',
  'INNER JOIN',
  'CROSS JOIN',
  'JOIN',
  'CROSS APPLY',
  'OUTER APPLY',
  'PARTITION BY',
  'DO UPDATE SET',
  'DO NOTHING',
].map((c) => c.split(' '));
const LIST_CLAUSES = new Set(['SELECT', 'SELECT DISTINCT', 'GROUP BY', 'ORDER BY', 'SET', 'DO UPDATE SET', 'RETURNING', 'WITH', 'WITH RECURSIVE']);
const UNION_LIKE = new Set(['UNION ALL', 'UNION', 'INTERSECT', 'EXCEPT']);

export const formatSql = tool({
  description:
    'Formats (pretty-prints) a SQL query: puts SELECT, FROM, WHERE, JOIN, GROUP BY and other clauses on their own lines, indents column lists, conditions and subqueries, and normalizes keyword case.',
  inputSchema: {
    type: 'object',
    properties: {
      sql: { type: 'string', description: 'The SQL text to format (one or more statements).', minLength: 1, maxLength: 500000 },
      keywordCase: { type: 'string', description: 'Case for SQL keywords.', enum: ['upper', 'lower', 'preserve'], default: 'upper' },
      indent: { type: 'integer', description: 'Spaces per indentation level.', minimum: 1, maximum: 8, default: 2 },
      dialect: { type: 'string', description: 'SQL dialect; MySQL treats backslashes in strings as escapes.', enum: DIALECTS, default: 'postgres' },
    },
    required: ['sql'],
    additionalProperties: false,
  },
  async execute({ sql, keywordCase, indent, dialect }) {
    const raw = tokenizeSql(sql, dialect === 'mysql');
    if (!raw.some((t) => t.type !== 'blank' && !t.type.endsWith('comment'))) throw new Error('The SQL contains no statements');
    const kw = (w) => (keywordCase === 'upper' ? w.toUpperCase() : keywordCase === 'lower' ? w.toLowerCase() : w);
    // merge multi-word clauses
    const tokens = [];
    for (let k = 0; k < raw.length; k++) {
      const t = raw[k];
      if (t.type === 'blank') continue;
      if (t.type === 'word') {
        const clause = CLAUSES.find((words) => words.every((w, o) => raw[k + o]?.type === 'word' && raw[k + o].value.toUpperCase() === w));
        if (clause) {
          tokens.push({
            type: 'clause',
            key: clause.join(' '),
            value: raw
              .slice(k, k + clause.length)
              .map((x) => kw(x.value))
              .join(' '),
          });
          k += clause.length - 1;
          continue;
        }
        if (KEYWORDS.has(t.value.toUpperCase())) {
          tokens.push({ type: 'keyword', key: t.value.toUpperCase(), value: kw(t.value) });
          continue;
        }
      }
      tokens.push(t);
    }
    const unit = ' '.repeat(indent);
    // output = finished lines + the line being written (cheap to edit at its end)
    const lines = [];
    let line = '';
    const started = () => lines.length > 0 || line !== '';
    const stack = [{ sub: false, base: 0, clause: null }];
    let betweenPending = false;
    let prev = null;
    const top = () => stack[stack.length - 1];
    const newline = (level) => {
      line = trimTail(line, ' ');
      if (line !== '') lines.push(line);
      line = unit.repeat(level);
    };
    const space = () => {
      if (line !== '' && !/[\s(]/.test(line.slice(-1)) && !line.endsWith('.') && !line.endsWith('::')) line += ' ';
    };
    for (let k = 0; k < tokens.length; k++) {
      const t = tokens[k];
      const ctx = top();
      if (t.type === 'clause' && t.key !== 'PARTITION BY' && (stack.length === 1 || ctx.sub)) {
        if (started()) newline(ctx.base);
        if (UNION_LIKE.has(t.key)) {
          line += t.value;
          newline(ctx.base);
          prev = t;
          ctx.clause = null;
          continue;
        }
        line += t.value;
        ctx.clause = t.key;
        if (/JOIN|APPLY/.test(t.key) || t.key === 'ON CONFLICT') {
          line += ' ';
        } else if (t.key === 'LIMIT' || t.key === 'OFFSET' || t.key === 'FETCH' || t.key === 'DO NOTHING') line += ' ';
        else newline(ctx.base + 1);
        prev = t;
        continue;
      }
      if (t.type === '(') {
        const next = tokens[k + 1];
        const isSub = next && next.type === 'clause' && (next.key.startsWith('SELECT') || next.key.startsWith('WITH'));
        const afterTableName = ctx.clause === 'INSERT INTO' || (tokens[k - 2]?.type === 'keyword' && ['TABLE', 'INTO', 'EXISTS'].includes(tokens[k - 2].key));
        const fnCall =
          !afterTableName && prev && (prev.type === 'word' || prev.type === 'ident' || (prev.type === 'keyword' && !FUNCTIONS_AFTER.has(prev.key)));
        if (!fnCall) space();
        line += '(';
        const lineIndent = line.slice(line.lastIndexOf('\n') + 1).search(/\S|$/);
        const base = isSub ? Math.floor(lineIndent / indent) + 1 : ctx.base;
        stack.push({ sub: isSub, base, clause: null, parentClause: ctx.clause });
        if (isSub) newline(base);
        prev = t;
        continue;
      }
      if (t.type === ')') {
        if (stack.length > 1) {
          const closing = stack.pop();
          if (closing.sub) newline(closing.base - 1);
          else line = trimTail(line, ' ');
        } else line = trimTail(line, ' ');
        line += ')';
        prev = t;
        continue;
      }
      if (t.type === ',') {
        line = trimTail(line, ' ') + ',';
        if (!ctx.sub && stack.length > 1) line += ' ';
        else if (LIST_CLAUSES.has(ctx.clause) || ctx.clause === 'VALUES') newline(ctx.base + 1);
        else line += ' ';
        prev = t;
        continue;
      }
      if (t.type === ';') {
        while (line.trim() === '' && lines.length) line = lines.pop();
        line = trimTail(line, ' \t\r\n') + ';';
        stack.length = 1;
        stack[0].clause = null;
        if (k < tokens.length - 1) {
          lines.push(line, '');
          line = '';
        }
        betweenPending = false;
        prev = t;
        continue;
      }
      if (t.type === '.') {
        line = trimTail(line, ' ') + '.';
        prev = t;
        continue;
      }
      if (t.type === 'op' && t.value === '::') {
        line = trimTail(line, ' ') + '::';
        prev = t;
        continue;
      }
      if (t.type === 'keyword' && (t.key === 'AND' || t.key === 'OR')) {
        if (t.key === 'AND' && betweenPending) {
          betweenPending = false;
          space();
          line += t.value;
          prev = t;
          continue;
        }
        if (['WHERE', 'HAVING'].includes(ctx.clause) || /JOIN/.test(ctx.clause ?? '')) {
          newline(ctx.base + 1);
          line += t.value;
          prev = t;
          continue;
        }
      }
      if (t.type === 'keyword' && t.key === 'ON' && /JOIN/.test(ctx.clause ?? '')) {
        space();
        line += t.value;
        prev = t;
        continue;
      }
      if (t.type === 'keyword' && t.key === 'BETWEEN') betweenPending = true;
      if (t.type === 'line-comment') {
        space();
        line += t.value;
        newline(ctx.clause ? ctx.base + 1 : ctx.base);
        prev = t;
        continue;
      }
      space();
      line += t.value;
      prev = t;
    }
    const out = [...lines, line].join('\n');
    const formatted = out
      .replace(/[ ]+$/gm, '')
      .replace(/\n{3,}/g, '\n\n')
      .trim();
    return { formatted, statements: tokens.filter((t) => t.type === ';').length + (tokens[tokens.length - 1]?.type === ';' ? 0 : 1) };
  },
});

// ----------------------------------------------------------------------------- quoting
const QUOTES = { postgres: ['"', '"'], sqlite: ['"', '"'], mysql: ['`', '`'], mssql: ['[', ']'] };
const RESERVED = new Set([
  ...KEYWORDS,
  'USER',
  'ORDER',
  'GROUP',
  'TABLE',
  'COLUMN',
  'INDEX',
  'KEY',
  'DESC',
  'ASC',
  'LIMIT',
  'OFFSET',
  'CHECK',
  'DEFAULT',
  'PRIMARY',
]);

function quoteIdent(name, dialect) {
  if (name === '') throw new Error('An identifier must not be empty');
  if (name.includes('\u0000')) throw new Error('An identifier must not contain NUL characters');
  const [open, close] = QUOTES[dialect];
  const limit = dialect === 'postgres' ? 63 : dialect === 'mysql' ? 64 : 128;
  if (Buffer.byteLength(name) > limit && dialect !== 'sqlite')
    throw new Error(`Identifier ${JSON.stringify(name.slice(0, 40))}... is longer than ${limit} bytes, the ${dialect} limit`);
  return open + name.split(close).join(close + close) + close;
}

export const quoteSqlIdentifier = tool({
  description:
    'Safely quotes and escapes SQL identifiers (table, column or schema names) for PostgreSQL, MySQL, SQLite or SQL Server, preventing SQL injection through dynamic identifiers.',
  inputSchema: {
    type: 'object',
    properties: {
      identifier: { type: 'string', description: 'The identifier to quote, e.g. "order" or "public.user accounts".', minLength: 1, maxLength: 1000 },
      dialect: { type: 'string', description: 'SQL dialect whose quoting rules to use.', enum: DIALECTS, default: 'postgres' },
      qualified: { type: 'boolean', description: 'Treat dots as separators of a qualified name (schema.table.column) and quote each part.', default: false },
    },
    required: ['identifier'],
    additionalProperties: false,
  },
  async execute({ identifier, dialect, qualified }) {
    const parts = qualified ? identifier.split('.') : [identifier];
    const quoted = parts.map((p) => quoteIdent(p, dialect)).join('.');
    const plain = parts.every((p) => /^[a-z_][a-z0-9_]*$/.test(p) && !RESERVED.has(p.toUpperCase()));
    return {
      quoted,
      dialect,
      parts,
      needsQuoting: !plain,
      note: plain
        ? 'The identifier is a plain lowercase name and could also be used unquoted.'
        : 'Quoting is required (reserved word, upper case, or special characters); quoted names are case-sensitive.',
    };
  },
});

// ----------------------------------------------------------------------------- INSERT
function literal(v, dialect) {
  if (v === null || v === undefined) return 'NULL';
  if (typeof v === 'boolean') return dialect === 'postgres' || dialect === 'mysql' ? (v ? 'TRUE' : 'FALSE') : v ? '1' : '0';
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new Error(`Cannot write the non-finite number ${v} as a SQL literal`);
    return String(v);
  }
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  if (s.includes('\u0000')) throw new Error('String values must not contain NUL characters');
  let body = s.replace(/'/g, "''");
  if (dialect === 'mysql') body = body.replace(/\\/g, '\\\\');
  return (dialect === 'mssql' && /[^\x00-\x7f]/.test(s) ? 'N' : '') + `'${body}'`;
}

function collectColumns(rows, columns) {
  if (columns) return columns;
  const set = new Set();
  for (const r of rows) for (const k of Object.keys(r)) set.add(k);
  if (set.size === 0) throw new Error('The rows have no columns (every row is an empty object)');
  return [...set];
}

export const buildSqlInsert = tool({
  description:
    'Builds a SQL INSERT statement from JSON rows for PostgreSQL, MySQL, SQLite or SQL Server, either parameterized with placeholders and a params array or with safely escaped literals.',
  inputSchema: {
    type: 'object',
    properties: {
      table: { type: 'string', description: 'Target table name; "schema.table" is treated as qualified.', minLength: 1, maxLength: 200 },
      rows: {
        type: 'array',
        description: 'Rows to insert, as objects mapping column names to values (null, boolean, number, string; objects/arrays are stored as JSON text).',
        items: { type: 'object', description: 'One row.' },
        minItems: 1,
        maxItems: 1000,
      },
      columns: {
        type: 'array',
        description: 'Optional explicit column list/order; defaults to every key seen in the rows.',
        items: { type: 'string', description: 'A column name.' },
        minItems: 1,
      },
      dialect: { type: 'string', description: 'SQL dialect (quoting and placeholder style).', enum: DIALECTS, default: 'postgres' },
      parameterized: { type: 'boolean', description: 'Use placeholders ($1 / ? / @p1) and return the values separately (recommended).', default: true },
      returning: {
        type: 'array',
        description: 'Columns to return after insert (PostgreSQL and SQLite RETURNING, SQL Server OUTPUT).',
        items: { type: 'string', description: 'A column name.' },
      },
    },
    required: ['table', 'rows'],
    additionalProperties: false,
  },
  async execute({ table, rows, columns, dialect, parameterized, returning }) {
    const cols = collectColumns(rows, columns);
    const params = [];
    const placeholder = () => {
      params.length;
      return dialect === 'postgres' ? `$${params.length}` : dialect === 'mssql' ? `@p${params.length}` : '?';
    };
    const values = rows.map(
      (r) =>
        `(${cols
          .map((c) => {
            const v = r[c];
            if (!parameterized) return literal(v, dialect);
            if (v === undefined) return 'NULL';
            params.push(v !== null && typeof v === 'object' ? JSON.stringify(v) : v);
            return placeholder();
          })
          .join(', ')})`,
    );
    const tableSql = table
      .split('.')
      .map((p) => quoteIdent(p, dialect))
      .join('.');
    const colSql = cols.map((c) => quoteIdent(c, dialect)).join(', ');
    let sql = `INSERT INTO ${tableSql} (${colSql})`;
    if (returning?.length && dialect === 'mssql') sql += `\nOUTPUT ${returning.map((c) => 'INSERTED.' + quoteIdent(c, dialect)).join(', ')}`;
    sql += `\nVALUES\n  ${values.join(',\n  ')}`;
    if (returning?.length) {
      if (dialect === 'mysql') throw new Error('MySQL does not support RETURNING; omit "returning" or use another dialect');
      if (dialect !== 'mssql') sql += `\nRETURNING ${returning.map((c) => quoteIdent(c, dialect)).join(', ')}`;
    }
    sql += ';';
    if (dialect === 'mssql' && params.length > 2100) throw new Error('SQL Server allows at most 2100 parameters per statement; insert fewer rows at once');
    if (dialect === 'postgres' && params.length > 65535) throw new Error('PostgreSQL allows at most 65535 parameters per statement; insert fewer rows at once');
    return { sql, params, columns: cols, rowCount: rows.length, dialect };
  },
});

// ----------------------------------------------------------------------------- CREATE TABLE
const TYPE_NAMES = {
  postgres: {
    boolean: 'BOOLEAN',
    integer: 'INTEGER',
    bigint: 'BIGINT',
    float: 'DOUBLE PRECISION',
    date: 'DATE',
    timestamp: 'TIMESTAMPTZ',
    uuid: 'UUID',
    json: 'JSONB',
    text: () => 'TEXT',
  },
  mysql: {
    boolean: 'BOOLEAN',
    integer: 'INT',
    bigint: 'BIGINT',
    float: 'DOUBLE',
    date: 'DATE',
    timestamp: 'DATETIME(3)',
    uuid: 'CHAR(36)',
    json: 'JSON',
    text: (n) => (n <= 255 ? `VARCHAR(${n <= 64 ? 64 : 255})` : 'TEXT'),
  },
  sqlite: {
    boolean: 'INTEGER',
    integer: 'INTEGER',
    bigint: 'INTEGER',
    float: 'REAL',
    date: 'TEXT',
    timestamp: 'TEXT',
    uuid: 'TEXT',
    json: 'TEXT',
    text: () => 'TEXT',
  },
  mssql: {
    boolean: 'BIT',
    integer: 'INT',
    bigint: 'BIGINT',
    float: 'FLOAT',
    date: 'DATE',
    timestamp: 'DATETIMEOFFSET',
    uuid: 'UNIQUEIDENTIFIER',
    json: 'NVARCHAR(MAX)',
    text: (n) => (n <= 255 ? `NVARCHAR(${n <= 64 ? 64 : 255})` : 'NVARCHAR(MAX)'),
  },
};

function kindOfValue(v) {
  if (typeof v === 'boolean') return 'boolean';
  if (typeof v === 'number') return Number.isInteger(v) ? (Math.abs(v) <= 2147483647 ? 'integer' : 'bigint') : 'float';
  if (typeof v === 'object') return 'json';
  if (/^\d{4}-\d{2}-\d{2}$/.test(v) && !Number.isNaN(Date.parse(v))) return 'date';
  if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i.test(v) && !Number.isNaN(Date.parse(v.replace(' ', 'T')))) return 'timestamp';
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(v)) return 'uuid';
  return 'text';
}
function mergeKinds(a, b) {
  if (a === b) return a;
  const nums = ['integer', 'bigint', 'float'];
  if (nums.includes(a) && nums.includes(b)) return nums[Math.max(nums.indexOf(a), nums.indexOf(b))];
  if ((a === 'date' && b === 'timestamp') || (a === 'timestamp' && b === 'date')) return 'timestamp';
  return 'text';
}

export const inferCreateTable = tool({
  description:
    'Infers a SQL CREATE TABLE statement (column names, data types, NOT NULL) from sample JSON rows for PostgreSQL, MySQL, SQLite or SQL Server, detecting integers, decimals, booleans, dates, UUIDs and JSON.',
  inputSchema: {
    type: 'object',
    properties: {
      table: { type: 'string', description: 'Name of the table to create.', minLength: 1, maxLength: 200 },
      rows: {
        type: 'array',
        description: 'Sample records (objects) whose values show the column types.',
        items: { type: 'object', description: 'One sample row.' },
        minItems: 1,
        maxItems: 10000,
      },
      dialect: { type: 'string', description: 'SQL dialect for type names and quoting.', enum: DIALECTS, default: 'postgres' },
      primaryKey: { type: 'string', description: 'Optional column to declare as PRIMARY KEY.', maxLength: 200 },
    },
    required: ['table', 'rows'],
    additionalProperties: false,
  },
  async execute({ table, rows, dialect, primaryKey }) {
    const cols = collectColumns(rows);
    if (primaryKey !== undefined && !cols.includes(primaryKey))
      throw new Error(`primaryKey ${JSON.stringify(primaryKey)} is not a column of the rows; columns are ${cols.join(', ')}`);
    const names = TYPE_NAMES[dialect];
    const columns = cols.map((c) => {
      let kind = null;
      let nullable = false;
      let maxLength = 0;
      for (const r of rows) {
        const v = r[c];
        if (v === null || v === undefined) {
          nullable = true;
          continue;
        }
        const k = kindOfValue(v);
        if (k === 'text') maxLength = Math.max(maxLength, [...String(v)].length);
        kind = kind === null ? k : mergeKinds(kind, k);
      }
      if (kind === 'text')
        for (const r of rows)
          if (r[c] !== null && r[c] !== undefined)
            maxLength = Math.max(maxLength, [...(typeof r[c] === 'object' ? JSON.stringify(r[c]) : String(r[c]))].length);
      kind = kind ?? 'text';
      const type = kind === 'text' ? names.text(maxLength) : names[kind];
      return { name: c, type, inferredKind: kind, nullable: nullable && c !== primaryKey };
    });
    const lines = columns.map(
      (col) => `  ${quoteIdent(col.name, dialect)} ${col.type}${col.name === primaryKey ? ' PRIMARY KEY' : col.nullable ? '' : ' NOT NULL'}`,
    );
    const sql = `CREATE TABLE ${table
      .split('.')
      .map((p) => quoteIdent(p, dialect))
      .join('.')} (\n${lines.join(',\n')}\n);`;
    return { sql, columns, dialect };
  },
});

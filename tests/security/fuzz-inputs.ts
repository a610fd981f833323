/**
 * fast-check generators of hostile input for the fuzz test (fuzz.test.ts): strings Postgres cannot hold or that
 * stretch a column, numbers where strings belong and beyond int32/bigint, arrays where objects belong, deep nesting,
 * prototype-pollution keys; path segments and query strings that a router or a decoder might read two ways.
 */
import fc from 'fast-check';

/** Lone surrogates: JavaScript strings may hold them, UTF-8 and Postgres jsonb cannot. */
const surrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));

export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '\u0000',
    'a\u0000b',
    '\uD800',
    'x\uDC00y',
    '\uDBFF\uDBFF',
    '\uFFFF\uFFFE',
    '😀'.repeat(300),
    'ǅ̸̡̛ͅ'.repeat(50),
    '..',
    '../../etc/passwd',
    '%00',
    '%ff',
    '__proto__',
    'constructor',
    'null',
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    '1e9',
    "'; drop table users; --",
    '\\',
    '%',
    '_',
  ),
  fc.string({ unit: fc.oneof(fc.constant('a'), surrogate, fc.constant('\u0000')), maxLength: 8 }),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.uuid(),
  fc.integer({ min: 1, max: 200_000 }).map((n) => 'x'.repeat(n)),
);

export const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, -1, 1.5, 2 ** 31, 2 ** 31 - 1, -(2 ** 31) - 1, 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, 1e308, -1e308, 5e-324),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

function nest(depth: number, leaf: unknown, asArray: boolean): unknown {
  let v = leaf;
  for (let i = 0; i < depth; i++) v = asArray ? [v] : { a: v };
  return v;
}

/** An own enumerable property, even for `__proto__` (an object literal would set the prototype instead). */
export function withKey(obj: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  return obj;
}

const protoKey = fc.constantFrom('__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty');

export const nastyValue: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    nastyString,
    nastyNumber,
    fc.constantFrom(null, true, false, [], {}),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.oneof(nastyString, protoKey), tie('value'), { maxKeys: 3 }),
    fc.tuple(protoKey, tie('value')).map(([k, v]) => withKey({}, k, v)),
    fc.tuple(fc.integer({ min: 1, max: 90 }), fc.boolean()).map(([d, a]) => nest(d, 'deep', a)),
  ),
})).value;

const taint = fc.constantFrom('\uD800', '\uDFFF', 'x\uDBFFy', '\u0000', '😀', '\u202E', '%00', '\\u0000', "'", '\r\n');

/** The template with some string leaves tainted and some numbers replaced: valid in shape, hostile in content. */
function tainted(template: unknown): fc.Arbitrary<unknown> {
  if (typeof template === 'string')
    return fc.oneof(
      fc.constant(template),
      taint.map((x) => template + x),
      taint.map((x) => x + template),
    );
  if (typeof template === 'number') return fc.oneof(fc.constant(template), nastyNumber);
  if (Array.isArray(template)) return fc.tuple(...template.map(tainted));
  if (template && typeof template === 'object') {
    const entries = Object.entries(template);
    const keyed = entries.map(([k, v]) =>
      fc.tuple(
        fc.oneof(
          { weight: 4, arbitrary: fc.constant(k) },
          taint.map((x) => k + x),
        ),
        tainted(v),
      ),
    );
    return fc.tuple(...keyed).map((kv) => kv.reduce((o, [k, v]) => withKey(o, k, v), {} as Record<string, unknown>));
  }
  return fc.constant(template);
}

/** A body: the route's valid template with some fields broken, dropped or added, or any value at all. */
export function bodyFor(template: Record<string, unknown> | undefined): fc.Arbitrary<unknown> {
  const any = nastyValue;
  if (!template) return any;
  const keys = Object.keys(template);
  const mutated = fc
    .tuple(
      fc.array(fc.constantFrom('keep', 'break', 'drop'), { minLength: keys.length, maxLength: keys.length }),
      fc.array(nastyValue, { minLength: keys.length, maxLength: keys.length }),
      fc.option(fc.tuple(fc.oneof(protoKey, nastyString), nastyValue), { freq: 3 }),
    )
    .map(([modes, values, extra]) => {
      const out: Record<string, unknown> = {};
      keys.forEach((k, i) => {
        if (modes[i] === 'keep') out[k] = template[k];
        else if (modes[i] === 'break') out[k] = values[i];
      });
      if (extra) withKey(out, extra[0], extra[1]);
      return out;
    });
  return fc.oneof({ weight: 3, arbitrary: mutated }, { weight: 3, arbitrary: tainted(template) }, { weight: 1, arbitrary: any });
}

/** Raw body texts that no JSON.stringify produces: escapes Postgres refuses, bad JSON, numbers past a double. */
export const rawBodies: fc.Arbitrary<{ text: string | Buffer; contentType?: string }> = fc.oneof(
  fc.constantFrom(
    { text: '{"name":"\\ud800"}' },
    { text: '{"prompt":"\\udfff\\ud800 ten characters"}' },
    { text: '{"a":"\\u0000"}' },
    { text: '{"rating":1e400}' },
    { text: '{"rating":99999999999999999999999999}' },
    { text: '{"limit":-0}' },
    { text: '{"__proto__":{"admin":true}}' },
    { text: '{"constructor":{"prototype":{"admin":true}}}' },
    { text: '{' },
    { text: '[' },
    { text: 'null' },
    { text: '"string"' },
    { text: '12' },
    { text: '{"a":1}{"b":2}' },
    { text: '{"a":1,"a":2}' },
    { text: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) },
    { text: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xed, 0xa0, 0x80, 0x22, 0x7d]) },
    { text: '{"a":1}', contentType: 'text/plain' },
    { text: '{"a":1}', contentType: 'application/json; charset=latin1' },
    { text: '{"a":1}', contentType: 'application/json; charset' },
    { text: 'a=1', contentType: 'application/x-www-form-urlencoded' },
    { text: '{"a":1}', contentType: '' },
  ),
  fc.integer({ min: 60, max: 80 }).map((d) => ({ text: '['.repeat(d) + ']'.repeat(d) })),
  fc.integer({ min: 60, max: 80 }).map((d) => ({ text: '{"a":'.repeat(d) + '1' + '}'.repeat(d) })),
);

/** Percent-encoded (or deliberately raw) path segments. */
export const pathSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '..',
    '.',
    '%2e%2e',
    '%00',
    'a%00b',
    '%ff',
    '%ED%A0%80',
    '%C0%AE',
    '%2f',
    'a%2fb',
    '%5c',
    '%',
    '%zz',
    '-1',
    '1e9',
    '9'.repeat(400),
    'NaN',
    '__proto__',
    'constructor',
    '00000000-0000-0000-0000-000000000000',
    '00000000-0000-0000-0000-00000000000g',
    '{00000000-0000-0000-0000-000000000000}',
    '%F0%9F%98%80',
    'caf%C3%A9',
    '%E2%80%AE',
  ),
  fc.uuid(),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 30 }).map(encodeURIComponent),
  fc.integer({ min: 1, max: 6000 }).map((n) => 'a'.repeat(n)),
);

const queryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('-1', '1e9', '1e400', 'abc', 'NaN', 'Infinity', '1.5', '', '0x10', '+1', '%201', '0', '-0', '01'),
  fc.constantFrom('9'.repeat(30), '2147483648', '9223372036854775808', '%00', '%ff', '%ED%A0%80', '%', 'true', 'false', 'week'),
  fc.integer().map(String),
  fc.string({ unit: 'grapheme', maxLength: 30 }).map(encodeURIComponent),
  fc.integer({ min: 1, max: 5000 }).map((n) => 'q'.repeat(n)),
);

/** A query string: the route's own keys and a few hostile ones, sometimes repeated (which makes an array). */
export function queryFor(keys: string[]): fc.Arbitrary<string> {
  const key = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...keys, 'limit', 'offset') },
    { weight: 1, arbitrary: fc.constantFrom('__proto__', 'constructor', 'limit[]', 'a[b]', '%00', '') },
  );
  return fc.array(fc.tuple(key, queryValue), { maxLength: 4 }).map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'));
}

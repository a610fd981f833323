// @ts-check
// Compact JSON Schema validator for tool params inside the sandbox (no dependencies available there).
// Covers the keywords tool schemas use in practice: type, enum, const, required, properties, additionalProperties,
// items, min/max(Items|Length|imum), exclusive bounds, multipleOf, pattern, basic formats, anyOf/oneOf/allOf/not.
// Unknown keywords (e.g. $ref) are ignored: the API validates fully with ajv before queueing; this is a second line.
'use strict';

/**
 * A JSON Schema as a tool package writes it. Nothing checks it before this file reads it: a keyword of another type
 * than the one noted here compares and tests as JavaScript does (the API's ajv validated the params already).
 * @typedef {{
 *   type?: string | string[],
 *   nullable?: boolean,
 *   enum?: unknown[],
 *   const?: unknown,
 *   minLength?: number,
 *   maxLength?: number,
 *   pattern?: string,
 *   format?: string,
 *   minimum?: number,
 *   maximum?: number,
 *   exclusiveMinimum?: number | boolean,
 *   exclusiveMaximum?: number | boolean,
 *   multipleOf?: number,
 *   minItems?: number,
 *   maxItems?: number,
 *   uniqueItems?: boolean,
 *   prefixItems?: SchemaLike[],
 *   items?: SchemaLike,
 *   required?: string[],
 *   properties?: Record<string, SchemaLike>,
 *   additionalProperties?: SchemaLike,
 *   minProperties?: number,
 *   maxProperties?: number,
 *   allOf?: SchemaLike[],
 *   anyOf?: SchemaLike[],
 *   oneOf?: SchemaLike[],
 *   not?: SchemaLike,
 * }} JsonSchema
 */
/** What may stand where a schema is expected: a schema, `true`/`false`, or anything else (ignored). @typedef {JsonSchema | boolean | unknown} SchemaLike */

/** @param {unknown} v */
const kindOf = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v === 'number' && Number.isInteger(v) ? 'integer' : typeof v);

/**
 * @param {unknown} v
 * @returns {v is Record<string, unknown>}
 */
const isObject = (v) => kindOf(v) === 'object';

/**
 * A schema is any plain object; its keywords are read as JsonSchema says.
 * @param {unknown} v
 * @returns {v is JsonSchema}
 */
const isSchema = (v) => isObject(v);

/** @type {Record<string, RegExp>} */
const FORMATS = {
  email: /^[^\s@]+@[^\s@]+\.[^\s@]+$/,
  uri: /^[a-zA-Z][a-zA-Z0-9+.-]*:[^\s]*$/,
  url: /^[a-zA-Z][a-zA-Z0-9+.-]*:\/\/[^\s]+$/,
  uuid: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  date: /^\d{4}-\d{2}-\d{2}$/,
  time: /^\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?$/,
  'date-time': /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/,
  ipv4: /^(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}$/,
  hostname: /^(?=.{1,253}$)([a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)(\.[a-zA-Z0-9]([a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*$/,
};

/** @param {string} path */
const at = (path) => (path === '' ? 'params' : `params${path}`);

/**
 * @param {unknown} type
 * @param {unknown} value
 */
function typeMatches(type, value) {
  const kind = kindOf(value);
  return type === kind || (type === 'number' && kind === 'integer');
}

/**
 * @param {JsonSchema} schema
 * @param {unknown} value
 * @param {string} path
 * @param {string[]} errors
 */
function checkScalar(schema, value, path, errors) {
  if (typeof value === 'string') {
    const length = [...value].length;
    if (schema.minLength !== undefined && length < schema.minLength) errors.push(`${at(path)} must have at least ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && length > schema.maxLength) errors.push(`${at(path)} must have at most ${schema.maxLength} characters`);
    if (typeof schema.pattern === 'string') {
      let re;
      try {
        re = new RegExp(schema.pattern, 'u');
      } catch {
        re = undefined;
      }
      if (re && !re.test(value)) errors.push(`${at(path)} must match pattern ${schema.pattern}`);
    }
    // Only the formats above: a name such as `constructor` is an unknown format (ignored), not Object.prototype's member.
    const format = schema.format !== undefined && Object.hasOwn(FORMATS, schema.format) ? FORMATS[schema.format] : undefined;
    if (format && !format.test(value)) errors.push(`${at(path)} must be a valid ${schema.format}`);
  }
  if (typeof value === 'number') {
    if (schema.minimum !== undefined && value < schema.minimum) errors.push(`${at(path)} must be >= ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum) errors.push(`${at(path)} must be <= ${schema.maximum}`);
    if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) errors.push(`${at(path)} must be > ${schema.exclusiveMinimum}`);
    if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) errors.push(`${at(path)} must be < ${schema.exclusiveMaximum}`);
    if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0 && !Number.isInteger(value / schema.multipleOf)) {
      errors.push(`${at(path)} must be a multiple of ${schema.multipleOf}`);
    }
  }
}

/**
 * @param {JsonSchema} schema
 * @param {unknown[]} value
 * @param {string} path
 * @param {string[]} errors
 */
function checkArray(schema, value, path, errors) {
  if (schema.minItems !== undefined && value.length < schema.minItems) errors.push(`${at(path)} must have at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined && value.length > schema.maxItems) errors.push(`${at(path)} must have at most ${schema.maxItems} items`);
  if (schema.uniqueItems === true) {
    const seen = new Set(value.map((v) => JSON.stringify(v)));
    if (seen.size !== value.length) errors.push(`${at(path)} must not contain duplicate items`);
  }
  if (Array.isArray(schema.prefixItems)) {
    schema.prefixItems.forEach((s, i) => i < value.length && check(s, value[i], `${path}[${i}]`, errors));
  }
  if (isObject(schema.items)) value.forEach((item, i) => check(schema.items, item, `${path}[${i}]`, errors));
}

/**
 * @param {JsonSchema} schema
 * @param {Record<string, unknown>} value
 * @param {string} path
 * @param {string[]} errors
 */
function checkObject(schema, value, path, errors) {
  const props = isObject(schema.properties) ? schema.properties : {};
  for (const key of Array.isArray(schema.required) ? schema.required : []) {
    if (value[key] === undefined) errors.push(`${at(path)} must have required property '${key}'`);
  }
  for (const [key, item] of Object.entries(value)) {
    if (item === undefined) continue;
    if (Object.hasOwn(props, key)) check(props[key], item, `${path}.${key}`, errors);
    else if (schema.additionalProperties === false) errors.push(`${at(path)} must not have additional property '${key}'`);
    else if (isObject(schema.additionalProperties)) check(schema.additionalProperties, item, `${path}.${key}`, errors);
  }
  const count = Object.keys(value).length;
  if (schema.minProperties !== undefined && count < schema.minProperties) errors.push(`${at(path)} must have at least ${schema.minProperties} properties`);
  if (schema.maxProperties !== undefined && count > schema.maxProperties) errors.push(`${at(path)} must have at most ${schema.maxProperties} properties`);
}

/**
 * @param {SchemaLike} schema
 * @param {unknown} value
 * @param {string} path
 * @param {string[]} errors
 */
function check(schema, value, path, errors) {
  if (schema === false) {
    errors.push(`${at(path)} is not allowed`);
    return;
  }
  if (!isSchema(schema)) return;
  if (schema.type !== undefined) {
    const types = Array.isArray(schema.type) ? schema.type : [schema.type];
    if (!types.some((t) => typeMatches(t, value))) {
      errors.push(`${at(path)} must be ${types.join(' or ')}`);
      return;
    }
  } else if (schema.nullable === true && value === null) return;
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    errors.push(`${at(path)} must be one of ${schema.enum.map((e) => JSON.stringify(e)).join(', ')}`);
  }
  if (schema.const !== undefined && JSON.stringify(schema.const) !== JSON.stringify(value)) {
    errors.push(`${at(path)} must be ${JSON.stringify(schema.const)}`);
  }
  checkScalar(schema, value, path, errors);
  if (Array.isArray(value)) checkArray(schema, value, path, errors);
  if (isObject(value)) checkObject(schema, value, path, errors);
  if (Array.isArray(schema.allOf)) schema.allOf.forEach((s) => check(s, value, path, errors));
  /** @param {SchemaLike[]} list */
  const passing = (list) => list.filter((s) => validate(s, value, path).length === 0).length;
  if (Array.isArray(schema.anyOf) && passing(schema.anyOf) === 0) errors.push(`${at(path)} must match a schema in anyOf`);
  if (Array.isArray(schema.oneOf) && passing(schema.oneOf) !== 1) errors.push(`${at(path)} must match exactly one schema in oneOf`);
  if (isObject(schema.not) && validate(schema.not, value, path).length === 0) errors.push(`${at(path)} must not match schema in not`);
}

/**
 * Returns a list of error messages (empty when valid).
 * @param {SchemaLike} schema
 * @param {unknown} value
 * @returns {string[]}
 */
function validate(schema, value, path = '') {
  /** @type {string[]} */
  const errors = [];
  check(schema, value, path, errors);
  return errors;
}

module.exports = { validate };

/**
 * Validates execution params against a tool's JSON Schema (ajv, compiled once per schema) and reports failures as
 * the contract's `details`. Patterns run on a linear-time engine (safe-regex.ts).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { ErrorDetail } from '../infra/errors.js';
import { linearRegExpEngine } from '../text/safe-regex.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = addFormats(new Ajv({ allErrors: true, strict: false, validateSchema: false, code: { regExp: linearRegExpEngine } }));
const compiled = new Map<string, ValidateFunction | Error>();

export function validateAgainstSchema(schema: unknown, value: unknown, prefix = 'params'): ErrorDetail[] {
  const key = JSON.stringify(schema);
  let validate = compiled.get(key);
  if (!validate) {
    try {
      validate = ajv.compile(schema as object);
    } catch (err) {
      validate = err as Error;
    }
    if (compiled.size > 5000) compiled.clear();
    compiled.set(key, validate);
  }
  if (validate instanceof Error) return []; // an uncompilable schema: the guest validates what it can
  if (validate(value)) return [];
  return (validate.errors ?? []).map((e) => {
    const at = e.instancePath ? `${prefix}${e.instancePath.replace(/\//g, '.')}` : prefix;
    if (e.keyword === 'required') return { path: `${at}.${(e.params as { missingProperty: string }).missingProperty}`, message: 'is required' };
    if (e.keyword === 'additionalProperties') {
      return { path: `${at}.${(e.params as { additionalProperty: string }).additionalProperty}`, message: 'is not allowed' };
    }
    return { path: at, message: e.message ?? 'is invalid' };
  });
}

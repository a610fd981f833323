/**
 * Validation at the edge: zod schemas for params, query and body; failures become the contract's 400 with details.
 */
import { z } from 'zod';
import { errors } from '../core/infra/errors.js';

export function validate<S extends z.ZodType>(schema: S, value: unknown, where: 'body' | 'query' | 'params'): z.infer<S> {
  // Params and query are always objects; a body is `{}` when none was sent, but a JSON `null` sent is refused as such.
  const parsed = schema.safeParse(value === undefined ? {} : value);
  if (parsed.success) return parsed.data;
  const details = parsed.error.issues.map((i) => ({
    path: [where, ...i.path.map(String)].join('.'),
    message: i.message,
  }));
  throw errors.validation(`Invalid ${where}: ${details.map((d) => `${d.path}: ${d.message}`).join('; ')}`, details);
}

/** A non-negative integer given as a query string. */
const queryInt = z
  .string()
  .regex(/^\d+$/, 'must be a non-negative integer')
  .transform((s) => Number.parseInt(s, 10));

/** Past 2^53 - 1 a number is no longer read exactly, and soon no longer fits Postgres' bigint (a 500 before). */
const queryOffset = queryInt.pipe(z.number().max(Number.MAX_SAFE_INTEGER, `must be at most ${Number.MAX_SAFE_INTEGER}`));

/**
 * A `limit` per the contract: a non-integer or a negative is 400 (so is one below `min`, where a route has one), one
 * above `max` is clamped to it.
 */
export function limitQuery(defaultLimit: number, max: number, min = 0) {
  const atLeast = min > 0 ? queryInt.pipe(z.number().min(min, `must be at least ${min}`)) : queryInt;
  return atLeast.optional().transform((v) => Math.min(v ?? defaultLimit, max));
}

/** limit/offset per the contract: non-integers and negatives are 400, a limit above max is clamped. */
export function paging(defaultLimit: number, max: number) {
  return {
    limit: limitQuery(defaultLimit, max),
    offset: queryOffset.optional().transform((v) => v ?? 0),
  };
}

/**
 * The longest free-text query (`q`) a route takes. The contract asks for at least 2,000 characters, since agents send
 * whole task descriptions; 4,000 is what a scenario prompt may be, so any scenario prompt can be searched with.
 */
export const QUERY_TEXT_MAX = 4000;

export function pageOf<T>(rows: T[], limit: number, offset: number) {
  return { items: rows.slice(0, limit), pagination: { limit, offset, hasMore: rows.length > limit } };
}

export { singleLine } from '../core/text/single-line.js';

export const booleanQuery = z.enum(['true', 'false']).transform((v) => v === 'true');

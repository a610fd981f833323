/**
 * The contract's envelopes as schemas, for operation responses: `{ success: true, data }`, with `pagination` on
 * pages, `message` on deletes, and the bare `{ data, pagination }` of `scenarios.list` and `scenarioRuns.list`.
 */
import { z } from 'zod';

/** An ISO 8601 UTC timestamp as we write them (`Date#toISOString`). */
export const timestamp = z.string().meta({ format: 'date-time', example: '2026-11-24T12:00:00.000Z' });
export const nullableTimestamp = timestamp.nullable();
export const uuid = z.string().meta({ format: 'uuid' });

export const pagination = z.object({
  limit: z.number().int().min(0),
  offset: z.number().int().min(0),
  hasMore: z.boolean(),
});

export function ok<T extends z.ZodType>(data: T) {
  return z.object({ success: z.literal(true), data });
}

export function okPage<T extends z.ZodType>(item: T) {
  return z.object({ success: z.literal(true), data: z.array(item), pagination });
}

/** `scenarios.list` and `scenarioRuns.list` (a scenario's run history): `data` and `pagination` without `success`. */
export function barePage<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), pagination });
}

export const okMessage = z.object({ success: z.literal(true), message: z.string() });

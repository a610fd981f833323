/**
 * What ties log lines together: the request id of the HTTP request (or of the request that queued the job) being
 * served, and the trace and span ids when tracing is on. The API's request-id middleware and the worker's job wrapper
 * set the request id for everything that runs below them; the logger (core/infra/logger.ts) adds these fields to every line.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { isSpanContextValid, trace } from '@opentelemetry/api';

const requests = new AsyncLocalStorage<string>();

/** Runs `fn` (and everything it starts) with `reqId` as the request id of its log lines. */
export function withRequestId<T>(reqId: string | undefined, fn: () => T): T {
  return reqId ? requests.run(reqId, fn) : fn();
}

/** The request id being served, if any. */
export function currentRequestId(): string | undefined {
  return requests.getStore();
}

export interface LogFields {
  reqId?: string;
  traceId?: string;
  spanId?: string;
}

/** The fields every log line gets: the request id, and the active span's trace and span ids (tracing on only). */
export function logFields(): LogFields {
  const reqId = requests.getStore();
  const span = trace.getActiveSpan()?.spanContext();
  const traced = span && isSpanContextValid(span) ? { traceId: span.traceId, spanId: span.spanId } : {};
  return reqId ? { reqId, ...traced } : traced;
}

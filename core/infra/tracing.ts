/**
 * Traces with the official OpenTelemetry SDK, exported by OTLP/HTTP (JSON) when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 * Off otherwise: the SDK is not even loaded, and every helper here runs its function with no span (the cost is a
 * map lookup). One trace runs from the HTTP request (api/middleware/tracing.ts) through the job — its payload carries
 * the W3C trace context and the request id (`trace`, see jobTrace) — to the sandbox call (worker/run-execution.ts).
 *
 * Each process role has its own tracer provider and service name (`toolshed-api`, `toolshed-worker`), so that the
 * all-in-one `npm start` still tells the two apart; the first one started registers the process's context manager
 * and W3C propagator. Spans carry ids, names, versions, statuses and counts only: never params, results, env values,
 * keys or prompts, and an error is recorded by its code or class, never its message.
 */
import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { z } from 'zod';
import type { Config } from './config.js';
import { currentRequestId, withRequestId } from './log-context.js';

export { SpanKind, SpanStatusCode };
export type ServiceName = 'toolshed-api' | 'toolshed-worker';

export interface Tracing {
  readonly on: boolean;
  /** Sends the spans still buffered and stops the provider. */
  close(): Promise<void>;
}

const tracers = new Map<ServiceName, Tracer>();
let registered = false;

export async function startTracing(
  config: Pick<Readonly<Config>, 'OTEL_EXPORTER_OTLP_ENDPOINT' | 'OTEL_EXPORTER_OTLP_HEADERS'>,
  service: ServiceName,
): Promise<Tracing> {
  const endpoint = config.OTEL_EXPORTER_OTLP_ENDPOINT;
  if (!endpoint) return { on: false, close: async () => undefined };
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, { ATTR_SERVICE_NAME }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/semantic-conventions'),
  ]);
  // The URL is given, so the exporter reads no OTEL_* variable of its own: what it does is what config.ts parsed.
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces`, headers: config.OTEL_EXPORTER_OTLP_HEADERS });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: service }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  if (!registered) {
    provider.register(); // AsyncLocalStorage context manager and the W3C trace-context propagator, once per process
    registered = true;
  }
  tracers.set(service, provider.getTracer('toolshed'));
  return {
    on: true,
    async close() {
      tracers.delete(service);
      await provider.shutdown();
    },
  };
}

/** Whether `service` is tracing in this process. */
export function isTracing(service: ServiceName): boolean {
  return tracers.has(service);
}

export interface SpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent (default: the active context). */
  parent?: Context;
}

/**
 * Runs `fn` in a new active span of `service` (or with no span when it is not tracing). A throw marks the span as an
 * error with the error's code or class name only: messages may quote what a tool or a user wrote.
 */
export async function inSpan<T>(service: ServiceName, name: string, o: SpanOptions, fn: (span: Span | undefined) => Promise<T>): Promise<T> {
  const tracer = tracers.get(service);
  if (!tracer) return fn(undefined);
  return tracer.startActiveSpan(name, { kind: o.kind ?? SpanKind.INTERNAL, attributes: o.attributes }, o.parent ?? context.active(), async (span) => {
    try {
      return await fn(span);
    } catch (err) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorLabel(err) });
      throw err;
    } finally {
      span.end();
    }
  });
}

function errorLabel(err: unknown): string {
  const code = (err as { code?: unknown })?.code;
  if (typeof code === 'string' && /^[A-Z0-9_]{1,64}$/.test(code)) return code;
  return err instanceof Error ? err.constructor.name : 'error';
}

/** What a job's payload carries of the request that queued it: its id and W3C trace context (tracing on). */
export const jobTraceSchema = z.object({
  reqId: z.string().max(64).optional(),
  traceparent: z.string().max(64).optional(),
  tracestate: z.string().max(512).optional(),
});
export type JobTrace = z.infer<typeof jobTraceSchema>;

/** The `trace` field of a job queued now (inside a request, or a traced job): empty when there is nothing to carry. */
export function jobTrace(): { trace?: JobTrace } {
  const reqId = currentRequestId();
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier); // no propagator is registered while tracing is off: nothing
  const trace: JobTrace = {
    ...(reqId ? { reqId } : {}),
    ...(carrier.traceparent ? { traceparent: carrier.traceparent } : {}),
    ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}),
  };
  return Object.keys(trace).length ? { trace } : {};
}

/**
 * Runs a job with the request id its payload carries for its log lines and, when the worker traces, in a span of the
 * trace its payload continues (a new trace when it carries none).
 */
export function continueJobTrace<T>(carried: unknown, name: string, attributes: Attributes, fn: () => Promise<T>): Promise<T> {
  const parsed = jobTraceSchema.safeParse(carried);
  const trace = parsed.success ? parsed.data : undefined;
  const parent = trace?.traceparent ? propagation.extract(ROOT_CONTEXT, trace) : ROOT_CONTEXT;
  return withRequestId(trace?.reqId, () => inSpan('toolshed-worker', name, { kind: SpanKind.CONSUMER, attributes, parent }, fn));
}

/**
 * One span per HTTP request when the API traces (core/infra/tracing.ts), named by method and route template
 * (`POST /api/tools/:id/execute`), so that everything the request does — the job it queues included — is in its trace.
 * Outermost, so that the request's own log line (request-id.ts) carries its trace id. Only the route template, the
 * status and the request id are recorded: never the path as sent, the query, headers or body.
 */
import type { Context, Next } from 'koa';
import { isTracing, inSpan, SpanKind, SpanStatusCode } from '../../core/infra/tracing.js';

export function traceRequests() {
  return async (ctx: Context, next: Next) => {
    if (!isTracing('toolshed-api')) return next();
    await inSpan('toolshed-api', ctx.method, { kind: SpanKind.SERVER, attributes: { 'http.request.method': ctx.method } }, async (span) => {
      try {
        await next();
      } finally {
        const route = (ctx as Context & { _matchedRoute?: string | RegExp })._matchedRoute;
        if (typeof route === 'string') span?.updateName(`${ctx.method} ${route}`).setAttribute('http.route', route);
        span?.setAttribute('http.response.status_code', ctx.status);
        if (ctx.state.requestId) span?.setAttribute('toolshed.request_id', String(ctx.state.requestId));
        if (ctx.status >= 500) span?.setStatus({ code: SpanStatusCode.ERROR });
      }
    });
  };
}

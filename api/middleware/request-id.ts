/** A request id on every request (X-Request-Id, taken from the client when sane) and one log line per response. */
import type { Context, Next } from 'koa';
import crypto from 'node:crypto';
import type { Logger } from '../../core/infra/logger.js';
import { withRequestId } from '../../core/infra/log-context.js';

export function requestId(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    const given = ctx.get('x-request-id');
    const id = /^[\w.-]{1,64}$/.test(given) ? given : crypto.randomUUID();
    ctx.state.requestId = id;
    ctx.set('X-Request-Id', id);
    const start = performance.now();
    try {
      // Every log line written while serving the request carries its id (core/infra/log-context.ts), the job it queues too.
      await withRequestId(id, next);
    } finally {
      logger.debug({ reqId: id, method: ctx.method, path: ctx.path, status: ctx.status, ms: Math.round(performance.now() - start) }, 'request');
    }
  };
}

/**
 * The first middleware: renders every error in the contract's shape. Shape A everywhere, shape B on scenario
 * operations (as their declarations say: `shapeOf`), except authentication and rate-limit errors, which are shape A everywhere.
 * Anything unknown becomes a logged 500 with no stack or secret in the body.
 */
import type { Context, Next } from 'koa';
import { AppError, errors, fromPgError } from '../../core/infra/errors.js';
import type { Logger } from '../../core/infra/logger.js';
import { isConnectionError } from '../../core/infra/db.js';

const SHAPE_B_WORDS: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  429: 'Rate Limit Exceeded',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
};

/** Errors that keep shape A even on scenario routes. */
const ALWAYS_A = new Set(['RATE_LIMITED', 'GONE']);

export function errorMiddleware(logger: Logger, shapeOf: (ctx: Context, status: number) => string | undefined = () => undefined) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) throw errors.notFound('Route', `${ctx.method} ${ctx.path}`);
      // The router's own answers (no body): 405 for a method a path does not take, 501 for a method it does not know.
      if ((ctx.status === 405 || ctx.status === 501) && ctx.body === undefined) throw errors.methodNotAllowed(ctx.method, ctx.response.get('Allow'));
    } catch (err) {
      const appErr = toAppError(err, ctx, logger);
      if (ctx.headerSent || !ctx.writable) {
        logger.warn({ reqId: ctx.state.requestId, code: appErr.code }, 'error after response started');
        return;
      }
      ctx.status = appErr.status;
      ctx.state.errorCode = appErr.code; // what metrics count refusals by, whatever the body's shape
      for (const [k, v] of Object.entries(appErr.headers ?? {})) ctx.set(k, v);
      const shape = ctx.state.authError || ALWAYS_A.has(appErr.code) ? 'A' : shapeOf(ctx, appErr.status);
      if (shape === 'jsonrpc' && JSONRPC_STATUSES.has(appErr.status)) ctx.body = renderJsonRpc(appErr);
      else if (shape === 'registry') ctx.body = { error: appErr.message };
      else ctx.body = shape === 'B' ? renderB(appErr) : renderA(appErr);
    }
  };
}

/** What the MCP endpoint answers as JSON-RPC: refusals of the request's body or form. */
const JSONRPC_STATUSES = new Set([400, 413, 415]);
/** JSON-RPC 2.0: -32700 Parse error (not JSON), -32600 Invalid Request (anything else wrong with the message). */
function renderJsonRpc(e: AppError) {
  const parse = e.details?.some((d) => d.path === 'body' && /not valid (JSON|UTF-8)/.test(d.message)) ?? false;
  return { jsonrpc: '2.0', id: null, error: { code: parse ? -32700 : -32600, message: `${parse ? 'Parse error' : 'Invalid Request'}: ${e.message}` } };
}

function renderA(e: AppError) {
  return {
    success: false,
    error: { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) },
    ...(e.extra ?? {}),
  };
}

function renderB(e: AppError) {
  return {
    success: false,
    error: SHAPE_B_WORDS[e.status] ?? 'Error',
    message: e.message,
    ...(e.details ? { details: e.details } : {}),
    ...(e.extra ?? {}),
  };
}

function toAppError(err: unknown, ctx: Context, logger: Logger): AppError {
  if (err instanceof AppError) return err;
  const pgErr = fromPgError(err);
  if (pgErr) return pgErr;
  const status = (err as { status?: number })?.status;
  if (status === 413) return errors.payloadTooLarge();
  if (status === 415) return errors.unsupportedMediaType();
  if (status === 400) return errors.validation((err as Error).message);
  if (isConnectionError(err)) {
    logger.warn({ reqId: ctx.state.requestId, err: (err as Error).message }, 'database unreachable');
    return errors.unavailable();
  }
  logger.error({ reqId: ctx.state.requestId, err }, 'unhandled error');
  return errors.internal();
}

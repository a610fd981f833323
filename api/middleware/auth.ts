/**
 * Authentication: `Authorization: Bearer <key>`. A given key must be valid (else 401 in shape A, everywhere);
 * routes decide whether a key is required (requireCaller) and who may act (owner checks).
 * Admin routes take the ADMIN_TOKEN instead of a key.
 */
import type { Context, Next } from 'koa';
import { errors } from '../../core/errors.js';
import { API_KEY_PATTERN, hashApiKey, safeEqual } from '../../core/crypto.js';
import type { Caller } from '../../core/types.js';
import type { AppDeps } from '../deps.js';

function bearer(ctx: Context): string | undefined {
  const header = ctx.get('authorization');
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) {
    ctx.state.authError = true;
    throw errors.unauthorized('Authorization header must be "Bearer <API_KEY>"');
  }
  return m[1];
}

export function authMiddleware(deps: AppDeps) {
  return async (ctx: Context, next: Next) => {
    if (ctx.path.startsWith('/api/admin/')) {
      const token = bearer(ctx);
      if (!token || !deps.config.ADMIN_TOKEN || !safeEqual(token, deps.config.ADMIN_TOKEN)) {
        ctx.state.authError = true;
        throw errors.unauthorized('A valid admin token is required');
      }
      ctx.state.admin = true;
      return next();
    }
    const key = bearer(ctx);
    if (key !== undefined) {
      const caller = API_KEY_PATTERN.test(key) ? await deps.callers.get(hashApiKey(key)) : undefined;
      if (!caller) {
        ctx.state.authError = true;
        throw errors.unauthorized('Unknown or revoked API key');
      }
      ctx.state.caller = caller;
    }
    return next();
  };
}

export function callerOf(ctx: Context): Caller | undefined {
  return ctx.state.caller as Caller | undefined;
}

/** The caller, or a 401 (shape of the route: A, or B on scenario routes). */
export function requireCaller(ctx: Context): Caller {
  const caller = callerOf(ctx);
  if (!caller) throw errors.unauthorized();
  return caller;
}

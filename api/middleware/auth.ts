/**
 * Authentication: `Authorization: Bearer <token>`. The token is classified once, whatever the path: an API key
 * (`tsk_…`, looked up by hash) makes `ctx.state.caller`; the operator's ADMIN_TOKEN makes `ctx.state.admin`; anything
 * else is a 401 in shape A. No decision here depends on the path, so no spelling of a path can change it — except for
 * an OAuth access token, which acts as its user only on the collection MCP URL it was issued for (RFC 8707).
 * A rejected credential costs a point of the client address's anonymous budget first (with the X-RateLimit-*
 * headers), so guessing keys is rate limited like any other request, and its 429 comes before the 401.
 * Authorization is the handlers' own: requireCaller / requireAdmin, and owner checks in core.
 */
import type { Context, Next } from 'koa';
import { errors } from '../../core/infra/errors.js';
import { API_KEY_PATTERN, hashApiKey, safeEqual } from '../../core/infra/crypto.js';
import type { Caller } from '../../core/types.js';
import type { AppDeps } from '../deps.js';
import { charge } from './rate-limit.js';
import { callerIdentity } from './identity.js';
import { oauthCaller } from '../oauth/provider.js';

function bearer(ctx: Context): string | null | undefined {
  const header = ctx.get('authorization');
  if (!header) return undefined;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1] : null;
}

export function authMiddleware(deps: AppDeps) {
  const reject = async (ctx: Context, message: string): Promise<never> => {
    ctx.state.authError = true;
    await charge(ctx, deps.rateLimiter, callerIdentity(ctx), 'free');
    throw errors.unauthorized(message);
  };
  return async (ctx: Context, next: Next) => {
    const token = bearer(ctx);
    if (token === undefined) return next();
    if (token === null) return reject(ctx, 'Authorization header must be "Bearer <API_KEY>"');
    if (API_KEY_PATTERN.test(token)) {
      const caller = await deps.callers.get(hashApiKey(token));
      if (!caller) return reject(ctx, 'Unknown or revoked API key');
      ctx.state.caller = caller;
      return next();
    }
    if (deps.config.ADMIN_TOKEN && safeEqual(token, deps.config.ADMIN_TOKEN)) {
      ctx.state.admin = true;
      return next();
    }
    // An OAuth access token (api/oauth/provider.ts): valid only on the collection MCP URL it was issued for.
    const oauth = await oauthCaller(deps, ctx, token);
    if (oauth?.refused) return reject(ctx, oauth.refused);
    if (oauth?.caller) {
      ctx.state.caller = oauth.caller;
      return next();
    }
    return reject(ctx, 'Unknown or revoked API key');
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

/** Every operator handler calls this first: the admin token, and nothing else, opens it. */
export function requireAdmin(ctx: Context): void {
  if (ctx.state.admin === true) return;
  ctx.state.authError = true;
  throw errors.unauthorized('A valid admin token is required');
}

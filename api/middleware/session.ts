/**
 * Browser sessions: when a request carries no Authorization header, a valid session cookie makes `ctx.state.caller`
 * (the same Caller an API key makes, with keyId null). Any request other than GET/HEAD/OPTIONS authenticated this way
 * must carry the session's CSRF token in `X-CSRF-Token` (403 otherwise); requests with an API key are untouched.
 * An unknown or expired cookie is ignored: the request is anonymous, and the cookie is cleared.
 */
import type { Context, Next } from 'koa';
import { errors } from '../../core/infra/errors.js';
import { safeEqual } from '../../core/infra/crypto.js';
import { charge } from './rate-limit.js';
import { csrfTokenOf, findSessionCaller, SESSION_COOKIE } from '../../core/auth/sessions.js';
import type { AppDeps } from '../deps.js';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

export interface SessionState {
  id: string;
  token: string;
  csrfToken: string;
}

export function setSessionCookie(ctx: Context, token: string, expires: Date): void {
  ctx.cookies.set(SESSION_COOKIE, token, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: '/', expires, overwrite: true });
}

export function clearSessionCookie(ctx: Context): void {
  ctx.cookies.set(SESSION_COOKIE, '', { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: '/', expires: new Date(0), overwrite: true });
}

export function sessionOf(ctx: Context): SessionState | undefined {
  return ctx.state.session as SessionState | undefined;
}

export function sessionMiddleware(deps: AppDeps) {
  return async (ctx: Context, next: Next) => {
    if (ctx.get('authorization') || ctx.state.caller || ctx.state.admin) return next();
    const token = ctx.cookies.get(SESSION_COOKIE);
    if (!token) return next();
    const found = await findSessionCaller(deps.db, token);
    if (!found) {
      clearSessionCookie(ctx);
      return next();
    }
    const csrfToken = csrfTokenOf(token);
    if (!SAFE_METHODS.has(ctx.method) && !safeEqual(ctx.get('x-csrf-token'), csrfToken)) {
      ctx.state.authError = true;
      // Refused before the rate limiter runs: it still costs the signed-in user a point and says so in the headers.
      await charge(ctx, deps.rateLimiter, `user:${found.caller.userId}`, found.caller.tier);
      throw errors.forbidden('A signed-in browser request that changes something must carry its X-CSRF-Token header');
    }
    ctx.state.caller = found.caller;
    ctx.state.session = { id: found.sessionId, token, csrfToken } satisfies SessionState;
    return next();
  };
}

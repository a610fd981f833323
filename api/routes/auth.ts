/**
 * Accounts for people (the web app): sign-up (SIGNUP), sign-in, sign-out, sign-out everywhere, who am I; and the
 * operator's single-use invitations. A session is a cookie (HttpOnly, SameSite=Lax, Secure over TLS); its CSRF token
 * comes back in the body of signup, login and me. Errors are shape A.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { pageOf, paging, validate } from '../validate.js';
import { requireAdmin, requireCaller } from '../middleware/auth.js';
import { clearSessionCookie, sessionOf, setSessionCookie } from '../middleware/session.js';
import { addressBucket } from '../middleware/identity.js';
import { errors } from '../../core/errors.js';
import { checkPassword, loginSchema, signupSchema, signUp } from '../../core/auth/accounts.js';
import { createSession, csrfTokenOf, deleteSession, deleteUserSessions } from '../../core/auth/sessions.js';
import { consumeAttempt } from '../../core/auth/login-throttle.js';
import { createInvitation } from '../../core/auth/invitations.js';
import { listOwnCollections } from '../../core/auth/my-collections.js';
import { quotaLimit, quotaResetAt, remainingOf } from '../../core/scenario-quota.js';
import { usedToday } from '../../core/repos/scenario-quota.js';
import type { UserRow } from '../../core/repos/users.js';
import { collectionListItem } from '../collection-mappers.js';

const invitationBody = z.object({ note: z.string().max(200).optional(), days: z.number().int().min(1).max(90).default(7) }).strict();
const pageQuery = z.object(paging(50, 100));

const userOut = (u: Pick<UserRow, 'id' | 'username' | 'name' | 'tier'>) => ({ id: u.id, username: u.username, name: u.name, tier: u.tier });

async function throttle(ctx: Context, deps: AppDeps, account?: string) {
  const buckets = [{ key: `ip:${addressBucket(ctx.ip)}`, max: deps.config.LOGIN_ATTEMPTS_PER_IP }];
  if (account) buckets.push({ key: `user:${account.toLowerCase()}`, max: deps.config.LOGIN_ATTEMPTS_PER_ACCOUNT });
  const d = await consumeAttempt(deps.db, buckets);
  if (!d.allowed) {
    ctx.state.authError = true;
    throw errors.rateLimited(d.retryAfterSeconds);
  }
}

async function startSession(ctx: Context, deps: AppDeps, user: UserRow) {
  const { token, expiresAt } = await createSession(deps.db, user.id, deps.config.SESSION_DAYS, ctx.get('user-agent'));
  setSessionCookie(ctx, token, expiresAt);
  return { user: userOut(user), csrfToken: csrfTokenOf(token), expiresAt: expiresAt.toISOString() };
}

export function authRoutes(router: Router, deps: AppDeps) {
  router.get('/api/auth/options', (ctx) => {
    const oidc = deps.config.OIDC_ISSUER && deps.config.OIDC_CLIENT_ID ? { label: deps.config.OIDC_LABEL } : null;
    ctx.body = { success: true, data: { signup: deps.config.SIGNUP, oidc } };
  });

  router.post('/api/auth/signup', async (ctx) => {
    const body = validate(signupSchema, ctx.request.body, 'body');
    await throttle(ctx, deps);
    const user = await signUp(deps.db, deps.config, body);
    ctx.status = 201;
    ctx.body = { success: true, data: await startSession(ctx, deps, user) };
  });

  router.post('/api/auth/login', async (ctx) => {
    const body = validate(loginSchema, ctx.request.body, 'body');
    await throttle(ctx, deps, body.username);
    const user = await checkPassword(deps.db, body.username, body.password);
    if (!user) {
      ctx.state.authError = true;
      throw errors.unauthorized('Wrong username or password');
    }
    const old = sessionOf(ctx);
    if (old) await deleteSession(deps.db, old.token); // a fresh token on every sign-in (no session fixation)
    ctx.body = { success: true, data: await startSession(ctx, deps, user) };
  });

  router.post('/api/auth/logout', async (ctx) => {
    const session = sessionOf(ctx);
    if (session) await deleteSession(deps.db, session.token);
    clearSessionCookie(ctx);
    ctx.body = { success: true, message: 'Signed out' };
  });

  router.post('/api/auth/logout-all', async (ctx) => {
    const caller = requireCaller(ctx);
    const ended = await deleteUserSessions(deps.db, caller.userId);
    clearSessionCookie(ctx);
    ctx.body = { success: true, message: `Signed out of ${ended} session${ended === 1 ? '' : 's'}` };
  });

  router.get('/api/auth/me', async (ctx) => {
    const caller = requireCaller(ctx);
    const session = sessionOf(ctx);
    const limit = quotaLimit(deps.config, caller.tier);
    const used = await usedToday(deps.db, caller.userId);
    const rate = {
      free: [deps.config.RATE_LIMIT_FREE_MINUTE, deps.config.RATE_LIMIT_FREE_DAY],
      pro: [deps.config.RATE_LIMIT_PRO_MINUTE, deps.config.RATE_LIMIT_PRO_DAY],
      enterprise: [deps.config.RATE_LIMIT_ENTERPRISE_MINUTE, deps.config.RATE_LIMIT_ENTERPRISE_DAY],
    }[caller.tier].map((n) => (n === 0 ? null : n));
    ctx.set('Cache-Control', 'no-store');
    ctx.body = {
      success: true,
      data: {
        user: { id: caller.userId, username: caller.username, name: caller.name, tier: caller.tier },
        via: session ? 'session' : 'key',
        ...(session ? { csrfToken: session.csrfToken } : {}),
        rateLimits: { perMinute: rate[0], perDay: rate[1] },
        scenarioQuota: { limit, used, remaining: remainingOf(limit, used), resetAt: quotaResetAt() },
      },
    };
  });

  router.get('/api/auth/me/collections', async (ctx) => {
    const caller = requireCaller(ctx);
    const q = validate(pageQuery, ctx.query, 'query');
    const page = pageOf(await listOwnCollections(deps.db, caller.userId, q.limit, q.offset), q.limit, q.offset);
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { success: true, data: page.items.map(collectionListItem), pagination: page.pagination };
  });

  router.post('/api/admin/invitations', async (ctx) => {
    requireAdmin(ctx);
    const body = validate(invitationBody, ctx.request.body, 'body');
    const inv = await createInvitation(deps.db, { note: body.note, days: body.days });
    ctx.status = 201;
    ctx.body = {
      success: true,
      data: { id: inv.id, token: inv.token, url: `${ctx.origin}/signup?invite=${inv.token}`, expiresAt: inv.expiresAt.toISOString(), signup: deps.config.SIGNUP },
    };
  });
}

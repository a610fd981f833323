/**
 * Accounts for people (the web app): sign-up (SIGNUP), sign-in, sign-out, sign-out everywhere, who am I, my
 * collections; and the operator's single-use invitations. A session is a cookie (HttpOnly, SameSite=Lax, Secure over
 * TLS) that the handler sets; its CSRF token comes back in the body of signup, login and me. Errors are shape A.
 */
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { ownedCollectionListItemSchema, toCollectionListItem } from './collections.js';
import { collectionNotices } from '../../core/collections/collections.js';
import { defineOperation, HANDLED, type Operation } from './define.js';
import { ok, okMessage, okPage, timestamp, uuid } from './envelope.js';
import { pageOf, paging } from '../validate.js';
import { callerOf, requireCaller } from '../middleware/auth.js';
import { clearSessionCookie, sessionOf, setSessionCookie } from '../middleware/session.js';
import { addressBucket } from '../middleware/identity.js';
import { AppError, errors } from '../../core/infra/errors.js';
import { TIERS } from '../../core/types.js';
import { checkPassword, loginSchema, signupSchema, signUp } from '../../core/auth/accounts.js';
import { createSession, csrfTokenOf, deleteSession, deleteUserSessions } from '../../core/auth/sessions.js';
import { consumeAttempt } from '../../core/auth/login-throttle.js';
import { createInvitation } from '../../core/auth/invitations.js';
import { createOidcClient, OIDC_COOKIE, OIDC_LOGIN_MS, oidcEnabled, OidcRefused, userForIdentity, type OidcClient } from '../../core/auth/oidc.js';
import { quotaLimit, quotaResetAt, remainingOf } from '../../core/scenarios/scenario-quota.js';
import { usedToday } from '../../core/repos/scenario-quota.js';
import { listCollectionsOwnedBy } from '../../core/repos/collections.js';
import type { UserRow } from '../../core/repos/users.js';

// ---- response schemas and mappers ----

const userSchema = z.object({ id: uuid, username: z.string(), name: z.string().nullable(), tier: z.enum(TIERS) });
const SIGNUP_MODES = ['open', 'invite', 'closed'] as const;

const sessionSchema = z.object({
  user: userSchema,
  csrfToken: z.string().meta({ description: 'Send it in `X-CSRF-Token` with every write made with the session cookie' }),
  expiresAt: timestamp,
});

const meSchema = z.object({
  user: userSchema,
  via: z.enum(['session', 'key']),
  csrfToken: z.string().optional().meta({ description: 'Only for a session' }),
  rateLimits: z.object({ perMinute: z.number().int().nullable(), perDay: z.number().int().nullable() }).meta({ description: 'null: unlimited' }),
  scenarioQuota: z.object({
    limit: z.number().int().nullable(),
    used: z.number().int(),
    remaining: z.number().int().nullable(),
    resetAt: timestamp,
  }),
  llm: z
    .object({ provider: z.enum(['offline', 'openai-compatible']), model: z.string() })
    .meta({ description: 'The language model behind agent runs, judging and chat; `offline`: rules, no model (no LLM_BASE_URL configured)' }),
});

const optionsSchema = z.object({
  signup: z.enum(SIGNUP_MODES),
  oidc: z
    .object({ label: z.string(), startUrl: z.string().meta({ description: 'Send the browser here to sign in at the provider' }) })
    .nullable()
    .meta({ description: 'Single sign-on, when the operator set it up' }),
});

const invitationSchema = z.object({
  id: uuid,
  token: z.string().meta({ description: 'Shown once: `tsi_` and 32 base62 characters' }),
  url: z.string().meta({ description: 'The sign-up page with this invitation' }),
  expiresAt: timestamp,
  signup: z.enum(SIGNUP_MODES).meta({ description: 'The service’s sign-up mode (an invitation is only needed under `invite`)' }),
});

const userOut = (u: Pick<UserRow, 'id' | 'username' | 'name' | 'tier'>): z.infer<typeof userSchema> => ({
  id: u.id,
  username: u.username,
  name: u.name,
  tier: u.tier,
});

// ---- input schemas ----

const invitationBody = z.object({ note: z.string().max(200).optional(), days: z.number().int().min(1).max(90).default(7) }).strict();
const pageQuery = z.object(paging(50, 100));

// ---- helpers the handlers share ----

async function throttle(ctx: Context, deps: AppDeps, account?: string): Promise<void> {
  const buckets = [{ key: `ip:${addressBucket(ctx.ip)}`, max: deps.config.LOGIN_ATTEMPTS_PER_IP }];
  if (account) buckets.push({ key: `user:${account.toLowerCase()}`, max: deps.config.LOGIN_ATTEMPTS_PER_ACCOUNT });
  const d = await consumeAttempt(deps.db, buckets);
  if (!d.allowed) {
    ctx.state.authError = true;
    throw errors.rateLimited(d.retryAfterSeconds);
  }
}

/** Ends the request's old session if any (no session fixation), starts one for `user`, and sets its cookie. */
export async function startSession(
  ctx: Context,
  deps: AppDeps,
  user: Pick<UserRow, 'id' | 'username' | 'name' | 'tier'>,
): Promise<z.infer<typeof sessionSchema>> {
  const old = sessionOf(ctx);
  if (old) await deleteSession(deps.db, old.token);
  const { token, expiresAt } = await createSession(deps.db, user.id, deps.config.SESSION_DAYS, ctx.get('user-agent'));
  setSessionCookie(ctx, token, expiresAt);
  return { user: userOut(user), csrfToken: csrfTokenOf(token), expiresAt: expiresAt.toISOString() };
}

function rateLimitsOf(deps: AppDeps, tier: (typeof TIERS)[number]): z.infer<typeof meSchema>['rateLimits'] {
  const c = deps.config;
  const [perMinute, perDay] = {
    free: [c.RATE_LIMIT_FREE_MINUTE, c.RATE_LIMIT_FREE_DAY],
    pro: [c.RATE_LIMIT_PRO_MINUTE, c.RATE_LIMIT_PRO_DAY],
    enterprise: [c.RATE_LIMIT_ENTERPRISE_MINUTE, c.RATE_LIMIT_ENTERPRISE_DAY],
  }[tier].map((n) => (n === 0 ? null : n));
  return { perMinute: perMinute ?? null, perDay: perDay ?? null };
}

// ---- single sign-on ----

const OIDC_START = '/api/auth/oidc/start';
const OIDC_CALLBACK = '/api/auth/oidc/callback';
const redirect = (description: string) => ({ raw: { contentType: 'text/html', description } });
/** One client per app (it caches the provider's discovery document). */
const oidcClients = new WeakMap<AppDeps, OidcClient>();
function oidcOf(deps: AppDeps): OidcClient {
  if (!oidcEnabled(deps.config)) throw errors.notFound('Single sign-on', 'oidc');
  let c = oidcClients.get(deps);
  if (!c) oidcClients.set(deps, (c = createOidcClient(deps.db, deps.config)));
  return c;
}
/** This service's own origin (Koa 3's ctx.origin is the request's Origin header, not ours). */
const ownOrigin = (ctx: Context, deps: AppDeps) => deps.config.PUBLIC_URL ?? `${ctx.protocol}://${ctx.host}`;
const callbackUrl = (ctx: Context, deps: AppDeps) => `${ownOrigin(ctx, deps)}${OIDC_CALLBACK}`;
const setFlowCookie = (ctx: Context, value: string, maxAge: number) =>
  ctx.cookies.set(OIDC_COOKIE, value, { httpOnly: true, sameSite: 'lax', secure: ctx.secure, path: '/api/auth/oidc', maxAge, overwrite: true });

/** Back to the sign-in page with the reason in words there (`/login?sso=<reason>`). */
function refuse(ctx: Context, deps: AppDeps, err: unknown): typeof HANDLED {
  const unreachable = err instanceof AppError && err.status === 503;
  if (!(err instanceof OidcRefused) && !unreachable) throw err;
  const reason = err instanceof OidcRefused ? err.reason : 'provider';
  deps.logger.info({ reqId: ctx.state.requestId, reason, err: (err as Error).message }, 'single sign-on refused');
  ctx.redirect(`/login?sso=${reason}`);
  return HANDLED;
}

const base = { tag: 'Accounts', errorShape: 'A' } as const;

export const authOperations: Operation[] = [
  defineOperation({
    ...base,
    id: 'auth.options',
    method: 'get',
    path: '/api/auth/options',
    summary: 'How people may get an account here: the sign-up mode, and single sign-on if any',
    auth: 'public',
    responses: { 200: ok(optionsSchema) },
    errors: [],
    handler: async (_ctx, deps) => {
      const oidc = oidcEnabled(deps.config) ? { label: deps.config.OIDC_LABEL, startUrl: OIDC_START } : null;
      return { success: true, data: { signup: deps.config.SIGNUP, oidc } };
    },
  }),
  defineOperation({
    ...base,
    id: 'auth.signup',
    method: 'post',
    path: '/api/auth/signup',
    summary: 'Make an account with a password and start a session (SIGNUP decides who may)',
    auth: 'public',
    body: signupSchema,
    responses: { 201: ok(sessionSchema) },
    errors: [400, 403, 409],
    handler: async (ctx, deps, { body }) => {
      await throttle(ctx, deps);
      const user = await signUp(deps.db, deps.config, body);
      return { success: true, data: await startSession(ctx, deps, user) };
    },
  }),
  defineOperation({
    ...base,
    id: 'auth.login',
    method: 'post',
    path: '/api/auth/login',
    summary: 'Sign in with username and password: a fresh session cookie',
    description: 'Limited per account and per client address (429 with `Retry-After`). A wrong password and an unknown username are the same 401.',
    auth: 'public',
    body: loginSchema,
    responses: { 200: ok(sessionSchema) },
    errors: [400],
    handler: async (ctx, deps, { body }) => {
      await throttle(ctx, deps, body.username);
      const user = await checkPassword(deps.db, body.username, body.password);
      if (!user) {
        ctx.state.authError = true;
        throw errors.unauthorized('Wrong username or password');
      }
      return { success: true, data: await startSession(ctx, deps, user) };
    },
  }),
  defineOperation({
    ...base,
    id: 'auth.logout',
    method: 'post',
    path: '/api/auth/logout',
    summary: 'Sign out: ends this session and clears its cookie',
    auth: 'public',
    responses: { 200: okMessage },
    errors: [403],
    handler: async (ctx, deps) => {
      const session = sessionOf(ctx);
      if (session) await deleteSession(deps.db, session.token);
      clearSessionCookie(ctx);
      return { success: true, message: 'Signed out' };
    },
  }),
  defineOperation({
    ...base,
    id: 'auth.logoutAll',
    method: 'post',
    path: '/api/auth/logout-all',
    summary: 'Sign out everywhere: ends every session of the account',
    auth: 'key',
    responses: { 200: okMessage },
    errors: [403],
    handler: async (ctx, deps) => {
      const ended = await deleteUserSessions(deps.db, requireCaller(ctx).userId);
      clearSessionCookie(ctx);
      return { success: true, message: `Signed out of ${ended} session${ended === 1 ? '' : 's'}` };
    },
  }),
  defineOperation({
    ...base,
    id: 'auth.me',
    method: 'get',
    path: '/api/auth/me',
    summary: 'Who am I: the user, how the request was authenticated, its limits and, for a session, its CSRF token',
    auth: 'key',
    responses: { 200: ok(meSchema) },
    errors: [],
    handler: async (ctx, deps) => {
      const caller = requireCaller(ctx);
      const session = sessionOf(ctx);
      const limit = quotaLimit(deps.config, caller.tier);
      const used = await usedToday(deps.db, caller.userId);
      ctx.set('Cache-Control', 'no-store');
      return {
        success: true,
        data: {
          user: { id: caller.userId, username: caller.username, name: caller.name, tier: caller.tier },
          via: session ? 'session' : 'key',
          ...(session ? { csrfToken: session.csrfToken } : {}),
          rateLimits: rateLimitsOf(deps, caller.tier),
          scenarioQuota: { limit, used, remaining: remainingOf(limit, used), resetAt: quotaResetAt() },
          llm: { provider: deps.llm.provider, model: deps.llm.chatModel },
        },
      };
    },
  }),
  defineOperation({
    ...base,
    id: 'auth.myCollections',
    method: 'get',
    path: '/api/auth/me/collections',
    summary: "The caller's own collections, private ones included, last changed first",
    auth: 'key',
    query: pageQuery,
    responses: { 200: okPage(ownedCollectionListItemSchema) },
    errors: [400],
    handler: async (ctx, deps, { query }) => {
      const caller = requireCaller(ctx);
      const page = pageOf(await listCollectionsOwnedBy(deps.db, caller.userId, query), query.limit, query.offset);
      ctx.set('Cache-Control', 'no-store');
      // Each with its notices (held entries: a query only for a collection that has one).
      const notices = await Promise.all(page.items.map((c) => collectionNotices(deps.db, c)));
      return { success: true, data: page.items.map((c, i) => ({ ...toCollectionListItem(c), notices: notices[i] })), pagination: page.pagination };
    },
  }),
  defineOperation({
    ...base,
    id: 'auth.oidcStart',
    method: 'get',
    path: OIDC_START,
    summary: "Single sign-on: redirects the browser to the provider's sign-in (authorization code flow with PKCE)",
    auth: 'public',
    responses: { 302: redirect("To the provider's authorization endpoint; or to `/login?sso=provider` if it cannot be reached") },
    errors: [404],
    handler: async (ctx, deps) => {
      const oidc = oidcOf(deps);
      try {
        const { url, handle } = await oidc.start(callbackUrl(ctx, deps));
        setFlowCookie(ctx, handle, OIDC_LOGIN_MS);
        ctx.set('Cache-Control', 'no-store');
        ctx.redirect(url);
        return HANDLED;
      } catch (err) {
        return refuse(ctx, deps, err);
      }
    },
  }),
  defineOperation({
    ...base,
    id: 'auth.oidcCallback',
    method: 'get',
    path: OIDC_CALLBACK,
    summary: 'Single sign-on: where the provider sends the browser back; starts a session and redirects to `/`',
    description:
      'The user linked to the identity; else the signed-in user, now linked; else a new user if sign-up is open. Refusals go to `/login?sso=<reason>` (expired, provider, closed, invite, linked).',
    auth: 'public',
    responses: { 302: redirect('To `/` signed in, or to `/login?sso=<reason>`') },
    errors: [404],
    handler: async (ctx, deps) => {
      const oidc = oidcOf(deps);
      const handle = ctx.cookies.get(OIDC_COOKIE);
      setFlowCookie(ctx, '', 0);
      try {
        const identity = await oidc.finish(handle, new URL(`${callbackUrl(ctx, deps)}?${ctx.querystring}`));
        const user = await userForIdentity(deps.db, deps.config, identity, callerOf(ctx)?.userId);
        await startSession(ctx, deps, user);
        ctx.set('Cache-Control', 'no-store');
        ctx.redirect('/');
        return HANDLED;
      } catch (err) {
        return refuse(ctx, deps, err);
      }
    },
  }),
  defineOperation({
    ...base,
    id: 'auth.createInvitation',
    method: 'post',
    path: '/api/admin/invitations',
    summary: 'Operator: a single-use sign-up invitation (for SIGNUP=invite)',
    auth: 'admin',
    body: invitationBody,
    responses: { 201: ok(invitationSchema) },
    errors: [400],
    handler: async (ctx, deps, { body }) => {
      const inv = await createInvitation(deps.db, { note: body.note, days: body.days });
      const data = {
        id: inv.id,
        token: inv.token,
        url: `${ownOrigin(ctx, deps)}/signup?invite=${inv.token}`,
        expiresAt: inv.expiresAt.toISOString(),
        signup: deps.config.SIGNUP,
      };
      return { success: true, data };
    },
  }),
];

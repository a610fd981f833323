/**
 * Limits per minute and per day by tier, counted per user (all of a user's keys together) or, for anonymous callers,
 * per client address (IPv6 by /64; see identity.ts). Counters are fixed windows in the Postgres table `rate_limits` (key, points, expire), shared by every API process; both windows are taken in ONE
 * statement per request. (rate-limiter-flexible's Postgres store uses the same table layout but needs one round trip
 * per window; measured here it cost ~25 % of GET /api/tools/search throughput, see the README's Libraries table, "rate limiting".)
 * Sets X-RateLimit-* on every response, always as integers: a charged one from the point it took; over a limit, 429
 * RATE_LIMITED with Retry-After. A response that spends no budget (web pages and assets, /health, the admin token's
 * requests, a request refused before the limiter) reports the caller's budget as it stands, without spending
 * (rateLimitHeaders). An unlimited caller (a tier whose minute limit is 0, the admin token) gets UNLIMITED as its
 * limit and remaining.
 */
import type { Context, Next } from 'koa';
import pg from 'pg';
import { errors } from '../../core/infra/errors.js';
import type { Config } from '../../core/infra/config.js';
import type { Caller, Tier } from '../../core/types.js';
import { API_KEY_PATTERN, hashApiKey, safeEqual } from '../../core/infra/crypto.js';
import { findSessionCaller, SESSION_COOKIE } from '../../core/auth/sessions.js';
import type { AppDeps } from '../deps.js';
import { addressBucket, callerIdentity } from './identity.js';

/**
 * X-RateLimit-Limit and -Remaining of an unlimited caller: the largest 32-bit signed integer, so that the headers are
 * integers every client can parse and no client ever reaches.
 */
export const UNLIMITED = 2_147_483_647;

/**
 * Whose limits a count is taken under: a tier's (API calls: keys, anonymous addresses, a session's writes), or
 * `session-read`, the web app's own reads by a signed-in browser (RATE_LIMIT_SESSION_READ_*).
 */
export type Budget = Tier | 'session-read';

export interface RateLimiter {
  consume(identity: string, tier: Budget): Promise<RateDecision>;
  /** The minute window of `identity` as it stands, spending nothing. */
  peek(identity: string, tier: Budget): Promise<RateDecision>;
  close(): Promise<void>;
}

export interface RateDecision {
  allowed: boolean;
  /** Per-minute limit, or null when the tier is unlimited. */
  limit: number | null;
  remaining: number | null;
  /** Unix epoch seconds when the minute window resets. */
  resetAt: number;
  retryAfterSeconds: number;
}

const WINDOWS = { minute: 60_000, day: 86_400_000 } as const;
const CLEANUP_EVERY_MS = 5 * 60_000;

/** Takes $4 points in each window ($4 requests of one identity, in arrival order: see `consume`). */
const CONSUME_SQL = `
  insert into rate_limits as r (key, points, expire)
  select k, $4::int, e from unnest($1::text[], $2::bigint[]) as t(k, e)
  on conflict (key) do update set
    points = case when r.expire <= $3 then $4::int else r.points + $4::int end,
    expire = case when r.expire <= $3 then excluded.expire else r.expire end
  returning key, points, expire`;

/** A request waiting for its point: settled with the decision its place in the batch gives. */
interface Waiter {
  resolve(d: RateDecision): void;
  reject(err: unknown): void;
}

function limitsOf(config: Config, tier: Budget): { minute: number; day: number } {
  switch (tier) {
    case 'session-read':
      return { minute: config.RATE_LIMIT_SESSION_READ_MINUTE, day: config.RATE_LIMIT_SESSION_READ_DAY };
    case 'free':
      return { minute: config.RATE_LIMIT_FREE_MINUTE, day: config.RATE_LIMIT_FREE_DAY };
    case 'pro':
      return { minute: config.RATE_LIMIT_PRO_MINUTE, day: config.RATE_LIMIT_PRO_DAY };
    case 'enterprise':
      return { minute: config.RATE_LIMIT_ENTERPRISE_MINUTE, day: config.RATE_LIMIT_ENTERPRISE_DAY };
  }
}

export function createRateLimiter(config: Config, connectionString: string): RateLimiter {
  const pool = new pg.Pool({ connectionString, max: 10 });
  // An idle connection that the server drops (a restart) is reported here; unhandled, it would end the process.
  pool.on('error', () => undefined);
  const cleanup = setInterval(() => {
    void pool.query('delete from rate_limits where expire < $1', [Date.now() - 3_600_000]).catch(() => undefined);
  }, CLEANUP_EVERY_MS);
  cleanup.unref();

  /**
   * Requests of one identity (and tier) that arrive while its statement runs wait, and the next statement takes all
   * their points at once; each request then gets the point its place gives (the first the lowest), as if each had
   * taken its own in that order. Under concurrent load from one caller this is one round trip for many requests
   * instead of one each queued on the same two rows (GET /api/tools/search in bench:api; docs/search.md).
   */
  const queued = new Map<string, Waiter[]>();
  const running = new Set<string>();

  const take = async (group: string, identity: string, tier: Budget, waiters: Waiter[]): Promise<void> => {
    const { minute, day } = limitsOf(config, tier);
    const now = Date.now();
    const windows = (Object.keys(WINDOWS) as (keyof typeof WINDOWS)[]).filter((w) => (w === 'minute' ? minute : day) > 0);
    const keys = windows.map((w) => `rl:${w}:${identity}`);
    running.add(group);
    try {
      const { rows } = await pool.query<{ key: string; points: number; expire: string }>(CONSUME_SQL, [
        keys,
        windows.map((w) => now + WINDOWS[w]),
        now,
        waiters.length,
      ]);
      const state = (w: keyof typeof WINDOWS) => rows.find((r) => r.key === `rl:${w}:${identity}`);
      const m = state('minute');
      const d = state('day');
      waiters.forEach((waiter, i) => {
        // The points this request took: the batch's first took the lowest.
        const back = waiters.length - 1 - i;
        const mPoints = m ? m.points - back : 0;
        const dPoints = d ? d.points - back : 0;
        const blocked = [...(m && mPoints > minute ? [Number(m.expire)] : []), ...(d && dPoints > day ? [Number(d.expire)] : [])];
        const retryAt = Math.max(now, ...blocked);
        waiter.resolve({
          allowed: blocked.length === 0,
          limit: minute === 0 ? null : minute,
          remaining: m ? Math.max(0, minute - mPoints) : null,
          resetAt: Math.ceil((m ? Number(m.expire) : now + WINDOWS.minute) / 1000),
          retryAfterSeconds: Math.max(1, Math.ceil((retryAt - now) / 1000)),
        });
      });
    } catch (err) {
      for (const waiter of waiters) waiter.reject(err);
    } finally {
      running.delete(group);
      const next = queued.get(group);
      if (next) {
        queued.delete(group);
        void take(group, identity, tier, next);
      }
    }
  };

  return {
    consume(identity, tier) {
      const { minute, day } = limitsOf(config, tier);
      if (minute === 0 && day === 0) {
        return Promise.resolve({ allowed: true, limit: null, remaining: null, resetAt: Math.ceil(Date.now() / 1000) + 60, retryAfterSeconds: 0 });
      }
      const group = `${tier}\u0000${identity}`;
      return new Promise<RateDecision>((resolve, reject) => {
        const waiter = { resolve, reject };
        if (!running.has(group)) return void take(group, identity, tier, [waiter]);
        const waiting = queued.get(group);
        if (waiting) waiting.push(waiter);
        else queued.set(group, [waiter]);
      });
    },
    async peek(identity, tier) {
      const { minute } = limitsOf(config, tier);
      const now = Date.now();
      const fresh = { allowed: true, limit: minute === 0 ? null : minute, remaining: minute === 0 ? null : minute, retryAfterSeconds: 0 };
      if (minute === 0) return { ...fresh, resetAt: Math.ceil((now + WINDOWS.minute) / 1000) };
      const { rows } = await pool.query<{ points: number; expire: string }>('select points, expire from rate_limits where key = $1 and expire > $2', [
        `rl:minute:${identity}`,
        now,
      ]);
      const m = rows[0];
      // No window open: the next charged request opens one, a minute from then.
      if (!m) return { ...fresh, resetAt: Math.ceil((now + WINDOWS.minute) / 1000) };
      return { ...fresh, remaining: Math.max(0, minute - m.points), resetAt: Math.ceil(Number(m.expire) / 1000) };
    },
    async close() {
      clearInterval(cleanup);
      await pool.end();
    },
  };
}

/**
 * Takes one point of `identity`'s budget and says so in the X-RateLimit-* headers; over a limit, a 429 (shape A
 * everywhere, scenario routes included).
 */
export async function charge(ctx: Context, limiter: RateLimiter, identity: string, tier: Budget): Promise<void> {
  const d = await limiter.consume(identity, tier);
  setHeaders(ctx, d);
  if (!d.allowed) {
    ctx.state.authError = true; // keeps shape A on scenario routes too
    throw errors.rateLimited(d.retryAfterSeconds);
  }
}

function setHeaders(ctx: Context, d: Pick<RateDecision, 'limit' | 'remaining' | 'resetAt'>): void {
  ctx.set('X-RateLimit-Limit', String(d.limit ?? UNLIMITED));
  ctx.set('X-RateLimit-Remaining', String(d.remaining ?? UNLIMITED));
  ctx.set('X-RateLimit-Reset', String(d.resetAt));
}

const SESSION_READS = new Set(['GET', 'HEAD']);
const sessionReadIdentity = (userId: string) => `session-read:${userId}`;

export function rateLimitMiddleware(limiter: RateLimiter) {
  return async (ctx: Context, next: Next) => {
    // The operator (admin token) and the health probe are not limited (rateLimitHeaders reports their budget); every
    // other request is, whatever its path (a path that matches no route still costs a point, so no spelling of a
    // path is a free request). A request with a bad credential was charged to its address before its 401 (auth.ts).
    if (ctx.state.admin === true || ctx.path === '/health') return next();
    const caller = ctx.state.caller as { tier: Tier; userId: string } | undefined;
    // The web app's own reads, signed in by the session cookie (session.ts sets `session` only for a request without
    // an Authorization header, so no key reaches this budget): a budget of their own, apart from the API's.
    if (caller && ctx.state.session && SESSION_READS.has(ctx.method)) {
      await charge(ctx, limiter, sessionReadIdentity(caller.userId), 'session-read');
      return next();
    }
    // One budget per user, shared by all of their keys (so minting keys buys nothing), or per client address.
    await charge(ctx, limiter, callerIdentity(ctx), caller?.tier ?? 'free');
    return next();
  };
}

/**
 * Who a response that spent no budget reports on, when the request did not get as far as authentication (web pages
 * and assets are served before it; a request refused before it): the key's user, the admin token, the signed-in
 * browser's user, or the client address. Nothing is refused or charged here: an unknown key or cookie is anonymous.
 */
async function uncharged(ctx: Context, deps: AppDeps): Promise<{ admin: true } | { caller: Caller | undefined; session?: true }> {
  if (ctx.state.admin === true) return { admin: true };
  if (ctx.state.caller) return { caller: ctx.state.caller as Caller, ...(ctx.state.session ? { session: true as const } : {}) };
  const token = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'))?.[1];
  if (token && API_KEY_PATTERN.test(token)) return { caller: await deps.callers.get(hashApiKey(token)) };
  if (token && deps.config.ADMIN_TOKEN && safeEqual(token, deps.config.ADMIN_TOKEN)) return { admin: true };
  const cookie = ctx.get('authorization') ? undefined : ctx.cookies.get(SESSION_COOKIE);
  const caller = cookie ? (await findSessionCaller(deps.db, cookie))?.caller : undefined;
  return caller ? { caller, session: true } : { caller: undefined };
}

/**
 * Outermost (after the request id): fills in X-RateLimit-* on a response that spent no budget, with the caller's
 * budget as it stands. A charged response already carries them. If the counters cannot be read (the database is
 * down), the tier's limit is reported as remaining.
 */
export function rateLimitHeaders(deps: AppDeps) {
  return async (ctx: Context, next: Next) => {
    await next();
    if (ctx.headerSent || ctx.response.get('X-RateLimit-Limit')) return;
    const minuteEnd = Math.ceil((Date.now() + 60_000) / 1000);
    let who: Awaited<ReturnType<typeof uncharged>>;
    try {
      who = await uncharged(ctx, deps);
    } catch {
      who = { caller: undefined };
    }
    if ('admin' in who) return setHeaders(ctx, { limit: null, remaining: null, resetAt: minuteEnd });
    // A signed-in browser's page reports the budget its reads spend (the web app's own); a key's, its user's.
    const session = who.caller && 'session' in who && SESSION_READS.has(ctx.method);
    const tier: Budget = session ? 'session-read' : (who.caller?.tier ?? 'free');
    const identity = who.caller ? (session ? sessionReadIdentity(who.caller.userId) : `user:${who.caller.userId}`) : `ip:${addressBucket(ctx.ip)}`;
    try {
      setHeaders(ctx, await deps.rateLimiter.peek(identity, tier));
    } catch {
      const minute = limitsOf(deps.config, tier).minute;
      setHeaders(ctx, { limit: minute || null, remaining: minute || null, resetAt: minuteEnd });
    }
  };
}

/**
 * Per-key (or per-IP when anonymous) limits per minute and per day by tier, with counters in Postgres through
 * rate-limiter-flexible's Postgres store, so that every API process shares them. Sets X-RateLimit-* on every
 * response; over the limit, 429 RATE_LIMITED with Retry-After.
 */
import type { Context, Next } from 'koa';
import pg from 'pg';
import { RateLimiterPostgres, RateLimiterRes } from 'rate-limiter-flexible';
import { errors } from '../../core/errors.js';
import type { Config } from '../../core/config.js';
import type { Tier } from '../../core/types.js';

export interface RateLimiter {
  consume(identity: string, tier: Tier): Promise<RateDecision>;
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

function limitsOf(config: Config, tier: Tier): { minute: number; day: number } {
  switch (tier) {
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
  const limiters = new Map<string, RateLimiterPostgres>();
  const limiter = (tier: Tier, window: 'minute' | 'day', points: number) => {
    const name = `${tier}:${window}`;
    let l = limiters.get(name);
    if (!l) {
      l = new RateLimiterPostgres({
        storeClient: pool,
        storeType: 'pool',
        tableName: 'rate_limits',
        tableCreated: true,
        keyPrefix: `rl:${window}`,
        points,
        duration: window === 'minute' ? 60 : 86_400,
        clearExpiredByTimeout: false,
      });
      limiters.set(name, l);
    }
    return l;
  };

  return {
    async consume(identity, tier) {
      const { minute, day } = limitsOf(config, tier);
      const now = Date.now();
      if (minute === 0 && day === 0) {
        return { allowed: true, limit: null, remaining: null, resetAt: Math.ceil(now / 1000) + 60, retryAfterSeconds: 0 };
      }
      const take = async (window: 'minute' | 'day', points: number) => {
        if (points === 0) return undefined;
        try {
          return { res: await limiter(tier, window, points).consume(identity), allowed: true };
        } catch (err) {
          if (err instanceof RateLimiterRes) return { res: err, allowed: false };
          throw err;
        }
      };
      const [m, d] = await Promise.all([take('minute', minute), take('day', day)]);
      const blocking = [m, d].filter((x) => x && !x.allowed).map((x) => x!.res);
      const retryMs = Math.max(0, ...blocking.map((r) => r.msBeforeNext));
      const resetAt = Math.ceil((now + (m?.res.msBeforeNext ?? 60_000)) / 1000);
      return {
        allowed: blocking.length === 0,
        limit: minute === 0 ? null : minute,
        remaining: m ? Math.max(0, m.res.remainingPoints) : null,
        resetAt,
        retryAfterSeconds: Math.max(1, Math.ceil(retryMs / 1000)),
      };
    },
    async close() {
      await pool.end();
    },
  };
}

export function rateLimitMiddleware(limiter: RateLimiter) {
  return async (ctx: Context, next: Next) => {
    // The operator (admin token) and the health probe are not limited.
    if (ctx.state.admin || !ctx.path.startsWith('/api/')) return next();
    const caller = ctx.state.caller as { keyId: string; tier: Tier } | undefined;
    const identity = caller ? `key:${caller.keyId}` : `ip:${ctx.ip}`;
    const d = await limiter.consume(identity, caller?.tier ?? 'free');
    ctx.set('X-RateLimit-Limit', d.limit === null ? 'unlimited' : String(d.limit));
    ctx.set('X-RateLimit-Remaining', d.remaining === null ? 'unlimited' : String(d.remaining));
    ctx.set('X-RateLimit-Reset', String(d.resetAt));
    if (!d.allowed) {
      ctx.state.authError = true; // keeps shape A on scenario routes too
      throw errors.rateLimited(d.retryAfterSeconds);
    }
    return next();
  };
}

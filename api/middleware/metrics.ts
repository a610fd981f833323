/**
 * Metrics on the API: `httpMetrics` (outermost) counts every response by operation — the router's template, never the
 * raw path — and status, and the 429s by error code (set by the error middleware); `metricsRoute` answers `GET /metrics` on the public port when
 * METRICS_TOKEN is set and METRICS_PORT is not (then before authentication and rate limits, which know nothing of the
 * metrics token). Off otherwise: /metrics is then a 404 like any unknown path.
 */
import type { Context, Next } from 'koa';
import { errors } from '../../core/infra/errors.js';
import { metricsAuthorized, type Metrics } from '../../core/infra/metrics.js';
import type { Config } from '../../core/infra/config.js';

const SCRAPE_ROUTE = '/metrics';

/** The API's metrics can be read (a token for the public port, or a port of their own): only then are requests counted. */
export function metricsEnabled(config: Pick<Config, 'METRICS_TOKEN' | 'METRICS_PORT'>): boolean {
  return config.METRICS_PORT > 0 || !!config.METRICS_TOKEN;
}

/**
 * `routeOf` names the template a request would have reached when it was answered before the router ran (a 401, a 429,
 * a refused body): the router's own match, without running anything.
 */
export function httpMetrics(metrics: Metrics, routeOf: (path: string, method: string) => string | RegExp | undefined) {
  return async (ctx: Context, next: Next) => {
    const start = performance.now();
    try {
      await next();
    } finally {
      const matched = (ctx as { _matchedRoute?: unknown })._matchedRoute;
      const found = typeof matched === 'string' ? matched : ctx.state.metricsRoute === true ? SCRAPE_ROUTE : routeOf(ctx.path, ctx.method);
      metrics.httpRequest(ctx.method, typeof found === 'string' ? found : undefined, ctx.status, (performance.now() - start) / 1000);
      if (ctx.status === 429) metrics.limitRefusal(typeof ctx.state.errorCode === 'string' ? ctx.state.errorCode : 'OTHER');
    }
  };
}

export function metricsRoute(metrics: Metrics, config: Pick<Config, 'METRICS_TOKEN' | 'METRICS_PORT'>) {
  const served = config.METRICS_PORT === 0 && !!config.METRICS_TOKEN;
  return async (ctx: Context, next: Next) => {
    if (!served || ctx.path !== SCRAPE_ROUTE || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    ctx.state.metricsRoute = true;
    if (!metricsAuthorized(config.METRICS_TOKEN, ctx.get('authorization'))) {
      throw errors.unauthorized('The metrics token is required (Authorization: Bearer <METRICS_TOKEN>)');
    }
    ctx.type = metrics.contentType;
    ctx.body = await metrics.scrape();
  };
}

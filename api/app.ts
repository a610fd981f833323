/**
 * Builds the Koa application from its dependencies. Never listens: api/server.ts and tests do that.
 */
import Koa from 'koa';
import Router from '@koa/router';
import type { AppDeps } from './deps.js';
import { errorMiddleware } from './middleware/errors.js';
import { errorShapeOf } from './middleware/error-shape.js';
import { requestId } from './middleware/request-id.js';
import { traceRequests } from './middleware/tracing.js';
import { canonicalRequest } from './middleware/canonical.js';
import { authMiddleware } from './middleware/auth.js';
import { mcpOrigin } from './middleware/mcp-origin.js';
import { sessionMiddleware } from './middleware/session.js';
import { rateLimitHeaders, rateLimitMiddleware } from './middleware/rate-limit.js';
import { jsonBody } from './middleware/body.js';
import { webApp } from '../web/serve.js';
import { OPERATIONS } from './operations/index.js';
import { mountOperations } from './operations/define.js';
import { docsRoutes } from './docs-page.js';
import { httpMetrics, metricsEnabled, metricsRoute } from './middleware/metrics.js';
import { mcpChallenge, oauthRoutes, protectedResourceRoutes } from './oauth/provider.js';

export function createApp(deps: AppDeps): Koa {
  const app = new Koa({ proxy: deps.config.TRUST_PROXY > 0, maxIpsCount: deps.config.TRUST_PROXY });
  // Case-sensitive: one spelling per route, so that nothing downstream can read a path differently from the router.
  const router = new Router({ sensitive: true });
  mountOperations(router, deps, OPERATIONS);
  docsRoutes(router);
  app.use(traceRequests());
  // Counted only when someone may read them (METRICS_TOKEN or METRICS_PORT). Requests answered before the router ran
  // (401, 429, a refused body) are counted under the route they were for.
  const routeOf = (path: string, method: string) =>
    router
      .match(path, method)
      .pathAndMethod.filter((l) => l.methods.length > 0)
      .at(-1)?.path;
  if (metricsEnabled(deps.config)) app.use(httpMetrics(deps.metrics, routeOf));
  app.use(requestId(deps.logger));
  // X-RateLimit-* on every response: those that spent no budget (web pages, assets, /health, …) report the caller's.
  app.use(rateLimitHeaders(deps));
  app.use(errorMiddleware(deps.logger, errorShapeOf(router, OPERATIONS)));
  app.use(canonicalRequest());
  // Before authentication and rate limits: the metrics token is not an API key, and a scraper is not a caller.
  app.use(metricsRoute(deps.metrics, deps.config));
  // The web app's pages and hashed assets: static files, served before authentication and rate limits.
  app.use(webApp(deps.config.WEB_DIR));
  // MCP authorization (OAuth 2.1, api/oauth/): the 401 challenge on MCP URLs, the protected resource metadata, and the
  // authorization server under /oauth/ (oidc-provider, which authenticates its own requests).
  app.use(mcpChallenge(deps));
  app.use(protectedResourceRoutes(deps));
  app.use(oauthRoutes(deps));
  // Before authentication: a browser's preflight carries no credentials, and a foreign Origin is refused first.
  app.use(mcpOrigin([...deps.config.MCP_ALLOWED_ORIGINS, ...(deps.config.PUBLIC_URL ? [new URL(deps.config.PUBLIC_URL).origin] : [])]));
  app.use(authMiddleware(deps));
  app.use(sessionMiddleware(deps));
  app.use(rateLimitMiddleware(deps.rateLimiter));
  app.use(jsonBody());
  app.use(router.routes());
  app.use(router.allowedMethods());
  app.silent = true;
  return app;
}

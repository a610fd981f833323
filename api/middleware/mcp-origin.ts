/**
 * Browsers and the MCP endpoints (`/api/mcp/...`): the Streamable HTTP transport says a server MUST validate `Origin`
 * (against DNS rebinding), so a request whose `Origin` is not one of MCP_ALLOWED_ORIGINS is a 403 before anything
 * else runs; one without `Origin` (every non-browser client) is served. Allowed origins get CORS from `@koa/cors`
 * (preflights answered before authentication, which they cannot carry; the MCP headers allowed and exposed); no
 * other origin ever gets an `Access-Control-Allow-*` header.
 */
import cors from '@koa/cors';
import type { Context, Next } from 'koa';
import { errors } from '../../core/infra/errors.js';

const MCP_PATH = /^\/api\/mcp\//;

export function mcpOrigin(allowed: readonly string[]) {
  const origins = new Set(allowed);
  // No allowHeaders: a preflight gets the headers it asks for echoed (the env headers `X-Tool-Env-<NAME>` vary by tool).
  const withCors = cors({
    origin: (ctx) => ctx.get('Origin'),
    allowMethods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    exposeHeaders: ['Mcp-Session-Id', 'Mcp-Protocol-Version', 'WWW-Authenticate', 'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset'],
    maxAge: 600,
  });
  return async (ctx: Context, next: Next) => {
    if (!MCP_PATH.test(ctx.path)) return next();
    const origin = ctx.get('Origin');
    if (!origin) return next();
    if (!origins.has(origin)) throw errors.forbidden(`Origin ${origin.slice(0, 200)} may not call the MCP endpoints (MCP_ALLOWED_ORIGINS)`);
    return withCors(ctx, next);
  };
}

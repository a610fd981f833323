/**
 * Serves the built web app (WEB_DIR, made by web/build.ts) from the API process: hashed assets under /assets/ with
 * year-long immutable caching (pre-compressed .br/.gz siblings when the client takes them), and index.html, never
 * cached, for every page route of the app. A browser (Accept: text/html) asking for a path nothing answers (`/tools`,
 * a mistyped link) gets the app too, with status 404, and the app says "Not found"; /api/* and every other client
 * keep the JSON 404. Every answer carries a strict Content-Security-Policy: scripts, styles,
 * fonts and connections from this origin only, no inline script, no framing.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import type { Context, Next } from 'koa';
import serveStatic from 'koa-static';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The only asset paths there are: one flat folder of hashed file names. Anything else under /assets/ (dot segments,
 * encoded slashes or dots, sub-folders) is not an asset and goes on to the router's 404, so no spelling reaches a file
 * outside the folder or makes the file server throw.
 */
const ASSET = /^\/assets\/[A-Za-z0-9][A-Za-z0-9_-]*(?:\.[A-Za-z0-9]+)+$/;

/** Client-side routes: each answers with index.html and the app renders the page. */
const PAGE =
  /^\/(?:|search|login|signup|settings|agents|agents\/[^/]+|collections|scenarios|tools\/.+|collections\/[^/]+(?:\/scenarios)?|scenarios\/[^/]+|scenario-runs\/[^/]+|scenario-batches\/[^/]+(?:\/compare\/[^/]+)?|publish|packages|packages\/.+|operator|consent\/[A-Za-z0-9_-]+|env\/[A-Za-z0-9_-]+)\/?$/;

function secureHeaders(ctx: Context) {
  ctx.set('Content-Security-Policy', CONTENT_SECURITY_POLICY);
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'same-origin');
  ctx.set('X-Frame-Options', 'DENY');
}

export function webApp(webDir: string) {
  const assets = serveStatic(webDir, {
    index: false,
    gzip: true,
    brotli: true,
    maxage: 365 * 86_400_000,
    immutable: true,
    defer: false,
  });
  const page = async (ctx: Context, status = 200) => {
    secureHeaders(ctx);
    ctx.set('Cache-Control', 'no-cache');
    try {
      ctx.body = await fs.readFile(path.join(webDir, 'index.html'), 'utf8');
      ctx.type = 'text/html; charset=utf-8';
      ctx.status = status;
    } catch {
      ctx.status = 503;
      ctx.type = 'text/plain';
      ctx.body = 'The web app is not built: run `npm run build:web`.\n';
    }
  };
  return async (ctx: Context, next: Next) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    if (ASSET.test(ctx.path)) {
      secureHeaders(ctx);
      return assets(ctx, next);
    }
    if (PAGE.test(ctx.path)) return page(ctx);
    await next();
    const browser = (ctx.get('accept') || '').includes('text/html');
    if (ctx.status === 404 && ctx.body == null && browser && !/^\/(?:api|assets|v0\.1|docs|oauth|\.well-known)(?:\/|$)/.test(ctx.path)) await page(ctx, 404);
  };
}

/**
 * `/docs`: the API reference, rendered in the browser by Swagger UI (swagger-ui-dist, served from our own process —
 * no CDN) from `/api/openapi.json`. No inline script, so the page runs under a strict Content-Security-Policy.
 */
import type Router from '@koa/router';
import fs from 'node:fs/promises';
import path from 'node:path';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const ASSET_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
/** The only files of the package that are served, with their types. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'text/css; charset=utf-8',
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'favicon-32x32.png': 'image/png',
};
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Toolshed API reference</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
</head>
<body>
<main id="swagger-ui" aria-label="Toolshed API reference"></main>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`;

const INIT = `window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui', deepLinking: true, presets: [SwaggerUIBundle.presets.apis], layout: 'BaseLayout' });\n`;

export function docsRoutes(router: Router): void {
  router.get('/docs', (ctx) => {
    ctx.set('Content-Security-Policy', CSP);
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = PAGE;
  });
  router.get('/docs/init.js', (ctx) => {
    ctx.type = 'text/javascript; charset=utf-8';
    ctx.body = INIT;
  });
  router.get('/docs/assets/:file', async (ctx) => {
    const file = String(ctx.params.file);
    // Own keys only: `__proto__` or `constructor` are not assets (they were looked up on Object.prototype: a 500).
    const type = Object.hasOwn(ASSETS, file) ? ASSETS[file] : undefined;
    if (!type) return; // not ours to serve: the error middleware's 404
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.type = type;
    ctx.body = await fs.readFile(path.join(ASSET_DIR, file));
  });
}

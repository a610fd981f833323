/** GET /health: database, worker and search status (200 when the database answers, else 503). */
import type Router from '@koa/router';
import type { AppDeps } from '../deps.js';

export function healthRoutes(router: Router, deps: AppDeps) {
  router.get('/health', async (ctx) => {
    const started = performance.now();
    const database = await deps.db
      .raw('select 1')
      .then(() => ({ ok: true, latencyMs: Math.round((performance.now() - started) * 10) / 10 }))
      .catch((err: Error) => ({ ok: false, error: err.message.split('\n')[0] }));
    const workers = database.ok
      ? await deps.db('workers').where('last_seen_at', '>', deps.db.raw("now() - interval '30 seconds'")).count('* as n').first()
      : undefined;
    const search = await deps.search.status().catch((err: Error) => ({ ok: false, engine: deps.search.engine, detail: err.message }));
    const worker = { ok: Number(workers?.n ?? 0) > 0, active: Number(workers?.n ?? 0) };
    const ok = database.ok && search.ok;
    ctx.status = database.ok ? 200 : 503;
    ctx.body = { success: ok, data: { status: ok && worker.ok ? 'ok' : 'degraded', database, worker, search } };
  });
}

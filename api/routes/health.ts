/**
 * GET /health: database, worker and search status (200 when the database answers, else 503; `success` likewise). It
 * is public, so it says up or down and nothing more: a driver's error names hosts, ports, users and paths, and the search engine's
 * detail names its host. The detail goes to the log.
 */
import type Router from '@koa/router';
import type { AppDeps } from '../deps.js';

export function healthRoutes(router: Router, deps: AppDeps) {
  router.get('/health', async (ctx) => {
    const started = performance.now();
    const database = await deps.db
      .raw('select 1')
      .then(() => ({ ok: true, status: 'up', latencyMs: Math.round((performance.now() - started) * 10) / 10 }))
      .catch((err: Error) => {
        deps.logger.warn({ err: err.message, reqId: ctx.state.requestId }, 'health: database down');
        return { ok: false, status: 'down' };
      });
    const workers = database.ok
      ? await deps.db('workers').where('last_seen_at', '>', deps.db.raw("now() - interval '30 seconds'")).count('* as n').first()
      : undefined;
    const status = await deps.search.status().catch((err: Error) => ({ ok: false, engine: deps.search.engine, documents: 0, detail: err.message }));
    if (!status.ok) deps.logger.warn({ engine: status.engine, detail: status.detail, reqId: ctx.state.requestId }, 'health: search down');
    const search = { ok: status.ok, engine: status.engine, documents: status.documents };
    const worker = { ok: Number(workers?.n ?? 0) > 0, active: Number(workers?.n ?? 0) };
    const ok = database.ok && search.ok;
    ctx.status = database.ok ? 200 : 503;
    // `success` follows the envelope (true on a 200); a degraded service says so in `status`, not with success: false.
    ctx.body = { success: database.ok, data: { status: ok && worker.ok ? 'ok' : 'degraded', database, worker, search } };
  });
}

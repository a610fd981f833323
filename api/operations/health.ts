/**
 * `GET /health`: database, worker and search status — 200 when the database answers (`success: true`; a degraded
 * service says so in `status`), else 503 (`success: false`). It is public, so it says up or down and nothing more: a
 * driver's error names hosts, ports, users and paths, and the search engine's detail names its host. The detail goes
 * to the log.
 */
import { z } from 'zod';
import { defineOperation, reply, type Operation } from './define.js';
import { pingDatabase } from '../../core/infra/db.js';
import { countLiveWorkers } from '../../core/repos/workers.js';

/** A worker that heart-beat within this many seconds counts as live. */
const WORKER_LIVE_SECONDS = 30;

const healthData = z.object({
  status: z.enum(['ok', 'degraded']),
  database: z.object({ ok: z.boolean(), status: z.enum(['up', 'down']), latencyMs: z.number().optional() }),
  worker: z.object({ ok: z.boolean(), active: z.number().int() }),
  search: z.object({ ok: z.boolean(), engine: z.string(), documents: z.number().int() }),
});

export const healthOperations: Operation[] = [
  defineOperation({
    id: 'health.get',
    method: 'get',
    path: '/health',
    summary: 'Database, worker and search status (503 when the database does not answer)',
    tag: 'Health',
    auth: 'public',
    errorShape: 'A',
    responses: {
      200: z.object({ success: z.literal(true), data: healthData }),
      503: z.object({ success: z.literal(false), data: healthData }),
    },
    errors: [400],
    handler: async (ctx, deps) => {
      const started = performance.now();
      const database = await pingDatabase(deps.db)
        .then(() => ({ ok: true, status: 'up' as const, latencyMs: Math.round((performance.now() - started) * 10) / 10 }))
        .catch((err: Error) => {
          deps.logger.warn({ err: err.message, reqId: ctx.state.requestId }, 'health: database down');
          return { ok: false, status: 'down' as const };
        });
      const active = database.ok ? await countLiveWorkers(deps.db, WORKER_LIVE_SECONDS) : 0;
      const status = await deps.search.status().catch((err: Error) => ({ ok: false, engine: deps.search.engine, documents: 0, detail: err.message }));
      if (!status.ok) deps.logger.warn({ engine: status.engine, detail: status.detail, reqId: ctx.state.requestId }, 'health: search down');
      const search = { ok: status.ok, engine: status.engine, documents: status.documents };
      const worker = { ok: active > 0, active };
      const data = { status: database.ok && search.ok && worker.ok ? ('ok' as const) : ('degraded' as const), database, worker, search };
      return database.ok ? { success: true, data } : reply(503, { success: false, data });
    },
  }),
];

/** The operator's view of the running service (ADMIN_TOKEN): workers, the queue, imports, failures, the last hour. */
import { z } from 'zod';
import { defineOperation, type Operation } from './define.js';
import { ok, timestamp, uuid } from './envelope.js';
import { importsInProgress, lastHourByMinute, queueStates, recentFailures, workerStates } from '../../core/repos/operations.js';

const iso = (d: Date | string) => new Date(d).toISOString();

const operationsSchema = z.object({
  at: timestamp,
  workers: z.array(
    z.object({
      id: z.string(),
      hostname: z.string(),
      pid: z.number().int(),
      leaseSeconds: z.number().int(),
      lastSeenAt: timestamp,
      alive: z.boolean().meta({ description: 'Heart-beat within its lease window' }),
      jobs: z.array(z.object({ id: z.string(), task: z.string(), lockedAt: timestamp, attempts: z.number().int() })),
    }),
  ),
  queue: z.array(
    z.object({
      task: z.string(),
      waiting: z.number().int().meta({ description: 'Due and not taken' }),
      scheduled: z.number().int().meta({ description: 'Due later (retries after back-off, scheduled polls)' }),
      running: z.number().int(),
      failed: z.number().int().meta({ description: 'Out of attempts, not yet removed' }),
      oldestWaitingSeconds: z.number().nullable(),
    }),
  ),
  imports: z.array(z.object({ id: uuid, source: z.string(), status: z.enum(['queued', 'running']), createdAt: timestamp })),
  recentFailures: z.array(
    z.object({
      kind: z.enum(['execution', 'scenario_run', 'import']),
      id: z.string(),
      subject: z.string().nullable().meta({ description: "The tool's name, or an import's source" }),
      code: z.string().nullable(),
      at: timestamp,
    }),
  ),
  lastHour: z.array(z.object({ minute: timestamp, executionsSucceeded: z.number().int(), executionsFailed: z.number().int(), scenarioRuns: z.number().int() })),
});

export const operatorOperations: Operation[] = [
  defineOperation({
    tag: 'Admin',
    errorShape: 'A',
    auth: 'admin',
    id: 'admin.operations',
    method: 'get',
    path: '/api/admin/operations',
    summary: "What the service is doing: workers and their jobs, the queue by task, imports, the last hour's failures and counts",
    responses: { 200: ok(operationsSchema) },
    errors: [400],
    handler: async (_ctx, deps) => {
      const [workers, queue, imports, failures, lastHour] = await Promise.all([
        workerStates(deps.db, deps.config.WORKER_LEASE_SECONDS),
        queueStates(deps.db),
        importsInProgress(deps.db),
        recentFailures(deps.db, 20),
        lastHourByMinute(deps.db),
      ]);
      return {
        success: true,
        data: {
          at: new Date().toISOString(),
          workers: workers.map((w) => ({ ...w, lastSeenAt: iso(w.lastSeenAt), jobs: w.jobs.map((j) => ({ ...j, lockedAt: iso(j.lockedAt) })) })),
          queue,
          imports: imports.map((i) => ({ ...i, status: i.status as 'queued' | 'running', createdAt: iso(i.createdAt) })),
          recentFailures: failures.map((f) => ({ ...f, at: iso(f.at) })),
          lastHour: lastHour.map((m) => ({ ...m, minute: iso(m.minute) })),
        },
      };
    },
  }),
];

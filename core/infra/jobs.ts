/**
 * The task catalog: every Graphile Worker job kind, its payload schema, and `enqueue`, which adds the job on the
 * caller's connection so that a row and its job are created in one transaction. Payloads carry ids (and, for
 * executions and scenario runs, the env sealed with SECRETS_KEY, and `trace`: the request id and W3C trace context of
 * the request that queued them, core/infra/tracing.ts).
 */
import { z } from 'zod';
import { runMigrations } from 'graphile-worker';
import type { Db } from './db.js';
import { jobTraceSchema } from './tracing.js';

export const TASKS = {
  import_package: z.object({ importId: z.string().uuid() }),
  execute_tool: z.object({
    executionId: z.string().uuid(),
    sealedEnv: z.string().optional(),
    trace: jobTraceSchema.optional(),
    /** An imported MCP server's resources/read or prompts/get instead of the tool's call (api/mcp/offer.ts). */
    op: z.enum(['resources/read', 'prompts/get']).optional(),
    /** The MCP client asked for progress: the server's notifications/progress are forwarded (core/executions/progress.ts). */
    progress: z.boolean().optional(),
  }),
  health_check: z.object({ toolId: z.string().uuid().optional(), packageId: z.string().uuid().optional() }),
  scenario_run: z.object({ runId: z.string().uuid(), sealedEnv: z.string().optional(), trace: jobTraceSchema.optional() }),
  sweep_sessions: z.object({}),
  sweep_tool_stats: z.object({}),
  sweep_retention: z.object({}),
  npm_poll: z.object({}),
  /** npm's weekly download counts: of one package (after its import), or of every package whose figure is due. */
  refresh_downloads: z.object({ packageId: z.string().uuid().optional() }),
} as const;

export type TaskName = keyof typeof TASKS;
export type TaskPayload<T extends TaskName> = z.infer<(typeof TASKS)[T]>;

export interface EnqueueOptions {
  maxAttempts?: number;
  queueName?: string;
  jobKey?: string;
  priority?: number;
  runAt?: Date;
  /** Graphile's job_key_mode: `replace` (its default) or `preserve_run_at` (a job already scheduled keeps its time). */
  jobKeyMode?: 'replace' | 'preserve_run_at';
}

export async function enqueue<T extends TaskName>(db: Db, task: T, payload: TaskPayload<T>, opts: EnqueueOptions = {}): Promise<void> {
  TASKS[task].parse(payload);
  await db.raw(`select graphile_worker.add_job(?, ?::json, queue_name => ?, max_attempts => ?, job_key => ?, priority => ?, run_at => ?, job_key_mode => ?)`, [
    task,
    JSON.stringify(payload),
    opts.queueName ?? null,
    opts.maxAttempts ?? 3,
    opts.jobKey ?? null,
    opts.priority ?? null,
    opts.runAt ?? null,
    opts.jobKeyMode ?? 'replace',
  ]);
}

/** Parses a job payload again on receipt (a task never trusts what the queue hands it). */
export function parsePayload<T extends TaskName>(task: T, payload: unknown): TaskPayload<T> {
  return TASKS[task].parse(payload) as TaskPayload<T>;
}

/** Creates or upgrades Graphile Worker's own schema. */
export async function migrateJobQueue(connectionString: string): Promise<void> {
  await runMigrations({ connectionString, logger: undefined });
}

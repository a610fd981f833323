/**
 * A tool's reliability: calls, success rate, p50/p95 run time and most frequent error codes over 24 h, 7 d and 30 d,
 * and its calls per day over 30 days, read from the hourly rollup that finishing an execution keeps
 * (core/repos/tool-stats.ts). Public and visible as the tool detail is.
 */
import { z } from 'zod';
import { defineOperation, type Operation } from './define.js';
import { ok, uuid } from './envelope.js';
import { loadToolCached } from './shared.js';
import { isToolRefShape } from '../../core/repos/tools.js';
import { percentileOf, STATS_WINDOWS, successRate, type StatsWindow, type ToolWindowStats, toolDailyCalls, toolStats } from '../../core/repos/tool-stats.js';

const windowName = z.enum(Object.keys(STATS_WINDOWS) as [StatsWindow, ...StatsWindow[]]);

const windowSchema = z.object({
  window: windowName,
  calls: z.number().int().meta({ description: 'Executions of the tool that ended in the window (any origin, scenario runs included)' }),
  succeeded: z.number().int(),
  platformFailures: z.number().int().meta({
    description:
      "Failures that were the platform's, not the tool's (SANDBOX_ERROR, WORKER_LOST, WORKER_SHUTDOWN, NOT_FOUND, INTERNAL); counted in calls and topErrors",
  }),
  successRate: z.number().nullable().meta({ description: 'succeeded / (calls − platformFailures) (0–1), null when the tool decided no call' }),
  p50Ms: z
    .number()
    .int()
    .nullable()
    .meta({ description: 'Median run time in ms (exact under 100 ms, else rounded up to two significant digits); null with no run time' }),
  p95Ms: z.number().int().nullable(),
  topErrors: z.array(z.object({ code: z.string(), count: z.number().int() })).meta({ description: 'Failures by error code, most frequent first, at most 5' }),
});

export const toolStatsSchema = z.object({
  toolId: uuid,
  windows: z.array(windowSchema),
  daily: z
    .array(z.object({ day: z.string().meta({ format: 'date' }), calls: z.number().int(), succeeded: z.number().int() }))
    .meta({ description: 'Calls and successes per UTC day over the last 30 days, oldest first' }),
});

const refParams = z.object({ ref: z.string().meta({ description: 'Tool id, slug `<package>/<tool>`, or `<package>::<tool>`' }) });
const statsQuery = z.object({ window: windowName.optional().meta({ description: 'Only this window (default: all three)' }) });

export function toWindow(s: ToolWindowStats): z.infer<typeof windowSchema> {
  return {
    window: s.window,
    calls: s.calls,
    succeeded: s.succeeded,
    platformFailures: s.platformFailed,
    successRate: successRate(s),
    p50Ms: percentileOf(s.latency, 0.5),
    p95Ms: percentileOf(s.latency, 0.95),
    topErrors: s.topErrors,
  };
}

export const toolStatsOperations: Operation[] = [
  defineOperation({
    tag: 'Tools',
    errorShape: 'A',
    id: 'tools.stats',
    method: 'get',
    path: '/api/tools/*ref/stats',
    // `/api/tools/<package>/stats`: `<package>` alone names no tool, so this is the detail of a tool named `stats`.
    claims: (ctx) => isToolRefShape(ctx.params.ref ?? ''),
    summary: "A tool's calls, success rate, p50/p95 run time and top error codes over 24 h, 7 d and 30 d",
    description:
      'Every execution of the tool that ended counts once, whatever its origin (API, MCP, agent, scenario run). When what comes before `/stats` is a package name alone, the path is the slug of a tool named `stats`, answered by `tools.get`.',
    auth: 'public',
    params: refParams,
    query: statsQuery,
    responses: { 200: ok(toolStatsSchema) },
    errors: [400, 404],
    handler: async (_ctx, deps, { params, query }) => {
      const tool = await loadToolCached(deps, params.ref);
      const [windows, daily] = await Promise.all([toolStats(deps.db, tool.id), toolDailyCalls(deps.db, tool.id, 30)]);
      const shown = query.window === undefined ? windows : windows.filter((w) => w.window === query.window);
      return { success: true, data: { toolId: tool.id, windows: shown.map(toWindow), daily } };
    },
  }),
];

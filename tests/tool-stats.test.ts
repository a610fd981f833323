/**
 * Per-tool statistics (issue 26): GET /api/tools/:id/stats after real sandboxed executions that succeed, throw and
 * time out; windows; 404 and 400; the hourly rollup against the executions table under many concurrent finishes; the
 * reliability figures on search hits.
 */
import test from 'ava';
import crypto from 'node:crypto';
import path from 'node:path';
import { enqueue } from '../core/infra/jobs.js';
import { finishExecution } from '../core/repos/executions.js';
import { toolDailyCalls, toolStats } from '../core/repos/tool-stats.js';
import { until } from './helpers/processes.js';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';

let svc: Service;
test.before(async () => {
  svc = await startService({ sandbox: 'process', env: { EXECUTION_TIMEOUT_MS: '2500' } });
  for (const source of [path.join(EXAMPLES_DIR, 'color-tools'), ...['echo-tools', 'route-words'].map((d) => path.join(FIXTURES_DIR, 'packages', d))]) {
    const res = await svc.importPackage(`path:${source}`);
    if (res.status !== 201) throw new Error(res.text);
  }
});
test.after.always(() => svc?.close());

const SLEEPY = '@fixtures/echo-tools/sleepy';
const COLOR = '@toolshed-examples/color-tools/convertColor';

async function execute(slug: string, params: unknown, env?: Record<string, string>) {
  const res = await svc.request('POST', `/api/tools/execute/${slug}`, { body: { params, ...(env ? { env } : {}) } });
  // A time-out answers its own status (docs/api.md), with the execution's id like any other outcome.
  if (typeof res.body?.executionId !== 'string') throw new Error(res.text);
  return res.body as { success: boolean; executionId: string; executionTimeMs?: number; error?: { code: string } };
}

/** Run time as the statistics keep it: exact under 100 ms, else rounded up to two significant digits. */
function bucket(ms: number): number {
  if (ms < 100) return ms;
  const step = 10 ** (String(ms).length - 2);
  return Math.ceil(ms / step) * step;
}
/** Nearest-rank percentile. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(1, Math.ceil(p * sorted.length)) - 1]!;
}
async function runTimes(ids: string[]): Promise<number[]> {
  const times: number[] = [];
  for (const id of ids) times.push((await svc.request('GET', `/api/executions/${id}`)).body.data.executionTimeMs);
  return times;
}
const windowOf = (body: any, w: string) => body.data.windows.find((x: { window: string }) => x.window === w);

test.serial('after known calls: counts, success rate, p50/p95 and top error codes of each tool, in every window', async (t) => {
  const color = await svc.request('GET', `/api/tools/${COLOR}/stats`);
  t.is(color.status, 200, color.text);
  t.deepEqual(windowOf(color.body, '24h'), {
    window: '24h',
    calls: 0,
    succeeded: 0,
    platformFailures: 0,
    successRate: null,
    p50Ms: null,
    p95Ms: null,
    topErrors: [],
  });

  const calls = [
    await execute(COLOR, { color: '#1e90ff' }),
    await execute(COLOR, { color: 'not a colour' }),
    await execute(COLOR, { color: 'rgb(1, 2, 3)' }),
    await execute(COLOR, { color: 'nor this' }),
    await execute(COLOR, { color: 'dodgerblue' }),
  ];
  t.deepEqual(
    calls.map((c) => c.success),
    [true, false, true, false, true],
  );
  const sleepy = [
    await execute(SLEEPY, { ms: 0 }, { ECHO_SECRET: 's' }),
    await execute(SLEEPY, { ms: 150 }, { ECHO_SECRET: 's' }),
    await execute(SLEEPY, { ms: 20000 }, { ECHO_SECRET: 's' }),
  ];
  t.is(sleepy[2]!.error?.code, 'EXECUTION_TIMEOUT');

  const colorTimes = (await runTimes(calls.map((c) => c.executionId))).map(bucket);
  const got = await svc.request('GET', `/api/tools/${COLOR}/stats`);
  t.is(got.status, 200, got.text);
  for (const w of ['24h', '7d', '30d']) {
    t.deepEqual(windowOf(got.body, w), {
      window: w,
      calls: 5,
      succeeded: 3,
      platformFailures: 0,
      successRate: 0.6,
      p50Ms: percentile(colorTimes, 0.5),
      p95Ms: percentile(colorTimes, 0.95),
      topErrors: [{ code: 'TOOL_ERROR', count: 2 }],
    });
  }
  const today = got.body.data.daily.at(-1);
  t.like(today, { calls: 5, succeeded: 3 });
  t.is(got.body.data.daily.length, 30);

  // By id too; a timed-out call counts as a failure with its code, and its run time is in the percentiles.
  const sleepyTool = (await svc.request('GET', `/api/tools/${SLEEPY}`)).body.data;
  const byId = await svc.request('GET', `/api/tools/${sleepyTool.id}/stats?window=7d`);
  const sleepyTimes = (await runTimes(sleepy.map((c) => c.executionId))).map(bucket);
  t.deepEqual(byId.body.data.windows, [
    {
      window: '7d',
      calls: 3,
      succeeded: 2,
      platformFailures: 0,
      successRate: 2 / 3,
      p50Ms: percentile(sleepyTimes, 0.5),
      p95Ms: percentile(sleepyTimes, 0.95),
      topErrors: [{ code: 'EXECUTION_TIMEOUT', count: 1 }],
    },
  ]);
  t.true(byId.body.data.windows[0].p95Ms >= 2500, 'the time-out is the slowest run');
  t.is(byId.body.data.toolId, sleepyTool.id);
  const byToolId = await svc.request('GET', `/api/tools/${encodeURIComponent(sleepyTool.toolId)}/stats?window=7d`);
  t.deepEqual(byToolId.body.data.windows, byId.body.data.windows);
});

test.serial('windows: an hour leaves 24 h after a day, 7 d after a week, 30 d after thirty days', async (t) => {
  const tool = (await svc.request('GET', `/api/tools/${COLOR}`)).body.data;
  const inDays = (d: number) => new Date(Date.now() + d * 86_400_000);
  const calls = async (at: Date) => Object.fromEntries((await toolStats(svc.api.deps.db, tool.id, at)).map((w) => [w.window, w.calls]));
  t.deepEqual(await calls(inDays(0)), { '24h': 5, '7d': 5, '30d': 5 });
  t.deepEqual(await calls(inDays(1.1)), { '24h': 0, '7d': 5, '30d': 5 });
  t.deepEqual(await calls(inDays(7.1)), { '24h': 0, '7d': 0, '30d': 5 });
  t.deepEqual(await calls(inDays(30.1)), { '24h': 0, '7d': 0, '30d': 0 });
  const daily = await toolDailyCalls(svc.api.deps.db, tool.id, 30, inDays(29));
  t.deepEqual(
    daily.filter((d) => d.calls > 0).map((d) => d.calls),
    [5],
  );
  t.is(daily[0]!.calls, 5, 'the oldest day of thirty');
});

test('an unknown tool is a 404 and a bad window a 400, in the contract error shape; a tool named stats keeps its slug', async (t) => {
  for (const ref of [crypto.randomUUID(), '@fixtures/echo-tools/nope', 'nope::nothing']) {
    const res = await svc.request('GET', `/api/tools/${ref}/stats`);
    t.is(res.status, 404, ref);
    t.like(res.body, { success: false, error: { code: 'NOT_FOUND' } });
  }
  for (const query of ['window=1y', 'window=', 'window=7d&window=30d']) {
    const bad = await svc.request('GET', `/api/tools/${SLEEPY}/stats?${query}`);
    t.is(bad.status, 400, query);
    t.like(bad.body, { success: false, error: { code: 'VALIDATION_ERROR' } });
  }
  const named = await svc.request('GET', '/api/tools/@fixtures/route-words/stats');
  t.is(named.status, 200, named.text);
  t.is(named.body.data.name, 'stats');
  const its = await svc.request('GET', '/api/tools/@fixtures/route-words/stats/stats');
  t.is(its.status, 200, its.text);
  t.is(its.body.data.toolId, named.body.data.id);
  const pinned = await svc.request('GET', '/api/tools/@fixtures/route-words@1.0.0/stats/stats');
  t.is(pinned.status, 200, pinned.text);
  t.is(pinned.body.data.toolId, named.body.data.id, 'a pinned reference names the same tool (statistics are per tool, all versions)');
});

test.serial('the rollup stays equal to the executions table when many executions of one tool finish at once', async (t) => {
  const db = svc.api.deps.db;
  const tool = (await svc.request('GET', '/api/tools/@fixtures/echo-tools/echoSecret')).body.data;
  const [worker] = await db('workers').select('id').orderBy('started_at', 'desc').limit(1);
  const outcomes = [
    ...Array.from({ length: 30 }, (_, i) => ({ status: 'succeeded' as const, ms: 10 + i })),
    ...Array.from({ length: 12 }, (_, i) => ({ status: 'failed' as const, ms: 200 + i, code: 'TOOL_ERROR' })),
    ...Array.from({ length: 6 }, () => ({ status: 'timed_out' as const, ms: 2500, code: 'EXECUTION_TIMEOUT' })),
    ...Array.from({ length: 2 }, () => ({ status: 'failed' as const, ms: null, code: 'WORKER_LOST' })),
  ];
  const ids = outcomes.map(() => crypto.randomUUID());
  // Running executions held by the live worker (so that the reaper leaves them), finished all at once.
  await db('executions').insert(
    ids.map((id) => ({ id, tool_id: tool.id, origin: 'api', status: 'running', worker_id: worker!.id, heartbeat_at: db.fn.now(), attempts: 1 })),
  );
  const finished = await Promise.all(
    outcomes.map((o, i) =>
      finishExecution(db, ids[i]!, {
        status: o.status,
        executionTimeMs: o.ms,
        ...(o.status === 'succeeded' ? { result: { ok: true } } : { error: { code: o.code as 'TOOL_ERROR', message: 'x' } }),
      }),
    ),
  );
  t.true(finished.every(Boolean));
  const res = await svc.request('GET', `/api/tools/${tool.id}/stats?window=24h`);
  const times = outcomes.flatMap((o) => (o.ms === null ? [] : [bucket(o.ms)]));
  t.deepEqual(res.body.data.windows[0], {
    window: '24h',
    calls: 50,
    succeeded: 30,
    platformFailures: 2,
    successRate: 30 / 48, // the two WORKER_LOST calls were the platform's failures, not the tool's
    p50Ms: percentile(times, 0.5),
    p95Ms: percentile(times, 0.95),
    topErrors: [
      { code: 'TOOL_ERROR', count: 12 },
      { code: 'EXECUTION_TIMEOUT', count: 6 },
      { code: 'WORKER_LOST', count: 2 },
    ],
  });
  // And the same as counted from the executions themselves.
  const direct = await db('executions')
    .where({ tool_id: tool.id })
    .whereIn('status', ['succeeded', 'failed', 'timed_out'])
    .select(db.raw('count(*)::int as calls'), db.raw("count(*) filter (where status = 'succeeded')::int as succeeded"))
    .first();
  t.like(res.body.data.windows[0], direct);
  // Search shows the same honest rate (its 7-day figures, from the same rollup).
  const found = await svc.request('GET', '/api/tools/search?q=echoSecret');
  const echo = found.body.results.tools.find((x: { id: string }) => x.id === tool.id);
  t.deepEqual(echo?.reliability, { window: '7d', calls: 50, successRate: 30 / 48 }, found.text);
  // A second finish of a final execution changes nothing.
  t.false(await finishExecution(db, ids[0]!, { status: 'failed', executionTimeMs: 1, error: { code: 'TOOL_ERROR', message: 'late' } }));
  t.like((await svc.request('GET', `/api/tools/${tool.id}/stats?window=24h`)).body.data.windows[0], { calls: 50, succeeded: 30 });
});

test.serial("search hits carry the tool's 7-day calls and success rate", async (t) => {
  const res = await svc.request('GET', '/api/tools/search?q=convert%20colour%20hex%20rgb');
  t.is(res.status, 200, res.text);
  const hit = res.body.results.tools.find((x: { name: string }) => x.name === 'convertColor');
  t.deepEqual(hit.reliability, { window: '7d', calls: 5, successRate: 0.6 });
  const quiet = res.body.results.tools.find((x: { name: string }) => !['convertColor', 'sleepy', 'echoSecret'].includes(x.name));
  if (quiet) t.deepEqual(quiet.reliability, { window: '7d', calls: 0, successRate: null });
});

test.serial('the daily sweep deletes hourly statistics older than 31 days and keeps the rest', async (t) => {
  const db = svc.api.deps.db;
  const tool = (await svc.request('GET', `/api/tools/${COLOR}`)).body.data;
  const before = (await svc.request('GET', `/api/tools/${COLOR}/stats`)).body.data;
  // Rows as the rollup would have kept them for calls 40 days ago (no execution of that age can be made now).
  const old = db.raw(`date_trunc('hour', now(), 'UTC') - interval '40 days'`);
  await db('tool_stats_hourly').insert({ tool_id: tool.id, hour: old, calls: 7, succeeded: 1 });
  await db('tool_stats_latency').insert({ tool_id: tool.id, hour: old, bucket_ms: 5, count: 7 });
  await db('tool_stats_errors').insert({ tool_id: tool.id, hour: old, code: 'OOM', count: 6 });
  const oldRows = async () => {
    const counts = await Promise.all(
      ['tool_stats_hourly', 'tool_stats_latency', 'tool_stats_errors'].map(async (table) =>
        Number((await db(table).where({ tool_id: tool.id }).andWhere('hour', '<', db.raw(`now() - interval '31 days'`)).count('* as n').first())!.n),
      ),
    );
    return counts.reduce((a, b) => a + b, 0);
  };
  t.is(await oldRows(), 3);
  await enqueue(db, 'sweep_tool_stats', {});
  await until(async () => (await oldRows()) === 0, 60_000, 'the sweep');
  t.deepEqual((await svc.request('GET', `/api/tools/${COLOR}/stats`)).body.data, before, 'recent figures unchanged');
});

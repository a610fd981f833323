import test from 'ava';
import crypto from 'node:crypto';
import path from 'node:path';
import { EXAMPLES_DIR, startService, type Service } from './helpers/service.js';
import { freePort, until } from './helpers/processes.js';

const TOKEN = crypto.randomBytes(16).toString('hex');
let svc: Service;

test.before(async () => {
  svc = await startService({
    env: { METRICS_TOKEN: TOKEN, WORKER_METRICS_PORT: String(await freePort()), HOST: '127.0.0.1', RATE_LIMIT_PRO_MINUTE: '2' },
  });
  for (const dir of ['text-tools', 'webhook-signer']) {
    const res = await svc.importPackage(`path:${path.join(EXAMPLES_DIR, dir)}`);
    if (res.status !== 201) throw new Error(res.text);
  }
});
test.after.always(() => svc?.close());

const apiMetricsUrl = () => `${svc.url}/metrics`;
const workerMetricsUrl = () => {
  if (!svc.worker?.metricsUrl) throw new Error('the worker serves no metrics');
  return svc.worker.metricsUrl;
};

async function scrape(url: string, token: string | undefined = TOKEN): Promise<string> {
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`scrape ${url}: ${res.status} ${text}`);
  return text;
}

/** The sum of a metric's samples whose labels include `labels` (0 when there is none). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) sum += Number(m[3]);
  }
  return sum;
}

test.serial('GET /metrics needs METRICS_TOKEN on the API and the worker: 401 in shape A without it or with a wrong one', async (t) => {
  for (const url of [apiMetricsUrl(), workerMetricsUrl()]) {
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}x` }, { authorization: TOKEN }] as Record<string, string>[]) {
      const res = await fetch(url, { headers });
      t.is(res.status, 401, url);
      const body = await res.json();
      t.like(body, { success: false, error: { code: 'UNAUTHORIZED' } });
    }
    const ok = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
    t.is(ok.status, 200);
    t.regex(ok.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await ok.text();
    t.regex(text, /^# HELP process_cpu_user_seconds_total /m, 'default process metrics');
    t.regex(text, /^# TYPE toolshed_jobs_total counter$/m);
  }
  const doc = await svc.request('GET', '/api/openapi.json');
  t.false('/metrics' in doc.body.paths, 'not part of the public API document');
});

test.serial('a scraper is not rate limited and needs no API key, even when a pro key is over its limit', async (t) => {
  const pro = await svc.createUser({ tier: 'pro' });
  const before = await scrape(apiMetricsUrl());
  const statuses: number[] = [];
  for (let i = 0; i < 4; i++) statuses.push((await svc.request('GET', '/api/tools', { key: pro.key })).status);
  t.deepEqual(statuses, [200, 200, 429, 429]);
  for (let i = 0; i < 5; i++) await scrape(apiMetricsUrl());
  const after = await scrape(apiMetricsUrl());
  t.is(sample(after, 'toolshed_limit_refusals_total', { code: 'RATE_LIMITED' }) - sample(before, 'toolshed_limit_refusals_total', { code: 'RATE_LIMITED' }), 2);
  t.is(
    sample(after, 'toolshed_http_requests_total', { operation: 'GET /api/tools', status: '429' }) -
      sample(before, 'toolshed_http_requests_total', { operation: 'GET /api/tools', status: '429' }),
    2,
  );
  t.true(sample(after, 'toolshed_http_requests_total', { operation: 'GET /metrics', status: '200' }) >= 6, 'scrapes are counted as themselves');
});

test.serial('requests are counted by route template and status, never by their raw path', async (t) => {
  const before = await scrape(apiMetricsUrl());
  const missing = `@nobody/missing-${crypto.randomBytes(4).toString('hex')}/tool`;
  const res = await svc.request('GET', `/api/tools/${missing}`);
  t.is(res.status, 404);
  t.is((await fetch(`${svc.url}/no/such/${missing}`)).status, 404);
  const after = await scrape(apiMetricsUrl());
  const delta = (labels: Record<string, string>) =>
    sample(after, 'toolshed_http_requests_total', labels) - sample(before, 'toolshed_http_requests_total', labels);
  t.is(delta({ operation: 'GET /api/tools/*ref', status: '404' }), 1);
  t.is(delta({ operation: 'other', status: '404' }), 1, 'a path no route matches is `other`');
  t.true(sample(after, 'toolshed_http_request_duration_seconds_count', { operation: 'GET /api/tools/*ref' }) >= 1);
  t.false(after.includes('missing-'), 'the raw path is in no label');
  t.regex(after, /^toolshed_jobs_waiting\{task="execute_tool"\} \d+$/m, 'queue gauges from Postgres');
  t.regex(after, /^toolshed_jobs_oldest_waiting_age_seconds\{task="execute_tool"\} [\d.]+$/m);
  t.regex(after, /^toolshed_sse_streams_open \d+$/m);
});

test.serial("after an execution the worker's /metrics shows its job, wait, run time and sandbox figures", async (t) => {
  const before = await scrape(workerMetricsUrl());
  const apiBefore = await scrape(apiMetricsUrl());
  const res = await svc.request('POST', '/api/tools/execute/@toolshed-examples/text-tools/slugify', { body: { params: { text: 'Hello metrics' } } });
  t.is(res.status, 200, res.text);
  t.true(res.body.success);
  // The job's attempt is recorded when its task returns, just after the execution's row is final.
  let after = '';
  await until(
    async () => {
      after = await scrape(workerMetricsUrl());
      return (
        sample(after, 'toolshed_jobs_total', { task: 'execute_tool', outcome: 'succeeded' }) >
        sample(before, 'toolshed_jobs_total', { task: 'execute_tool', outcome: 'succeeded' })
      );
    },
    20_000,
    'the worker to record the job',
  );
  const delta = (name: string, labels: Record<string, string> = {}) => sample(after, name, labels) - sample(before, name, labels);
  t.is(delta('toolshed_jobs_total', { task: 'execute_tool', outcome: 'succeeded' }), 1);
  t.is(delta('toolshed_job_run_duration_seconds_count', { task: 'execute_tool' }), 1);
  t.is(delta('toolshed_job_wait_seconds_count', { task: 'execute_tool' }), 1);
  t.true(delta('toolshed_job_run_duration_seconds_sum', { task: 'execute_tool' }) > 0);
  t.is(delta('toolshed_sandbox_executions_total', { outcome: 'ok' }), 1);
  t.is(delta('toolshed_executions_total', { status: 'succeeded', code: 'none' }), 1);
  if (svc.config.SANDBOX === 'gvisor') {
    t.true(sample(after, 'toolshed_sandbox_boot_duration_seconds_count') >= 1, 'the warm pool booted at least one sandbox');
    t.regex(after, /^toolshed_sandbox_warm_pool_ready \d+$/m);
    t.regex(after, /^toolshed_sandbox_warm_pool_misses_total \d+$/m);
  }
  const apiAfter = await scrape(apiMetricsUrl());
  const op = { operation: 'POST /api/tools/execute/*slug', status: '200' };
  t.is(sample(apiAfter, 'toolshed_http_requests_total', op) - sample(apiBefore, 'toolshed_http_requests_total', op), 1);
});

test.serial('no env value, API key, admin token, user name or params value appears in either scrape', async (t) => {
  const secret = `s3cr3t-${crypto.randomBytes(12).toString('hex')}`;
  const payload = `payload-${crypto.randomBytes(8).toString('hex')}`;
  const user = await svc.createUser({ username: `metrics_${crypto.randomBytes(4).toString('hex')}` });
  const res = await svc.request('POST', '/api/tools/execute/@toolshed-examples/webhook-signer/signPayload', {
    key: user.key,
    body: { params: { payload }, env: { WEBHOOK_SECRET: secret } },
  });
  t.is(res.status, 200, res.text);
  t.true(res.body.success);
  let worker = '';
  await until(
    async () => {
      worker = await scrape(workerMetricsUrl());
      return sample(worker, 'toolshed_sandbox_executions_total', { outcome: 'ok' }) >= 2;
    },
    20_000,
    'the worker to record the job',
  );
  const api = await scrape(apiMetricsUrl());
  t.true(sample(api, 'toolshed_http_requests_total', { operation: 'POST /api/tools/execute/*slug' }) >= 2, 'the execute was counted');
  for (const [name, text] of [
    ['api', api],
    ['worker', worker],
  ] as const) {
    for (const [what, value] of Object.entries({
      env: secret,
      params: payload,
      apiKey: user.key,
      apiKeyPrefix: user.key.slice(0, 12),
      adminToken: svc.config.ADMIN_TOKEN!,
      secretsKey: svc.config.SECRETS_KEY!,
      metricsToken: TOKEN,
      userName: user.username,
      userId: user.id,
      executionId: res.body.executionId,
    })) {
      t.false(text.includes(value), `${what} in the ${name} scrape`);
    }
  }
});

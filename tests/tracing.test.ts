/**
 * Issue 26, items 2 and 5: one trace and one request id from the HTTP request through the job to the sandbox call.
 * Real API and worker processes (`node api/server.ts`, `node worker/main.ts`, as operators run them) export to a real
 * OTLP/HTTP receiver started here; nothing of a call's params, result or env may appear in a span or a log line.
 */
import test from 'ava';
import crypto from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { EXAMPLES_DIR, FIXTURES_DIR, startService, type Service } from './helpers/service.js';
import { killAll, serviceEnv, spawnProcess, stopProcess, until, type Child } from './helpers/processes.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from './helpers/otlp-receiver.js';
import { isTracing, startTracing } from '../core/infra/tracing.js';

const ECHO = `path:${path.join(FIXTURES_DIR, 'packages', 'echo-tools')}`;
const TEXT_TOOLS = `path:${path.join(EXAMPLES_DIR, 'text-tools')}`;

let receiver: OtlpReceiver;
const services: Service[] = [];
test.before(async () => {
  receiver = await startOtlpReceiver();
});
test.after.always(async () => {
  await killAll();
  for (const s of services) await s.close();
  await receiver?.close();
});

type LogLine = Record<string, unknown> & { msg?: string; reqId?: string; traceId?: string };
const logLines = (text: string): LogLine[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A call with a unique marker in its params and a unique env value (the tool echoes the marker back). */
function secretCall() {
  const marker = `mark-${crypto.randomBytes(8).toString('hex')}`;
  const secret = `envval-${crypto.randomBytes(12).toString('hex')}`;
  return { marker, secret, body: JSON.stringify({ params: { prefix: marker }, env: { ECHO_SECRET: secret } }) };
}

interface Traced {
  svc: Service;
  api: Child;
  worker: Child;
  port: number;
}
let tracedService: Promise<Traced> | undefined;
/**
 * An API and a worker process exporting to the receiver, beside the test's own (untraced, in-process) API that
 * imports packages and makes users; shared by the tracing-on tests.
 */
function traced(): Promise<Traced> {
  tracedService ??= (async () => {
    const svc = await startService({ worker: false, sandbox: 'process' });
    services.push(svc);
    const port = await freePort();
    const env = serviceEnv(svc.config, svc.databaseUrl, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, LOG_LEVEL: 'debug' });
    const worker = spawnProcess('worker/main.ts', env);
    const api = spawnProcess('api/server.ts', { ...env, PORT: String(port), HOST: '127.0.0.1' });
    const started = (c: Child, what: RegExp) => until(async () => what.test(c.output()), 120_000, `${what}`);
    await Promise.all([started(worker, /worker started/), started(api, /API listening/)]);
    for (const source of [ECHO, TEXT_TOOLS]) {
      const imported = await svc.importPackage(source); // run by the traced worker process
      if (imported.status !== 201) throw new Error(imported.text);
    }
    return { svc, api, worker, port };
  })();
  return tracedService;
}

test.serial('tracing on: one trace links the HTTP request, its job and the sandbox call; the log lines share its request and trace ids', async (t) => {
  const { svc, api, worker, port } = await traced();

  const call = secretCall();
  const res = await fetch(`http://127.0.0.1:${port}/api/tools/execute/@fixtures/echo-tools/echoSecret`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: call.body,
  });
  const body = (await res.json()) as { success: boolean; result: unknown };
  t.is(res.status, 200, JSON.stringify(body));
  t.deepEqual(body.result, { message: `${call.marker}:[redacted]` }, 'the tool ran and saw both');
  const reqId = res.headers.get('x-request-id')!;

  const route = 'POST /api/tools/execute/*slug';
  const trio = await until(
    async () => {
      const spans = receiver.spans();
      const http = spans.find((s) => s.name === route && s.attributes['toolshed.request_id'] === reqId);
      const job = http && spans.find((s) => s.name === 'job execute_tool' && s.parentSpanId === http.spanId);
      const sandbox = job && spans.find((s) => s.name === 'sandbox.execute' && s.parentSpanId === job.spanId);
      return sandbox ? { http, job, sandbox } : undefined;
    },
    60_000,
    'the HTTP, job and sandbox spans at the receiver',
  );
  const { http, job, sandbox } = trio as { http: ReceivedSpan; job: ReceivedSpan; sandbox: ReceivedSpan };
  t.is(http.service, 'toolshed-api');
  t.is(job.service, 'toolshed-worker');
  t.is(sandbox.service, 'toolshed-worker');
  t.is(job.traceId, http.traceId, 'the job continues the request’s trace');
  t.is(sandbox.traceId, http.traceId);
  t.is(http.parentSpanId, '', 'the request span is the root');
  t.is(http.attributes['http.route'], '/api/tools/execute/*slug');
  t.is(http.attributes['http.response.status_code'], 200);
  t.like(job.attributes, { 'toolshed.job.task': 'execute_tool', 'toolshed.job.attempt': 1 });
  t.like(sandbox.attributes, {
    'toolshed.tool.name': 'echoSecret',
    'toolshed.package': '@fixtures/echo-tools@1.0.0',
    'toolshed.sandbox.outcome': 'ok',
    'toolshed.execution.status': 'succeeded',
  });

  // Nothing of the call in any span, nor in any log line of the three processes.
  const exported = receiver.bodies.join('\n');
  for (const [what, value] of [
    ['the params marker', call.marker],
    ['the env value', call.secret],
  ]) {
    t.false(exported.includes(value), `${what} is in no span`);
    for (const [who, text] of [
      ['API process', api.output()],
      ['worker process', worker.output()],
      ['test service', svc.logs()],
    ]) {
      t.false(text.includes(value), `${what} is in no log line of the ${who}`);
    }
  }

  // The request's and the job's log lines carry the same request id and trace id.
  const traceId = http.traceId;
  const apiLines = logLines(api.output()).filter((l) => l.reqId === reqId);
  t.true(
    apiLines.some((l) => l.msg === 'request'),
    'the request line has the id',
  );
  t.true(
    apiLines.every((l) => l.traceId === traceId),
    JSON.stringify(apiLines),
  );
  const workerLines = await until(
    async () => {
      const lines = logLines(worker.output()).filter((l) => l.reqId === reqId);
      return lines.some((l) => l.msg === 'job finished') ? lines : undefined;
    },
    30_000,
    'the job’s log lines',
  );
  t.deepEqual(
    ['job started', 'sandbox call', 'job finished'].filter((m) => workerLines.some((l) => l.msg === m)),
    ['job started', 'sandbox call', 'job finished'],
  );
  t.true(
    workerLines.every((l) => l.traceId === traceId),
    JSON.stringify(workerLines),
  );
});

test.serial('tracing on: a scenario run is a trace of its steps — the agent, its tool call (and its sandbox call), the judge', async (t) => {
  const { svc, api, worker, port } = await traced();
  const user = await svc.createUser({ tier: 'pro' });
  const c = await svc.request('POST', '/api/collections', { key: user.key, body: { name: 'Traced runs' } });
  const slugify = await svc.request('GET', '/api/tools/@toolshed-examples/text-tools/slugify');
  t.is(slugify.status, 200, slugify.text);
  await svc.request('POST', `/api/collections/${c.body.data.id}/tools`, { key: user.key, body: { toolId: slugify.body.data.id } });
  const marker = `marker${crypto.randomBytes(6).toString('hex')}`;
  const s = await svc.request('POST', '/api/scenarios', {
    key: user.key,
    body: { collectionId: c.body.data.id, prompt: `Slugify "Hello ${marker}" with slugify` },
  });
  t.is(s.status, 201, s.text);
  const res = await fetch(`http://127.0.0.1:${port}/api/scenarios/${s.body.data.id}/run`, { method: 'POST', headers: { authorization: `Bearer ${user.key}` } });
  const run = (await res.json()) as { data: { status: string; success: boolean; runId: string } };
  t.is(res.status, 200, JSON.stringify(run));
  t.like(run.data, { status: 'completed', success: true });

  const found = await until(
    async () => {
      const spans = receiver.spans();
      const http = spans.find((x) => x.name === 'POST /api/scenarios/:id/run' && x.attributes['toolshed.request_id'] === res.headers.get('x-request-id'));
      const job = http && spans.find((x) => x.name === 'job scenario_run' && x.parentSpanId === http.spanId);
      const agent = job && spans.find((x) => x.name === 'scenario.agent' && x.parentSpanId === job.spanId);
      const judge = job && spans.find((x) => x.name === 'scenario.judge' && x.parentSpanId === job.spanId);
      const call = agent && spans.find((x) => x.name === 'scenario.tool_call' && x.parentSpanId === agent.spanId);
      const sandbox = call && spans.find((x) => x.name === 'sandbox.execute' && x.parentSpanId === call.spanId);
      return sandbox && judge ? { http, job, agent, judge, call, sandbox } : undefined;
    },
    60_000,
    'the run’s spans at the receiver',
  );
  t.is(new Set(Object.values(found).map((x) => x!.traceId)).size, 1, 'one trace');
  t.is(found.job!.attributes['toolshed.scenario_run.id'], run.data.runId);
  t.like(found.call!.attributes, { 'toolshed.tool.name': 'slugify', 'toolshed.tool_call.outcome': 'ok' });
  t.like(found.judge!.attributes, { 'toolshed.scenario_run.verdict': 'pass' });
  t.is(found.agent!.attributes['toolshed.scenario_run.steps'], 1);
  t.false(receiver.bodies.join('\n').includes(marker), 'the prompt (and the params and result quoting it) is in no span');
  t.false(api.output().includes(marker), 'nor in a log line of the API');
  t.false(worker.output().includes(marker), 'nor of the worker');

  // A graceful stop sends what is still buffered and ends cleanly.
  t.is(await stopProcess(api, 'SIGTERM'), 0, api.output().slice(-2000));
  t.is(await stopProcess(worker, 'SIGTERM'), 0, worker.output().slice(-2000));
});

test.serial('tracing off (no endpoint): no SDK starts and nothing is sent; the log lines of a request and its job still share its request id', async (t) => {
  const before = receiver.bodies.length;
  const svc = await startService({ sandbox: 'process', env: { OTEL_EXPORTER_OTLP_ENDPOINT: '' } });
  services.push(svc);
  const tracing = await startTracing(svc.config, 'toolshed-worker');
  t.false(tracing.on);
  t.false(isTracing('toolshed-api'));
  t.false(isTracing('toolshed-worker'));
  t.is((await svc.importPackage(ECHO)).status, 201);

  const call = secretCall();
  const res = await fetch(`${svc.url}/api/tools/execute/@fixtures/echo-tools/echoSecret`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': `req-${call.marker.slice(5)}` },
    body: call.body,
  });
  t.is(res.status, 200);
  const reqId = res.headers.get('x-request-id')!;
  t.is(reqId, `req-${call.marker.slice(5)}`, 'a sane X-Request-Id from the client is kept');
  const lines = await until(
    async () => {
      const mine = logLines(svc.logs()).filter((l) => l.reqId === reqId);
      return mine.some((l) => l.msg === 'request') && mine.some((l) => l.msg === 'job finished') ? mine : undefined;
    },
    30_000,
    'the request’s and the job’s log lines',
  );
  t.deepEqual(
    ['request', 'job started', 'sandbox call', 'job finished'].filter((m) => lines.some((l) => l.msg === m)),
    ['request', 'job started', 'sandbox call', 'job finished'],
  );
  t.true(
    lines.every((l) => l.traceId === undefined),
    'no trace id without tracing',
  );
  const { rows } = await svc.api.deps.db.raw(`select params from executions order by created_at desc limit 1`);
  t.deepEqual(rows[0].params, { prefix: call.marker });
  t.false(svc.logs().includes(call.secret));
  t.false(svc.logs().includes(call.marker));
  t.is(receiver.bodies.length, before, 'nothing reached the receiver');
});

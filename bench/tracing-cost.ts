/**
 * `npx tsx bench/tracing-cost.ts`: the CPU that tracing adds to one execution, free of the noise of a shared machine's
 * throughput: the spans of one call (HTTP request, job continued from the payload's trace context, sandbox call) made
 * with the real SDK and exported to a local OTLP receiver in this process (its JSON parsing counted too), against the
 * same code with tracing off. Batches of 600 calls (1,800 spans, below the batch processor's queue) each flushed, so
 * that no span is dropped. Prints one JSON line.
 */
import { continueJobTrace, inSpan, jobTrace, SpanKind, startTracing } from '../core/infra/tracing.js';
import { withRequestId } from '../core/infra/log-context.js';
import { startOtlpReceiver } from '../tests/helpers/otlp-receiver.js';

const CALLS = 600;
const BATCHES = 10;

async function oneCall(i: number): Promise<void> {
  await withRequestId(`req-${i}`, () =>
    inSpan('toolshed-api', 'POST', { kind: SpanKind.SERVER }, async (http) => {
      http?.updateName('POST /api/tools/execute/*slug').setAttribute('http.route', '/api/tools/execute/*slug');
      const { trace } = jobTrace();
      await continueJobTrace(trace, 'job execute_tool', { 'toolshed.job.task': 'execute_tool', 'toolshed.job.attempt': 1 }, () =>
        inSpan('toolshed-worker', 'sandbox.execute', { attributes: { 'toolshed.tool.name': 'slugify', 'toolshed.package': 'text-tools@1.0.0' } }, async (s) => {
          s?.setAttributes({ 'toolshed.sandbox.outcome': 'ok', 'toolshed.execution.status': 'succeeded' });
        }),
      );
    }),
  );
}

const receiver = await startOtlpReceiver();
const out: Record<string, unknown> = { bench: 'tracing-cost', calls: CALLS * BATCHES };
for (const mode of ['off', 'on', 'off', 'on'] as const) {
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: mode === 'on' ? receiver.url : undefined, OTEL_EXPORTER_OTLP_HEADERS: {} };
  const before = receiver.spans().length;
  const cpu = process.cpuUsage();
  for (let b = 0; b < BATCHES; b++) {
    const tracing = [await startTracing(otel, 'toolshed-api'), await startTracing(otel, 'toolshed-worker')];
    for (let i = 0; i < CALLS; i++) await oneCall(i);
    for (const t of tracing) await t.close();
  }
  const used = process.cpuUsage(cpu);
  // The second round of each mode is the one quoted (the first pays module loading and JIT warm-up).
  out[`${mode}_cpu_us_per_call`] = Math.round(((used.user + used.system) / (CALLS * BATCHES)) * 10) / 10;
  out[`${mode}_spans_received`] = receiver.spans().length - before;
}
await receiver.close();
console.log(JSON.stringify(out));

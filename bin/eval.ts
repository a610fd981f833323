/**
 * `toolshed eval <collection>`: a release gate on a collection's scenarios, against any Toolshed over HTTP
 * (TOOLSHED_URL, TOOLSHED_API_KEY). Starts a batch (run-all), follows its event stream (a progress bar on a terminal,
 * a line per finished run otherwise), prints a table per scenario, optionally writes JUnit XML and compares with a
 * baseline batch, and exits 0 when the gates hold, 1 when they fail, 2 on a usage or service error.
 */
import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import Table from 'cli-table3';
import { createParser } from 'eventsource-parser';
import { XMLBuilder } from 'fast-xml-parser';
import ProgressBar from 'progress';
import { batchPassRate, scenarioStats, type ScenarioStats, type StatRun } from '../core/scenarios/scenario-batch-stats.js';

export const EVAL_USAGE = `usage: toolshed eval <collection id or uid> [options]
  --repeat N            run each scenario N times (1-10)
  --min-pass-rate R     gate: the batch's pass rate (passed runs / finished runs) must be at least R (0-1; default 1)
  --baseline ID|latest  gate: no scenario may regress against this batch (latest: the collection's newest completed one)
  --threshold T         a regression is a fall of a scenario's pass rate by more than T (0-1; default 0)
  --junit FILE          write a JUnit XML report (one testcase per scenario)
  --json                print one JSON summary on stdout (progress goes to stderr)
environment: TOOLSHED_URL (default http://localhost:3000), TOOLSHED_API_KEY
exit codes: 0 gates hold, 1 gates failed, 2 usage or service error`;

/** A usage or service error: exit 2 with its message. */
class EvalError extends Error {}

interface Client {
  get: (path: string) => Promise<any>;
  post: (path: string, body: unknown) => Promise<any>;
  stream: (path: string, lastEventId: string | undefined, onEvent: (event: string, id: string | undefined, data: any) => void) => Promise<void>;
}

function client(baseUrl: string, key: string | undefined): Client {
  const headers: Record<string, string> = key ? { authorization: `Bearer ${key}` } : {};
  const send = async (method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Response> => {
    try {
      return await fetch(new URL(path, baseUrl), {
        method,
        headers: { ...headers, ...extra, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
      throw new EvalError(`cannot reach ${baseUrl}${cause}`);
    }
  };
  const json = async (res: Response, what: string): Promise<any> => {
    const text = await res.text();
    let body: any;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!res.ok) {
      const message = body?.message ?? body?.error?.message ?? (typeof body?.error === 'string' ? body.error : text.slice(0, 200));
      throw new EvalError(`${what}: ${res.status} ${message}`);
    }
    return body;
  };
  return {
    get: async (path) => json(await send('GET', path), `GET ${path}`),
    post: async (path, body) => json(await send('POST', path, body), `POST ${path}`),
    stream: async (path, lastEventId, onEvent) => {
      const res = await send('GET', path, undefined, lastEventId ? { 'last-event-id': lastEventId } : {});
      if (!res.ok || !res.body) await json(res, `GET ${path}`);
      const parser = createParser({
        onEvent: (e) => {
          let data: unknown;
          try {
            data = JSON.parse(e.data);
          } catch {
            data = e.data;
          }
          onEvent(e.event ?? 'message', e.id, data);
        },
      });
      const decoder = new TextDecoder();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) parser.feed(decoder.decode(chunk, { stream: true }));
    },
  };
}

function rateArg(name: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (v.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1) throw new EvalError(`--${name} must be a number from 0 to 1 (got '${v}')`);
  return n;
}

const pct = (r: number | null) => (r === null ? '-' : `${Math.round(r * 1000) / 10}%`);

/** XML 1.0 cannot carry most control characters, even escaped (`&#1;` is not well-formed either): they become U+FFFD. */
const xmlText = (s: string) => s.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu, '\uFFFD');

/** Every string of the document (names, ids, attribute values and text alike) made fit for XML 1.0. */
function xmlSafe(v: unknown): unknown {
  if (typeof v === 'string') return xmlText(v);
  if (Array.isArray(v)) return v.map(xmlSafe);
  if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, xmlSafe(x)]));
  return v;
}

export interface ScenarioReport extends ScenarioStats {
  name: string;
  regressed: boolean;
  basePassRate: number | null;
}

export function junitReport(collection: string, batchId: string, scenarios: ScenarioReport[]): string {
  const failed = (s: ScenarioReport) => s.passed === 0 || s.regressed;
  const testcase = (s: ScenarioReport) => {
    const verdicts = s.verdicts.join(', ');
    const properties = [
      { '@_name': 'scenarioId', '@_value': s.scenarioId },
      { '@_name': 'passRate', '@_value': String(s.passRate ?? '') },
      { '@_name': 'flaky', '@_value': String(s.flaky) },
      { '@_name': 'regressed', '@_value': String(s.regressed) },
    ];
    const why = s.regressed ? `regressed: pass rate ${pct(s.basePassRate)} -> ${pct(s.passRate)}` : `no run passed (${verdicts})`;
    return {
      '@_name': xmlText(s.name),
      '@_classname': xmlText(collection),
      properties: { property: properties },
      ...(failed(s) ? { failure: { '@_message': xmlText(why), '@_type': s.regressed ? 'regression' : 'fail', '#text': xmlText(why) } } : {}),
      'system-out': xmlText(`verdicts: ${verdicts}${s.flaky ? ' (flaky: the verdicts disagree)' : ''}; pass rate ${pct(s.passRate)}`),
    };
  };
  const doc = {
    '?xml': { '@_version': '1.0', '@_encoding': 'UTF-8' },
    testsuites: {
      '@_name': 'toolshed eval',
      '@_tests': scenarios.length,
      '@_failures': scenarios.filter(failed).length,
      testsuite: {
        '@_name': xmlText(collection),
        '@_id': batchId,
        '@_tests': scenarios.length,
        '@_failures': scenarios.filter(failed).length,
        '@_errors': 0,
        properties: { property: [{ '@_name': 'batchId', '@_value': batchId }] },
        testcase: scenarios.map(testcase),
      },
    },
  };
  return new XMLBuilder({ ignoreAttributes: false, format: true, suppressEmptyNode: true, suppressBooleanAttributes: false, processEntities: true }).build(
    xmlSafe(doc),
  );
}

async function scenarioNamesOf(api: Client, collectionId: string): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  for (let offset = 0; ; offset += 50) {
    const page = await api.get(`/api/collections/${encodeURIComponent(collectionId)}/scenarios?limit=50&offset=${offset}`);
    for (const s of page.data.scenarios as { id: string; name: string }[]) names.set(s.id, s.name);
    if (!page.pagination?.hasMore) return names;
  }
}

/** The collection's newest completed batch (null when it has none). */
async function latestCompleted(api: Client, collectionId: string): Promise<string | null> {
  for (let offset = 0; ; offset += 100) {
    const page = await api.get(`/api/collections/${encodeURIComponent(collectionId)}/scenario-batches?limit=100&offset=${offset}`);
    const done = (page.data as { id: string; completedAt: string | null }[]).find((b) => b.completedAt !== null);
    if (done) return done.id;
    if (!page.pagination?.hasMore) return null;
  }
}

export async function runEval(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const err = (line: string) => process.stderr.write(`${line}\n`);
  let opts: ReturnType<typeof parse>;
  const parse = () =>
    parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: {
        repeat: { type: 'string' },
        'min-pass-rate': { type: 'string' },
        baseline: { type: 'string' },
        threshold: { type: 'string' },
        junit: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  try {
    opts = parse();
  } catch (e) {
    err(`${e instanceof Error ? e.message : e}\n${EVAL_USAGE}`);
    return 2;
  }
  const { values, positionals } = opts;
  if (values.help) {
    console.log(EVAL_USAGE);
    return 0;
  }
  try {
    if (positionals.length !== 1) throw new EvalError('give exactly one collection (its id or uid)');
    let repeat: number | undefined;
    if (values.repeat !== undefined) {
      if (!/^\d+$/.test(values.repeat) || +values.repeat < 1 || +values.repeat > 10)
        throw new EvalError(`--repeat must be an integer from 1 to 10 (got '${values.repeat}')`);
      repeat = +values.repeat;
    }
    const minPassRate = rateArg('min-pass-rate', values['min-pass-rate'], 1);
    const threshold = rateArg('threshold', values.threshold, 0);
    const baseUrl = env.TOOLSHED_URL || 'http://localhost:3000';
    try {
      new URL(baseUrl);
    } catch {
      throw new EvalError(`TOOLSHED_URL is not a URL: '${baseUrl}'`);
    }
    const api = client(baseUrl, env.TOOLSHED_API_KEY || undefined);
    const json = values.json ?? false;
    const say = json ? err : (line: string) => console.log(line);

    const collection = (await api.get(`/api/collections/${encodeURIComponent(positionals[0]!)}`)).data as { id: string; uid: string; name: string };
    let baseline: string | null = null;
    if (values.baseline === 'latest') {
      baseline = await latestCompleted(api, collection.id);
      if (!baseline) say('baseline: none (the collection has no completed batch yet); no regression gate');
    } else if (values.baseline !== undefined) {
      const b = (await api.get(`/api/scenario-batches/${encodeURIComponent(values.baseline)}`)).data as {
        batchId: string;
        collectionId: string;
        done: boolean;
      };
      if (b.collectionId !== collection.id) throw new EvalError(`baseline ${values.baseline} is a batch of another collection`);
      if (!b.done) throw new EvalError(`baseline ${values.baseline} is still running`);
      baseline = b.batchId;
    }
    const names = await scenarioNamesOf(api, collection.id);

    const started = (await api.post(`/api/collections/${encodeURIComponent(collection.id)}/scenarios/run-all`, repeat === undefined ? {} : { repeat }))
      .data as {
      batchId: string;
      runIds: string[];
      skipped: number;
    };
    const total = started.runIds.length;
    say(
      `batch ${started.batchId}: ${total} runs of '${collection.name}' (${collection.uid})${started.skipped ? `, ${started.skipped} skipped (daily quota)` : ''}`,
    );

    const bar =
      !json && process.stderr.isTTY
        ? new ProgressBar('  running [:bar] :current/:total :percent :etas', { total: Math.max(total, 1), width: 30, stream: process.stderr })
        : null;
    let done: { runs: StatRun[] } | null = null;
    let lastId: string | undefined;
    for (let attempt = 0; !done; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(500 * attempt, 5000)));
      if (attempt > 20) throw new EvalError(`lost the event stream of batch ${started.batchId}`);
      try {
        await api.stream(`/api/scenario-batches/${started.batchId}/events`, lastId, (event, id, data) => {
          if (id) lastId = id;
          if (event === 'run.completed') {
            const verdict = data.status === 'failed' ? 'error' : data.success ? 'pass' : 'fail';
            if (bar) bar.tick();
            else err(`[${data.finished}/${data.total}] ${names.get(data.scenarioId) ?? data.scenarioId}: ${verdict}`);
          } else if (event === 'done') {
            done = {
              runs: (data.runs as { scenarioId: string; status: StatRun['status']; success: boolean | null }[]).map((r) => ({
                scenario_id: r.scenarioId,
                status: r.status,
                success: r.success,
              })),
            };
          }
        });
      } catch (e) {
        // An HTTP refusal ends here; a connection lost mid-stream is resumed after the last event seen.
        if (e instanceof EvalError && !/^cannot reach/.test(e.message)) throw e;
      }
    }
    if (bar && !bar.complete) bar.terminate();
    const runs = (done as { runs: StatRun[] }).runs;

    let compare: { scenarios: { scenarioId: string; basePassRate: number | null; change: string }[]; totals: Record<string, number> } | null = null;
    if (baseline) compare = (await api.get(`/api/scenario-batches/${baseline}/compare/${started.batchId}?threshold=${threshold}`)).data;
    const changeOf = new Map(compare?.scenarios.map((s) => [s.scenarioId, s]) ?? []);
    const scenarios: ScenarioReport[] = scenarioStats(runs).map((s) => ({
      ...s,
      name: names.get(s.scenarioId) ?? s.scenarioId,
      regressed: changeOf.get(s.scenarioId)?.change === 'regression',
      basePassRate: changeOf.get(s.scenarioId)?.basePassRate ?? null,
    }));
    const overall = batchPassRate(runs);
    const regressions = scenarios.filter((s) => s.regressed);
    const failures: string[] = [];
    if (overall.passRate === null || overall.passRate < minPassRate) failures.push(`pass rate ${pct(overall.passRate)} is below ${pct(minPassRate)}`);
    if (regressions.length)
      failures.push(`${regressions.length} scenario(s) regressed against baseline ${baseline}: ${regressions.map((s) => s.name).join(', ')}`);
    if (started.skipped) failures.push(`${started.skipped} run(s) were skipped (daily quota): the batch is incomplete`);

    if (values.junit) await writeFile(values.junit, junitReport(collection.uid, started.batchId, scenarios));

    if (json) {
      const summary = {
        ok: failures.length === 0,
        batchId: started.batchId,
        collection: { id: collection.id, uid: collection.uid, name: collection.name },
        baseline,
        passRate: overall.passRate,
        minPassRate,
        passed: overall.passed,
        failed: overall.failed,
        skipped: started.skipped,
        failures,
        scenarios: scenarios.map((s) => ({
          scenarioId: s.scenarioId,
          name: s.name,
          passRate: s.passRate,
          verdicts: s.verdicts,
          flaky: s.flaky,
          regressed: s.regressed,
          basePassRate: s.basePassRate,
        })),
        ...(compare ? { totals: compare.totals } : {}),
      };
      console.log(JSON.stringify(summary));
    } else {
      const table = new Table({ head: ['scenario', 'pass rate', 'verdicts', 'flaky', 'regressed'], style: { head: [], border: [] } });
      const sorted = [...scenarios].sort(
        (a, b) => Number(b.regressed) - Number(a.regressed) || Number(b.flaky) - Number(a.flaky) || (a.passRate ?? 0) - (b.passRate ?? 0),
      );
      for (const s of sorted) {
        table.push([
          s.name.length > 60 ? `${s.name.slice(0, 59)}…` : s.name,
          pct(s.passRate),
          s.verdicts.join(' '),
          s.flaky ? 'flaky' : '',
          s.regressed ? `${pct(s.basePassRate)} -> ${pct(s.passRate)}` : '',
        ]);
      }
      console.log(table.toString());
      console.log(`pass rate ${pct(overall.passRate)} (${overall.passed}/${overall.passed + overall.failed} runs)${baseline ? `; baseline ${baseline}` : ''}`);
      console.log(failures.length ? `FAILED: ${failures.join('; ')}` : 'gates hold');
    }
    return failures.length ? 1 : 0;
  } catch (e) {
    // Usage and service errors, and anything unexpected: 2, never the gate's 1.
    err(`toolshed eval: ${e instanceof Error ? e.message : String(e)}`);
    return 2;
  }
}

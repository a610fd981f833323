/**
 * Batch evaluation in the browser: a collection's owner generates scenarios and runs them all (with repeats); a
 * batch's page follows its runs live (one event stream, no polling), then shows the matrix of verdicts (scenarios ×
 * repeats) with flaky and regressed scenarios first, what it cost, and the collection's pass rate across batches; the
 * comparison page sets two batches side by side.
 */
import { useEffect, useState } from 'preact/hooks';
import { get, getFresh, post, qs, stream } from '../api.js';
import { ErrorMessage, formatDate, plural, Show, useAsync } from '../components/common.js';
import { navigate } from '../router.js';

const pct = (r: number | null | undefined) => (r === null || r === undefined ? '—' : `${Math.round(r * 100)}%`);
const tokens = (n: number | undefined) => (n === undefined ? '—' : n.toLocaleString('en'));
const usd = (n: number | null | undefined) => (n === null || n === undefined ? '—' : `$${n < 0.01 && n > 0 ? n.toFixed(4) : n.toFixed(2)}`);

/** The owner's batch actions on a collection page: generate scenarios, run them all k times, and the history. */
export function BatchActions({ collection, onGenerated }: { collection: any; onGenerated: () => void }) {
  const [count, setCount] = useState(3);
  const [repeat, setRepeat] = useState(1);
  const [busy, setBusy] = useState<'generate' | 'run'>();
  const [note, setNote] = useState<string>();
  const [error, setError] = useState<unknown>();
  const base = `/api/collections/${encodeURIComponent(collection.id)}`;
  const generate = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setNote(undefined);
    setBusy('generate');
    try {
      const r = await post(`${base}/scenarios/generate`, { count });
      const made = r.data.scenarios.length as number;
      setNote(
        made === count
          ? `${plural(made, 'scenario')} generated.`
          : `${plural(made, 'scenario')} generated (${count - made} dropped as too similar to existing ones).`,
      );
      onGenerated();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(undefined);
    }
  };
  const runAll = async (e: Event) => {
    e.preventDefault();
    setError(undefined);
    setNote(undefined);
    setBusy('run');
    try {
      const r = await post(`${base}/scenarios/run-all`, { repeat });
      navigate(`/scenario-batches/${r.data.batchId}`);
    } catch (err) {
      setError(err);
      setBusy(undefined);
    }
  };
  return (
    <div class="panel" aria-labelledby="batch-h">
      <h3 id="batch-h">Evaluate</h3>
      <form class="row" onSubmit={generate}>
        <label for="gen-count">Scenarios to generate</label>
        <input id="gen-count" type="number" min={1} max={10} value={count} onInput={(e) => setCount(Number(e.currentTarget.value))} />
        <button type="submit" disabled={!!busy}>
          {busy === 'generate' ? 'Generating…' : 'Generate scenarios'}
        </button>
      </form>
      <form class="row" onSubmit={runAll}>
        <label for="run-repeat">Runs of each scenario</label>
        <select id="run-repeat" value={repeat} onChange={(e) => setRepeat(Number(e.currentTarget.value))}>
          {[1, 2, 3, 4, 5, 10].map((k) => (
            <option value={k}>{k}</option>
          ))}
        </select>
        <button type="submit" disabled={!!busy}>
          {busy === 'run' ? 'Starting…' : 'Run all'}
        </button>
      </form>
      <small>Each run takes one unit of your daily scenario quota; a batch that does not fit is refused whole.</small>
      {note && <p role="status">{note}</p>}
      <ErrorMessage error={error} />
    </div>
  );
}

/** A collection's batches, newest first, linking each batch. */
export function BatchHistory({ collectionId }: { collectionId: string }) {
  const history = useAsync(async () => historyOf(collectionId, 10), [collectionId]);
  return (
    <section aria-labelledby="batches-h">
      <h2 id="batches-h">Batches</h2>
      <Show value={history}>
        {(items) =>
          items.length === 0 ? (
            <p class="muted">No batch yet.</p>
          ) : (
            <ul class="plain">
              {items.map((b) => (
                <li class="row">
                  <a href={`/scenario-batches/${b.id}`}>{formatDate(b.createdAt)}</a>
                  <span>{b.completedAt ? `pass rate ${pct(b.passRate)}` : 'running'}</span>
                  <span class="muted">{plural(b.total, 'run')}</span>
                </li>
              ))}
            </ul>
          )
        }
      </Show>
    </section>
  );
}

async function historyOf(collectionId: string, limit: number): Promise<any[]> {
  const r = await get(`/api/collections/${encodeURIComponent(collectionId)}/scenario-batches${qs({ limit })}`);
  return Array.isArray(r.data) ? r.data : (r.data?.batches ?? []);
}

interface Cell {
  runId: string;
  verdict: 'pass' | 'fail' | null;
  status: string;
}

export function BatchPage({ id }: { id: string }) {
  const batch = useAsync(async () => (await getFresh(`/api/scenario-batches/${id}`)).data, [id]);
  // Verdicts that arrived on the stream since the batch was read (by run id).
  const [live, setLive] = useState<Record<string, Cell>>({});
  const [finished, setFinished] = useState<number>();
  const done = batch.data?.done === true;
  useEffect(() => {
    if (!batch.data || done) return;
    return stream(`/api/scenario-batches/${id}/events`, {
      'run.completed': (d) => {
        setLive((l) => ({ ...l, [d.runId]: { runId: d.runId, verdict: d.verdict, status: d.status } }));
        setFinished(d.finished);
      },
      // The final report (per-scenario rates, usage, cost) is read once, when the batch is done.
      done: () => batch.reload(),
    });
  }, [id, !!batch.data, done]);
  return <Show value={batch}>{(b) => <BatchView b={b} live={live} finished={finished} />}</Show>;
}

function BatchView({ b, live, finished }: { b: any; live: Record<string, Cell>; finished?: number }) {
  const collection = useAsync(async () => (await get(`/api/collections/${encodeURIComponent(b.collectionId)}`)).data, [b.collectionId]);
  const names = useAsync(
    async () =>
      new Map<string, string>(
        ((await get(`/api/collections/${encodeURIComponent(b.collectionId)}/scenarios`)).data.scenarios as any[]).map((s) => [s.id, s.name]),
      ),
    [b.collectionId],
  );
  const history = useAsync(async () => historyOf(b.collectionId, 20), [b.collectionId, b.done]);
  // The batch before this one (completed), for regressions: the API's base (`:id`) is the older batch, its head
  // (`:otherId`) this one, so a scenario that passed before and fails now is a regression, not an improvement.
  const previous = b.done ? history.data?.find((h) => h.id !== b.batchId && h.completedAt && new Date(h.createdAt) < new Date(b.createdAt)) : undefined;
  const compare = useAsync(
    async () => (previous ? (await get(`/api/scenario-batches/${previous.id}/compare/${b.batchId}`)).data : null),
    [b.batchId, previous?.id],
  );
  const changeOf = new Map<string, string>(((compare.data?.scenarios ?? []) as any[]).map((s) => [s.scenarioId, s.change]));

  const rows = matrix(b, live, names.data);
  const regressed = (r: Row) => changeOf.get(r.scenarioId) === 'regression';
  rows.sort((x, y) => Number(regressed(y)) - Number(regressed(x)) || Number(y.flaky) - Number(x.flaky) || x.name.localeCompare(y.name));
  const width = Math.max(1, ...rows.map((r) => r.cells.length));
  const progress = b.done ? b.total : Math.max(finished ?? 0, b.completed + b.failed);
  return (
    <article>
      <header class="page-head">
        <h1>Batch of {formatDate(b.createdAt)}</h1>
        <p class="pkg">
          {collection.data ? (
            <a href={`/collections/${collection.data.uid}`}>
              {collection.data.owner.username}/{collection.data.uid}
            </a>
          ) : (
            'collection'
          )}{' '}
          · {plural(rows.length, 'scenario')} × {b.repeat ?? width} · {plural(b.total, 'run')}
          {b.skipped ? ` (${b.skipped} skipped: quota)` : ''}
        </p>
      </header>
      {b.done ? (
        <p class="lead" data-testid="batch-summary">
          Pass rate <strong>{pct(b.passRate ?? (b.completed ? b.passed / b.completed : null))}</strong> · {plural(b.passed, 'run')} passed, {b.failedVerdicts}{' '}
          judged fail{b.failed ? `, ${b.failed} failed to run` : ''}
          {b.flakyCount ? ` · ${plural(b.flakyCount, 'flaky scenario')}` : ''}
          {compare.data ? ` · ${plural(compare.data.totals.regressions, 'regression')} since the batch before` : ''}
        </p>
      ) : (
        <p role="status" aria-live="polite">
          <progress max={b.total} value={progress} /> {progress} of {plural(b.total, 'run')} finished…
        </p>
      )}
      <section aria-labelledby="matrix-h">
        <h2 id="matrix-h">Verdicts</h2>
        <table class="matrix">
          <caption class="visually-hidden">Each scenario's runs; regressed and flaky scenarios first</caption>
          <thead>
            <tr>
              <th scope="col">Scenario</th>
              {Array.from({ length: width }, (_, i) => (
                <th scope="col">Run {i + 1}</th>
              ))}
              <th scope="col">Pass rate</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr data-scenario={r.scenarioId}>
                <th scope="row">
                  <a href={`/scenarios/${r.scenarioId}`}>{r.name}</a>
                  {regressed(r) && <span class="badge verdict-fail"> regressed</span>}
                  {r.flaky && <span class="badge flaky"> flaky</span>}
                </th>
                {Array.from({ length: width }, (_, i) => {
                  const c = r.cells[i];
                  return <td>{c ? <CellMark c={c} /> : ''}</td>;
                })}
                <td>{pct(r.passRate)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </section>
      {b.done && <Cost b={b} />}
      <section aria-labelledby="trend-h">
        <h2 id="trend-h">Pass rate across batches</h2>
        <Show value={history}>{(h) => <TrendChart points={h.filter((x) => x.completedAt && x.passRate !== null).reverse()} current={b.batchId} />}</Show>
      </section>
      {previous && (
        <p>
          <a href={`/scenario-batches/${b.batchId}/compare/${previous.id}`}>Compare with the batch before ({formatDate(previous.createdAt)})</a>
        </p>
      )}
    </article>
  );
}

function CellMark({ c }: { c: Cell }) {
  const word = c.verdict ?? (c.status === 'failed' ? 'error' : c.status === 'completed' ? '—' : c.status);
  const mark = c.verdict === 'pass' ? '✓' : c.verdict === 'fail' ? '✗' : c.status === 'failed' ? '!' : '…';
  return (
    <a href={`/scenario-runs/${c.runId}`} class={`cell verdict-${c.verdict ?? c.status}`} title={word}>
      <span aria-hidden="true">{mark}</span>
      <span class="visually-hidden">{word}</span>
    </a>
  );
}

interface Row {
  scenarioId: string;
  name: string;
  cells: Cell[];
  passRate: number | null;
  flaky: boolean;
}

/** Scenarios × runs: the service's per-scenario report when it has one, with the verdicts streamed since. */
function matrix(b: any, live: Record<string, Cell>, names?: Map<string, string>): Row[] {
  const byScenario = new Map<string, Cell[]>();
  for (const r of b.runs as any[]) {
    const cell = live[r.runId] ?? { runId: r.runId, verdict: r.verdict, status: r.status };
    byScenario.set(r.scenarioId, [...(byScenario.get(r.scenarioId) ?? []), cell]);
  }
  const stats = new Map<string, any>(((b.scenarios ?? []) as any[]).map((s) => [s.scenarioId, s]));
  return [...byScenario.entries()].map(([scenarioId, cells]) => {
    const judged = cells.filter((c) => c.verdict);
    const passes = judged.filter((c) => c.verdict === 'pass').length;
    const s = stats.get(scenarioId);
    return {
      scenarioId,
      name: s?.name ?? names?.get(scenarioId) ?? 'scenario',
      cells,
      passRate: s ? s.passRate : judged.length ? passes / judged.length : null,
      flaky: s ? s.flaky : passes > 0 && passes < judged.length,
    };
  });
}

function Cost({ b }: { b: any }) {
  if (!b.usage) return null;
  const parts: [string, string][] = [
    ['Agent', 'agent'],
    ['Judge', 'judge'],
    ['Total', 'total'],
  ];
  return (
    <section aria-labelledby="cost-h">
      <h2 id="cost-h">Tokens and cost</h2>
      <table class="cost">
        <caption class="visually-hidden">Tokens used by the agent and the judge, and what they cost</caption>
        <thead>
          <tr>
            <th scope="col" />
            <th scope="col">Input tokens</th>
            <th scope="col">Output tokens</th>
            <th scope="col">Cost</th>
          </tr>
        </thead>
        <tbody>
          {parts.map(([label, key]) => (
            <tr>
              <th scope="row">{label}</th>
              <td>{tokens(b.usage[key]?.inputTokens)}</td>
              <td>{tokens(b.usage[key]?.outputTokens)}</td>
              <td>{b.cost ? usd(b.cost[key]) : '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {!b.cost && <p class="muted">{b.costNote ?? 'No prices are configured (LLM_PRICES)'}: only tokens are shown.</p>}
    </section>
  );
}

/** The collection's pass rate, batch after batch: an SVG line with its points, and the same figures as a list. */
function TrendChart({ points, current }: { points: any[]; current: string }) {
  if (points.length === 0) return <p class="muted">No finished batch yet.</p>;
  const w = 600;
  const h = 160;
  const pad = 24;
  const x = (i: number) => (points.length === 1 ? w / 2 : pad + (i * (w - 2 * pad)) / (points.length - 1));
  const y = (r: number) => h - pad - r * (h - 2 * pad);
  const line = points.map((p, i) => `${i ? 'L' : 'M'}${x(i).toFixed(1)},${y(p.passRate).toFixed(1)}`).join(' ');
  return (
    <figure class="trend">
      <svg viewBox={`0 0 ${w} ${h}`} role="img" aria-labelledby="trend-cap" width="100%">
        <line x1={pad} x2={w - pad} y1={y(0)} y2={y(0)} class="axis" />
        <line x1={pad} x2={w - pad} y1={y(1)} y2={y(1)} class="axis" />
        <text x={2} y={y(1) + 4} class="tick">
          100%
        </text>
        <text x={2} y={y(0) + 4} class="tick">
          0%
        </text>
        <path d={line} class="trend-line" fill="none" />
        {points.map((p, i) => (
          <circle cx={x(i)} cy={y(p.passRate)} r={p.id === current ? 6 : 4} class={p.id === current ? 'point current' : 'point'}>
            <title>
              {formatDate(p.createdAt)}: {pct(p.passRate)}
            </title>
          </circle>
        ))}
      </svg>
      <figcaption id="trend-cap">
        Pass rate of the last {plural(points.length, 'finished batch', 'finished batches')}, oldest first: {points.map((p) => pct(p.passRate)).join(', ')}.
      </figcaption>
    </figure>
  );
}

/**
 * `/scenario-batches/:id/compare/:other`: the two batches in time order whichever way the address names them — the
 * older is the API's base ("Before"), the newer its head ("After").
 */
export function ComparePage({ id, other }: { id: string; other: string }) {
  const cmp = useAsync(async () => {
    const first = (await get(`/api/scenario-batches/${other}/compare/${id}`)).data;
    if (new Date(first.base.createdAt) <= new Date(first.head.createdAt)) return first;
    return (await get(`/api/scenario-batches/${id}/compare/${other}`)).data;
  }, [id, other]);
  return (
    <Show value={cmp}>
      {(c) => {
        const order = ['regression', 'flaky', 'improvement', 'added', 'removed', 'unchanged'];
        const rows = [...(c.scenarios as any[])].sort((a, b) => order.indexOf(a.change) - order.indexOf(b.change) || a.name.localeCompare(b.name));
        return (
          <article>
            <header class="page-head">
              <h1>Two batches side by side</h1>
              <p class="pkg">
                Before: <a href={`/scenario-batches/${c.base.id}`}>{formatDate(c.base.createdAt)}</a> ({pct(c.base.passRate)}) · After:{' '}
                <a href={`/scenario-batches/${c.head.id}`}>{formatDate(c.head.createdAt)}</a> ({pct(c.head.passRate)})
              </p>
            </header>
            <p class="lead" data-testid="compare-summary">
              {plural(c.totals.regressions, 'regression')}, {plural(c.totals.improvements, 'improvement')}, {c.totals.flaky} flaky, {c.totals.unchanged}{' '}
              unchanged{c.totals.added ? `, ${c.totals.added} added` : ''}
              {c.totals.removed ? `, ${c.totals.removed} removed` : ''}
            </p>
            <table>
              <caption class="visually-hidden">Each scenario's pass rate in both batches</caption>
              <thead>
                <tr>
                  <th scope="col">Scenario</th>
                  <th scope="col">Before</th>
                  <th scope="col">After</th>
                  <th scope="col">Change</th>
                </tr>
              </thead>
              <tbody>
                {rows.map((s) => (
                  <tr data-change={s.change}>
                    <th scope="row">
                      <a href={`/scenarios/${s.scenarioId}`}>{s.name}</a>
                    </th>
                    <td>{pct(s.basePassRate)}</td>
                    <td>{pct(s.headPassRate)}</td>
                    <td>
                      <span class={`badge change-${s.change}`}>{s.change}</span>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </article>
        );
      }}
    </Show>
  );
}

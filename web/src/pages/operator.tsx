/**
 * The operator's page (/operator): what the service is doing, for whoever holds the ADMIN_TOKEN. The token is asked
 * for once and kept in this tab only (sessionStorage); the page asks GET /api/admin/operations every few seconds while
 * it is visible: workers with the jobs they lease, the queue by task with its oldest waiting job, imports in
 * progress, the last hour's failures by code, and finished executions and scenario runs per minute.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, getAsAdmin } from '../api.js';
import { ErrorMessage, formatDate, plural } from '../components/common.js';

const TOKEN_KEY = 'toolshed.adminToken';
export const OPERATOR_REFRESH_MS = 5000;

const seconds = (s: number | null) => {
  if (s === null) return '—';
  if (s < 90) return `${Math.round(s)} s`;
  if (s < 5400) return `${Math.round(s / 60)} min`;
  return `${(s / 3600).toFixed(1)} h`;
};
const ago = (iso: string) => seconds(Math.max(0, (Date.now() - new Date(iso).getTime()) / 1000));
const time = (iso: string) => new Date(iso).toLocaleTimeString();

export function OperatorPage() {
  const [token, setToken] = useState<string | null>(() => sessionStorage.getItem(TOKEN_KEY));
  const [draft, setDraft] = useState('');
  const [data, setData] = useState<any>();
  const [error, setError] = useState<unknown>();
  const [refused, setRefused] = useState(false);

  useEffect(() => {
    if (!token) return;
    let live = true;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const load = async () => {
      if (document.visibilityState === 'visible') {
        try {
          const r = await getAsAdmin('/api/admin/operations', token);
          if (!live) return;
          setData(r.data);
          setError(undefined);
        } catch (err) {
          if (!live) return;
          if (err instanceof ApiError && err.status === 401) {
            sessionStorage.removeItem(TOKEN_KEY);
            setRefused(true);
            setToken(null);
            return;
          }
          setError(err);
        }
      }
      if (live) timer = setTimeout(load, OPERATOR_REFRESH_MS);
    };
    void load();
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [token]);

  if (!token) {
    const submit = (e: Event) => {
      e.preventDefault();
      const t = draft.trim();
      if (!t) return;
      sessionStorage.setItem(TOKEN_KEY, t);
      setRefused(false);
      setData(undefined);
      setDraft('');
      setToken(t);
    };
    return (
      <article class="narrow">
        <h1>Operations</h1>
        <p>This page shows the service's workers, queue and failures to its operator. Enter the admin token (ADMIN_TOKEN) to see it.</p>
        {refused && (
          <p class="error" role="alert">
            That token was refused. Check the service's ADMIN_TOKEN and try again.
          </p>
        )}
        <form onSubmit={submit}>
          <label class="field">
            Admin token
            <input type="password" autocomplete="off" value={draft} onInput={(e) => setDraft((e.target as HTMLInputElement).value)} required />
          </label>
          <button type="submit">Show operations</button>
        </form>
        <p class="muted">The token stays in this browser tab only and is sent to this service alone.</p>
      </article>
    );
  }

  const signOut = () => {
    sessionStorage.removeItem(TOKEN_KEY);
    setData(undefined);
    setToken(null);
  };
  return (
    <article>
      <div class="page-head">
        <h1>Operations</h1>
        <button type="button" onClick={signOut}>
          Forget the token
        </button>
      </div>
      <ErrorMessage error={error} />
      {!data ? (
        <p class="muted" role="status">
          Loading…
        </p>
      ) : (
        <Operations d={data} />
      )}
    </article>
  );
}

function Operations({ d }: { d: any }) {
  const alive = (d.workers as any[]).filter((w) => w.alive);
  const waiting = (d.queue as any[]).reduce((n, q) => n + q.waiting, 0);
  return (
    <>
      <p class="muted" role="status">
        Updated {time(d.at)}, again every {OPERATOR_REFRESH_MS / 1000} s. {plural(alive.length, 'live worker')}, {plural(waiting, 'job')} waiting.
      </p>
      <section aria-labelledby="op-workers">
        <h2 id="op-workers">Workers</h2>
        {d.workers.length === 0 ? (
          <p>No worker has checked in. Start one (`npm run worker`), or check its log.</p>
        ) : (
          <div class="table-scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">Worker</th>
                  <th scope="col">State</th>
                  <th scope="col">Last heartbeat</th>
                  <th scope="col">Running</th>
                </tr>
              </thead>
              <tbody>
                {(d.workers as any[]).map((w) => (
                  <tr>
                    <th scope="row">
                      {w.hostname} · pid {w.pid}
                    </th>
                    <td>{w.alive ? 'alive' : 'gone (no heartbeat within its lease)'}</td>
                    <td>{ago(w.lastSeenAt)} ago</td>
                    <td>
                      {w.jobs.length === 0 ? 'idle' : (w.jobs as any[]).map((j) => `${j.task} #${j.id} (attempt ${j.attempts}, ${ago(j.lockedAt)})`).join(', ')}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section aria-labelledby="op-queue">
        <h2 id="op-queue">Queue</h2>
        {d.queue.length === 0 ? (
          <p>The queue is empty.</p>
        ) : (
          <div class="table-scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">Task</th>
                  <th scope="col">Waiting</th>
                  <th scope="col">Oldest waiting</th>
                  <th scope="col">Running</th>
                  <th scope="col">Scheduled</th>
                  <th scope="col">Out of attempts</th>
                </tr>
              </thead>
              <tbody>
                {(d.queue as any[]).map((q) => (
                  <tr>
                    <th scope="row">{q.task}</th>
                    <td>{q.waiting}</td>
                    <td>{seconds(q.oldestWaitingSeconds)}</td>
                    <td>{q.running}</td>
                    <td>{q.scheduled}</td>
                    <td>{q.failed}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section aria-labelledby="op-hour">
        <h2 id="op-hour">Last hour</h2>
        <HourChart minutes={d.lastHour} />
      </section>
      <section aria-labelledby="op-failures">
        <h2 id="op-failures">Recent failures</h2>
        {d.recentFailures.length === 0 ? (
          <p>Nothing failed in the last hour.</p>
        ) : (
          <div class="table-scroll">
            <table>
              <thead>
                <tr>
                  <th scope="col">When</th>
                  <th scope="col">What</th>
                  <th scope="col">Code</th>
                </tr>
              </thead>
              <tbody>
                {(d.recentFailures as any[]).map((f) => (
                  <tr>
                    <td>{formatDate(f.at)}</td>
                    <td>
                      {f.kind === 'execution' ? `execution of ${f.subject}` : f.kind === 'import' ? `import of ${f.subject}` : 'scenario run'}{' '}
                      <span class="muted">{f.id}</span>
                    </td>
                    <td>
                      <code>{f.code ?? '—'}</code>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      <section aria-labelledby="op-imports">
        <h2 id="op-imports">Imports in progress</h2>
        {d.imports.length === 0 ? (
          <p>None.</p>
        ) : (
          <ul>
            {(d.imports as any[]).map((i) => (
              <li>
                <code>{i.source}</code>: {i.status}, asked {ago(i.createdAt)} ago
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}

/** Finished executions per minute (succeeded below, failed stacked on top) and scenario runs, as bars, and in words. */
function HourChart({ minutes }: { minutes: any[] }) {
  const total = (k: string) => minutes.reduce((n, m) => n + m[k], 0);
  const ok = total('executionsSucceeded');
  const failed = total('executionsFailed');
  const runs = total('scenarioRuns');
  const max = Math.max(1, ...minutes.map((m) => m.executionsSucceeded + m.executionsFailed), ...minutes.map((m) => m.scenarioRuns));
  const w = 600;
  const h = 140;
  const pad = 20;
  const bw = (w - 2 * pad) / minutes.length;
  const y = (n: number) => ((h - 2 * pad) * n) / max;
  return (
    <figure class="trend">
      <svg viewBox={`0 0 ${w} ${h}`} role="img" aria-labelledby="hour-cap" width="100%">
        <line x1={pad} x2={w - pad} y1={h - pad} y2={h - pad} class="axis" />
        <text x={2} y={pad} class="tick">
          {max}
        </text>
        {minutes.map((m, i) => {
          const x = pad + i * bw;
          const okH = y(m.executionsSucceeded);
          const failH = y(m.executionsFailed);
          const runH = y(m.scenarioRuns);
          return (
            <g>
              <title>
                {time(m.minute)}: {m.executionsSucceeded} succeeded, {m.executionsFailed} failed, {plural(m.scenarioRuns, 'scenario run')}
              </title>
              <rect x={x + 1} width={Math.max(1, bw / 2 - 1)} y={h - pad - okH} height={okH} class="bar-ok" />
              <rect x={x + 1} width={Math.max(1, bw / 2 - 1)} y={h - pad - okH - failH} height={failH} class="bar-failed" />
              <rect x={x + bw / 2} width={Math.max(1, bw / 2 - 1)} y={h - pad - runH} height={runH} class="bar-runs" />
            </g>
          );
        })}
        <text x={pad} y={h - 4} class="tick">
          −60 min
        </text>
        <text x={w - pad - 24} y={h - 4} class="tick">
          now
        </text>
      </svg>
      <figcaption id="hour-cap">
        In the last hour: {plural(ok + failed, 'execution')} finished ({ok} succeeded, {failed} failed) and {plural(runs, 'scenario run')}; bars per minute,
        executions (succeeded, failed on top) then scenario runs.
      </figcaption>
    </figure>
  );
}

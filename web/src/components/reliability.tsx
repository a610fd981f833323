/**
 * A tool's reliability on its page: calls, success rate, p50/p95 run time and top error codes over 24 h, 7 d and 30 d
 * (GET /api/tools/:id/stats), and its calls per day over 30 days as an inline SVG bar chart (failures stacked in red).
 */
import { get } from '../api.js';
import { Breakable, ErrorMessage, plural, useAsync } from './common.js';

const WINDOW_LABEL: Record<string, string> = { '24h': '24 hours', '7d': '7 days', '30d': '30 days' };
const pct = (r: number | null) => (r === null ? '—' : `${(Math.floor(r * 1000) / 10).toString()}%`);
/** A run time with its unit, never wrapped between them. */
const ms = (v: number | null) =>
  v === null ? '—' : v >= 10_000 ? `${(v / 1000).toFixed(0)}\u00a0s` : v >= 1000 ? `${(v / 1000).toFixed(1)}\u00a0s` : `${v}\u00a0ms`;

export function Reliability({ toolId }: { toolId: string }) {
  const stats = useAsync(async () => (await get(`/api/tools/${toolId}/stats`)).data, [toolId]);
  return (
    <section aria-labelledby="reliability-h" class="panel reliability" data-testid="reliability">
      <h2 id="reliability-h">Reliability</h2>
      {stats.error ? <ErrorMessage error={stats.error} /> : stats.data ? <Figures stats={stats.data} /> : <p class="muted">Loading…</p>}
    </section>
  );
}

function Figures({ stats }: { stats: any }) {
  return (
    <>
      <table class="reliability-table">
        <caption class="visually-hidden">Calls, success rate, run time and most frequent errors by period</caption>
        <thead>
          <tr>
            <th scope="col">Last</th>
            <th scope="col">Calls</th>
            <th scope="col">Success</th>
            <th scope="col">p50 / p95</th>
            <th scope="col">Top errors</th>
          </tr>
        </thead>
        <tbody>
          {stats.windows.map((w: any) => (
            <tr>
              <th scope="row">{WINDOW_LABEL[w.window] ?? w.window}</th>
              <td>{w.calls}</td>
              <td>
                {pct(w.successRate)}
                {w.platformFailures > 0 && <small class="muted"> ({plural(w.platformFailures, 'platform failure')} left out)</small>}
              </td>
              <td>
                {ms(w.p50Ms)} / {ms(w.p95Ms)}
              </td>
              <td class="codes">
                {w.topErrors.length === 0
                  ? '—'
                  : w.topErrors.map((e: any, i: number) => (
                      <span>
                        {i > 0 && ', '}
                        <Breakable text={e.code} />
                        {'\u00a0'}×{e.count}
                      </span>
                    ))}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <DailyChart days={stats.daily} />
    </>
  );
}

/** Calls per day, oldest first: a bar each, its failed part on top in red; the same figures in the caption. */
function DailyChart({ days }: { days: { day: string; calls: number; succeeded: number }[] }) {
  const total = days.reduce((n, d) => n + d.calls, 0);
  if (total === 0) return <p class="muted">No calls in the last 30 days.</p>;
  const w = 600;
  const h = 120;
  const pad = 4;
  const max = Math.max(...days.map((d) => d.calls));
  const slot = (w - 2 * pad) / days.length;
  const height = (n: number) => (n / max) * (h - 2 * pad);
  const busiest = days.find((d) => d.calls === max)!;
  return (
    <figure class="daily">
      <svg viewBox={`0 0 ${w} ${h}`} role="img" aria-labelledby="daily-cap" width="100%" preserveAspectRatio="none">
        <line x1={pad} x2={w - pad} y1={h - pad} y2={h - pad} class="axis" />
        {days.map((d, i) => {
          const failed = d.calls - d.succeeded;
          const x = pad + i * slot + slot * 0.15;
          const bw = slot * 0.7;
          return (
            <g>
              <title>
                {d.day}: {plural(d.calls, 'call')}, {failed} failed
              </title>
              <rect x={x} y={h - pad - height(d.succeeded)} width={bw} height={height(d.succeeded)} class="ok" />
              <rect x={x} y={h - pad - height(d.calls)} width={bw} height={height(failed)} class="failed" />
            </g>
          );
        })}
      </svg>
      <div class="daily-ends" aria-hidden="true">
        <span>{days[0]!.day}</span>
        <span>{days[days.length - 1]!.day}</span>
      </div>
      <figcaption id="daily-cap">
        Calls per day over the last 30 days (failed part in red): {plural(total, 'call')} in all, at most {max} on {busiest.day}.
      </figcaption>
    </figure>
  );
}

/** A list of tools as search results and trending lists show them. */
import { get } from '../api.js';
import { HealthBadge, Rating, toolHref, useAsync } from './common.js';
import { RiskBadge, type ToolRisk } from './risks.js';

export interface ToolItem {
  id: string;
  name: string;
  description: string;
  healthStatus: string;
  qualityScore: number;
  package: { npmPackageName: string; category: string; env: string[] };
  averageRating: number | null;
  ratingCount: number;
  trendingScore?: number;
  risks?: ToolRisk[];
  /** Its executions over 7 days (search hits carry them; for list and trending cards GET /api/tools/reliability). */
  reliability?: { calls: number; successRate: number | null };
}

/** Its calls over 7 days as a person weighs a tool: how many, and how many succeeded. */
export function CallsNote({ reliability }: { reliability?: ToolItem['reliability'] }) {
  if (!reliability) return null;
  if (reliability.calls === 0) return <span class="muted"> · no calls in 7 days</span>;
  const rate = reliability.successRate === null ? '' : `, ${Math.round(reliability.successRate * 100)}% succeeded`;
  return (
    <span class={reliability.successRate !== null && reliability.successRate < 0.5 ? 'match-weak' : 'muted'} data-testid="calls-note">
      {' '}
      · {reliability.calls} {reliability.calls === 1 ? 'call' : 'calls'} in 7 days{rate}
    </span>
  );
}

export function ToolList({ tools, empty = 'No tools found.' }: { tools: ToolItem[]; empty?: string }) {
  // The contract's list and trending items carry no call figures: the cards ask for them in one request (beyond the
  // contract), and show none until it answers.
  const ids = tools.map((t) => t.id).join(',');
  const calls = useAsync(
    async () => (ids ? (await get<{ data: Record<string, NonNullable<ToolItem['reliability']>> }>(`/api/tools/reliability?ids=${ids}`)).data : {}),
    [ids],
  );
  if (tools.length === 0) return <p class="muted">{empty}</p>;
  return (
    <ul class="cards" aria-label="Tools">
      {tools.map((t) => (
        <li class="card">
          <h3>
            <a href={toolHref(t.package.npmPackageName, t.name)}>{t.name}</a>
          </h3>
          <p class="pkg">
            {t.package.npmPackageName} · {t.package.category}
          </p>
          <p class="desc">{t.description}</p>
          <p class="meta">
            <HealthBadge status={t.healthStatus} /> <Rating average={t.averageRating} count={t.ratingCount} /> <RiskBadge risks={t.risks} />
            <CallsNote reliability={t.reliability ?? calls.data?.[t.id]} />
            {t.package.env.length > 0 && <span class="muted"> · needs {t.package.env.join(', ')}</span>}
          </p>
        </li>
      ))}
    </ul>
  );
}

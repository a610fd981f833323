/** A list of tools as search results and trending lists show them. */
import { HealthBadge, Rating, toolHref } from './common.js';
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
}

export function ToolList({ tools, empty = 'No tools found.' }: { tools: ToolItem[]; empty?: string }) {
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
            {t.package.env.length > 0 && <span class="muted"> · needs {t.package.env.join(', ')}</span>}
          </p>
        </li>
      ))}
    </ul>
  );
}

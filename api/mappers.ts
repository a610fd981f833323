/** Response mappers: rows in, contract shapes out. No route returns a raw row. */
import type { ToolRow } from '../core/repos/tools.js';
import { scrubHostPaths } from '../core/host-paths.js';
import { toolTokenCount } from './mcp-tools.js';
import type { ReviewRow } from '../core/repos/feedback.js';
import type { ApiKeyRow, UserRow } from '../core/repos/users.js';

const iso = (d: Date | null | undefined) => (d ? new Date(d).toISOString() : null);

export function averageRating(sum: number, count: number): number | null {
  return count === 0 ? null : Math.round((sum / count) * 100) / 100;
}

/** The contract's `package.env`: names of the variables the tool requires (the richer form is the detail's `envVars`). */
export function requiredEnvNames(t: Pick<ToolRow, 'package_env'>): string[] {
  return (t.package_env ?? []).filter((v) => v.required).map((v) => v.name);
}

export function toolListItem(t: ToolRow) {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    qualityScore: t.quality_score,
    healthStatus: t.health_status,
    package: { npmPackageName: t.package_name, category: t.package_category, env: requiredEnvNames(t) },
    averageRating: averageRating(t.rating_sum, t.rating_count),
    ratingCount: t.rating_count,
  };
}

export function toolDetail(t: ToolRow) {
  const item = toolListItem(t);
  return {
    ...item,
    slug: `${t.package_name}/${t.name}`,
    toolId: `${t.package_name}::${t.name}`,
    inputSchema: t.input_schema,
    healthStatus: t.health_status,
    // Scrubbed when stored (worker/health.ts); again here for rows stored before that.
    healthError: t.health_status === 'BROKEN' && t.health_error ? scrubHostPaths(t.health_error, t.package_install_path) : null,
    lastHealthCheckAt: iso(t.last_health_check_at),
    executionCount: t.execution_count,
    tokenCount: toolTokenCount(t),
    package: {
      ...item.package,
      version: t.package_version,
      official: t.package_official,
      envVars: (t.package_env ?? []).map((v) => ({ name: v.name, required: v.required, description: v.description ?? null })),
    },
    createdAt: iso(t.created_at),
  };
}

export function review(r: ReviewRow) {
  return {
    id: r.id,
    toolId: r.tool_id,
    rating: r.rating,
    title: r.title,
    body: r.body,
    user: { id: r.user_id, username: r.username },
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
}

export function user(u: UserRow) {
  return { id: u.id, username: u.username, name: u.name, tier: u.tier };
}

export function apiKey(k: ApiKeyRow) {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    createdAt: iso(k.created_at),
    lastUsedAt: iso(k.last_used_at),
    revokedAt: iso(k.revoked_at),
  };
}

export { iso };

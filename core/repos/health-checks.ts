/** SQL of tool health: one check recorded, and the tool's status moved by it (HEALTHY, or BROKEN past a threshold). */
import type { Db } from '../infra/db.js';

/**
 * Records a check of a tool and updates the tool: a pass makes it HEALTHY; a failure counts, and makes it BROKEN
 * once `brokenAfter` consecutive checks have failed. Run inside the caller's transaction.
 */
export async function recordHealthCheck(db: Db, toolId: string, c: { error: string | null; durationMs: number; brokenAfter: number }): Promise<void> {
  await db('health_checks').insert({ tool_id: toolId, passed: c.error === null, error: c.error, duration_ms: Math.round(c.durationMs) });
  if (c.error === null) {
    await db('tools')
      .where({ id: toolId })
      .update({ health_status: 'HEALTHY', health_error: null, consecutive_health_failures: 0, last_health_check_at: db.fn.now() });
    return;
  }
  await db('tools')
    .where({ id: toolId })
    .update({
      consecutive_health_failures: db.raw('consecutive_health_failures + 1'),
      health_error: c.error,
      health_status: db.raw(`case when consecutive_health_failures + 1 >= ? then 'BROKEN' else health_status end`, [c.brokenAfter]),
      last_health_check_at: db.fn.now(),
    });
}

/** An MCP server's tools/list as last seen (at import or at a check): what the next check compares with. */
export async function saveMcpListing(db: Db, packageId: string, listing: unknown): Promise<void> {
  await db('packages')
    .where({ id: packageId })
    .update({ mcp_listing: JSON.stringify(listing) });
}

/** Flags every tool of the package: its server's tools/list changed within the version (ToolsChanged). */
export async function flagToolsChanged(db: Db, packageId: string, note: unknown): Promise<void> {
  await db('tools')
    .where({ package_id: packageId })
    .update({ tools_changed: JSON.stringify(note) });
}

const IS_MCP = `jsonb_typeof(p.manifest->'mcp') = 'object'`;

/** What the periodic sweep checks: each tool of a package of tools, and each MCP server once (all of its tools). */
export async function listHealthTargets(db: Db): Promise<{ toolIds: string[]; mcpPackageIds: string[] }> {
  const tools: { id: string }[] = await db('tools as t')
    .join('packages as p', 'p.id', 't.package_id')
    .whereRaw(`jsonb_typeof(p.manifest->'mcp') is distinct from 'object'`)
    .select('t.id');
  const packages: { id: string }[] = await db('packages as p')
    .whereRaw(IS_MCP)
    .whereExists((q) => q.select(db.raw('1')).from('tools as t').whereRaw('t.package_id = p.id'))
    .select('p.id');
  return { toolIds: tools.map((r) => r.id), mcpPackageIds: packages.map((r) => r.id) };
}

/** tools.risks: what core/packages/poisoning.ts finds in a package's tools, and the admin's clearing of a false alarm. */
import type { Db } from '../infra/db.js';
import { toolRisks, toolTextDigest, type ToolRisk } from '../packages/poisoning.js';

interface RiskRow {
  id: string;
  name: string;
  description: string;
  input_schema: unknown;
  risks_cleared_digest: string | null;
}

/**
 * Computes and stores the risks of a package's tools, against the names of every other package's tools. A clearing
 * stays while the tool's texts are those that were cleared; a changed text is checked afresh.
 */
export async function refreshToolRisks(db: Db, packageId: string): Promise<void> {
  const tools: RiskRow[] = await db('tools').where({ package_id: packageId }).select('id', 'name', 'description', 'input_schema', 'risks_cleared_digest');
  if (tools.length === 0) return;
  const others = new Set(
    (await db('tools').whereNot({ package_id: packageId }).whereNot({ health_status: 'BROKEN' }).distinct('name')).map((r: { name: string }) => r.name),
  );
  for (const t of tools) {
    const text = { name: t.name, description: t.description, inputSchema: t.input_schema };
    const risks = toolRisks(text, others);
    const kept = t.risks_cleared_digest !== null && t.risks_cleared_digest === toolTextDigest(text);
    await db('tools')
      .where({ id: t.id })
      .update({
        risks: JSON.stringify(risks),
        ...(kept ? {} : { risks_cleared_at: null, risks_cleared_digest: null }),
      });
  }
}

/** The admin clears a tool's risks (a false alarm), for its current texts. Undefined when there is no such tool. */
export async function clearToolRisks(db: Db, toolId: string): Promise<{ cleared: ToolRisk[] } | undefined> {
  const t = await db('tools').where({ id: toolId }).first('id', 'name', 'description', 'input_schema', 'risks');
  if (!t) return undefined;
  const digest = toolTextDigest({ name: t.name, description: t.description, inputSchema: t.input_schema });
  await db('tools').where({ id: toolId }).update({ risks_cleared_at: db.fn.now(), risks_cleared_digest: digest, updated_at: db.fn.now() });
  return { cleared: (t.risks as ToolRisk[] | null) ?? [] };
}

/** The risks a tool is served with: none once cleared. */
export function servedRisks(t: { risks?: ToolRisk[] | null; risks_cleared_at?: Date | string | null }): ToolRisk[] {
  return t.risks_cleared_at ? [] : (t.risks ?? []);
}

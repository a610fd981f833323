/**
 * package_versions.mcp_offer: what an MCP server offers besides tools, per recorded version (core/packages/mcp-offer.ts).
 * A recorded version never changes, so a read is cached for the life of the process (bounded).
 */
import { LRUCache } from 'lru-cache';
import type { Db } from '../infra/db.js';
import type { McpIcon, McpOffer } from '../packages/mcp-offer.js';

export async function saveMcpOffer(db: Db, packageId: string, version: string, offer: McpOffer): Promise<void> {
  await db('package_versions')
    .where({ package_id: packageId, version })
    .update({ mcp_offer: JSON.stringify(offer) });
}

const key = (packageId: string, version: string) => `${packageId}@${version}`;
/** `null`: the version offers nothing beyond tools (or was recorded before offers were). */
const cache = new LRUCache<string, { offer: McpOffer | null }>({ max: 5000 });

/** The offers of these package versions, by `<packageId>@<version>` (a version without one is absent). */
export async function findMcpOffers(db: Db, versions: { packageId: string; version: string }[]): Promise<Map<string, McpOffer>> {
  const out = new Map<string, McpOffer>();
  const missing = new Map<string, { packageId: string; version: string }>();
  for (const v of versions) {
    const k = key(v.packageId, v.version);
    const hit = cache.get(k);
    if (hit) {
      if (hit.offer) out.set(k, hit.offer);
    } else missing.set(k, v);
  }
  if (missing.size === 0) return out;
  const rows: { package_id: string; version: string; mcp_offer: McpOffer | null }[] = await db('package_versions')
    .whereIn(
      ['package_id', 'version'],
      [...missing.values()].map((v) => [v.packageId, v.version]),
    )
    .select('package_id', 'version', 'mcp_offer');
  for (const r of rows) {
    const k = key(r.package_id, r.version);
    cache.set(k, { offer: r.mcp_offer });
    if (r.mcp_offer) out.set(k, r.mcp_offer);
  }
  return out;
}

export const offerKey = key;

/** An MCP server's tool's icons as recorded at import: its own, else its server's (undefined for other tools). */
export async function toolIconsOf(
  db: Db,
  t: { package_id: string; package_version: string; export_name: string; package_mcp: unknown },
): Promise<McpIcon[] | undefined> {
  if (!t.package_mcp) return undefined;
  const o = (await findMcpOffers(db, [{ packageId: t.package_id, version: t.package_version }])).get(key(t.package_id, t.package_version));
  return o?.toolIcons?.[t.export_name] ?? o?.icons;
}

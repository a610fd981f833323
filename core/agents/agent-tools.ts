/**
 * The tools an agent is offered: a collection's (or several collections') tools as LLM tool specs, with names that
 * are unique and stable (core/llm/tool-names.ts, the same rule as the MCP endpoint), and the way back from a name
 * to the tool row. Shared by scenario runs (worker), prompt execution and agent chat (API).
 */
import type { Db } from '../infra/db.js';
import { llmToolNames } from '../llm/index.js';
import type { LlmToolSpec } from '../llm/provider.js';
import { findToolsByIds, searchDocumentOf, type ToolRow } from '../repos/tools.js';
import { atEntryVersions } from '../packages/versions.js';

export interface AgentToolSet {
  specs: LlmToolSpec[];
  byName: Map<string, ToolRow>;
}

function inputSchemaOf(t: ToolRow): Record<string, unknown> {
  const schema = t.input_schema ?? {};
  return schema.type === 'object' ? schema : { ...schema, type: 'object' };
}

export function agentToolSet(tools: ToolRow[]): AgentToolSet {
  const unique = [...new Map(tools.map((t) => [t.id, t])).values()];
  const named = llmToolNames(unique.map((t) => ({ ...t, packageName: t.package_name })));
  const byName = new Map<string, ToolRow>();
  const specs: LlmToolSpec[] = [];
  for (const [name, t] of named) {
    const row = unique.find((u) => u.id === t.id)!;
    byName.set(name, row);
    specs.push({ name, description: row.description, inputSchema: inputSchemaOf(row), searchDocument: searchDocumentOf(row) });
  }
  return { specs, byName };
}

/** The tools of the given collections, in the order they were added (a tool in two collections appears once). */
export async function loadCollectionTools(db: Db, collectionIds: string[]): Promise<ToolRow[]> {
  if (collectionIds.length === 0) return [];
  const links: { tool_id: string; version: string | null }[] = await db('collection_tools')
    .whereIn('collection_id', collectionIds)
    .orderBy([{ column: 'added_at' }, { column: 'tool_id' }])
    .select('tool_id', db.raw('coalesce(pinned_version, held_version) as version'));
  // A tool in two collections appears once, at the version of its first entry.
  const first = new Map<string, string | null>();
  for (const l of links) if (!first.has(l.tool_id)) first.set(l.tool_id, l.version);
  const ids = [...first.keys()];
  const byId = new Map((await findToolsByIds(db, ids)).map((t) => [t.id, t]));
  const present = ids.filter((id) => byId.has(id));
  return atEntryVersions(
    db,
    present.map((id) => byId.get(id)!),
    present.map((id) => first.get(id) ?? null),
  );
}

/** What a run records about the tools it was offered: ids, names as the model saw them, package versions. */
export function toolVersions(set: AgentToolSet) {
  return [...set.byName].map(([name, t]) => ({ toolId: t.id, name, packageName: t.package_name, packageVersion: t.package_version }));
}

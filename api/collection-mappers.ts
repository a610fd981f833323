/** Response mappers for collections (SPEC 1–8): rows in, contract shapes out. */
import type { CollectionRow } from '../core/repos/collections.js';
import type { ToolRow } from '../core/repos/tools.js';
import { iso } from './mappers.js';
import { toolsListTokenCount } from './mcp-tools.js';

export function collectionListItem(c: CollectionRow) {
  return {
    id: c.id,
    uid: c.uid,
    name: c.name,
    description: c.description,
    isPublic: c.is_public,
    toolCount: c.tool_ids.length,
    likeCount: c.like_count,
    owner: { id: c.owner_id, name: c.owner_name, username: c.owner_username },
  };
}

/** A tool of a collection: the contract's `{ id, name, description }` plus what a client needs to call or remove it. */
export function collectionTool(t: ToolRow) {
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    toolId: `${t.package_name}::${t.name}`,
    slug: `${t.package_name}/${t.name}`,
    healthStatus: t.health_status,
  };
}

/** Detail; `likedByMe` only when the request carried a key. */
export function collectionDetail(c: CollectionRow, tools: ToolRow[], likedByMe?: boolean) {
  return {
    ...collectionListItem(c),
    createdAt: iso(c.created_at),
    updatedAt: iso(c.updated_at),
    tools: tools.map(collectionTool),
    /** Tokens (o200k_base) of the collection's MCP `tools/list` result: what its definitions cost in a model's context. */
    tokenCount: toolsListTokenCount(tools),
    ...(likedByMe === undefined ? {} : { likedByMe }),
  };
}

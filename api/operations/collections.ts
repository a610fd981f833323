/**
 * Collections: the public list, detail by uid or id, create, partial update, add and remove tools, the like toggle,
 * delete. Reads of a private collection are 404 to everyone but its owner; changes need a key (401) and ownership
 * (403). The response schemas and the mappers that fill them live here together.
 */
import { MCP_MODES } from '../mcp/modes.js';
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { defineOperation, type Operation } from './define.js';
import { ok, okMessage, okPage, timestamp, uuid } from './envelope.js';
import { loadTool } from './shared.js';
import { pinnedVersionOf } from '../../core/repos/tools.js';
import { pageOf, paging, QUERY_TEXT_MAX, singleLine } from '../validate.js';
import { callerOf, requireCaller } from '../middleware/auth.js';
import { toolsListTokenCount } from '../mcp/tools.js';
import { errors } from '../../core/infra/errors.js';
import { HEALTH_STATUSES, type Caller } from '../../core/types.js';
import {
  UID_MAX,
  UID_MIN,
  UID_PATTERN,
  acceptNotice,
  addToolToCollection,
  collectionNotices,
  collectionTools,
  type CollectionNotice,
  createCollection,
  likeCollection,
  loadOwnedCollection,
  loadVisibleCollection,
} from '../../core/collections/collections.js';
import {
  deleteCollection,
  deleteCollectionTool,
  isLikedBy,
  isUuid,
  listPublicCollections,
  updateCollection,
  type CollectionRow,
} from '../../core/repos/collections.js';
import type { ToolRow } from '../../core/repos/tools.js';

// ---- response schemas and mappers ----

export const collectionListItemSchema = z.object({
  id: uuid,
  uid: z.string(),
  name: z.string(),
  description: z.string().nullable(),
  isPublic: z.boolean(),
  toolCount: z.number().int(),
  likeCount: z.number().int(),
  owner: z.object({ id: uuid, name: z.string().nullable(), username: z.string() }),
});

const changeSchema = z.object({
  tool: z.string().meta({ description: "'' for a change of the package itself (its env)" }),
  path: z.string(),
  change: z.string(),
  breaking: z.boolean(),
  needsReview: z.boolean(),
});

/** A package's entries held on an older version (SPEC, Trust): until the owner accepts `to`. */
export const noticeSchema = z.object({
  package: z.string(),
  from: z.string().meta({ description: 'The version the entries stay on (what the MCP endpoint serves)' }),
  to: z.string().meta({ description: 'The latest version, which has changes that need review' }),
  tools: z.array(z.string()).meta({ description: "The collection's tools of the package held on `from`" }),
  changes: z.array(changeSchema).meta({ description: 'What in `to` needs review: descriptions, annotations, permissions, env, tools, breaking schemas' }),
});

/** The caller's own collections (GET /api/auth/me/collections): each with its notices. */
export const ownedCollectionListItemSchema = collectionListItemSchema.extend({ notices: z.array(noticeSchema) });

/** A tool of a collection: the contract's `{ id, name, description }` plus what a client needs to call or remove it. */
const collectionToolSchema = z.object({
  id: uuid,
  name: z.string(),
  description: z.string(),
  toolId: z.string().meta({ description: '`<package>::<tool>`; `<package>@<version>::<tool>` when the entry is not on the latest version' }),
  slug: z.string().meta({ description: '`<package>/<tool>` (or `<package>@<version>/<tool>`, as toolId)' }),
  healthStatus: z.enum(HEALTH_STATUSES),
  version: z.string().meta({ description: "The version of the tool's package the collection serves" }),
  pinned: z.boolean().meta({ description: 'The entry pins its version; otherwise it follows the latest (unless held: see notices)' }),
});

export const collectionDetailSchema = collectionListItemSchema.extend({
  createdAt: timestamp,
  updatedAt: timestamp,
  tools: z.array(collectionToolSchema),
  tokenCount: z
    .number()
    .int()
    .meta({ description: "Tokens (o200k_base) of the collection's MCP `tools/list` result: what its definitions cost in a model's context" }),
  mcpMode: z
    .enum(MCP_MODES)
    .meta({ description: 'How the MCP endpoint offers the tools when the request has no `?mode`: `all`, or `search` (search_tools + call_tool)' }),
  likedByMe: z.boolean().optional().meta({ description: 'Only when the request carried a key' }),
  notices: z
    .array(noticeSchema)
    .meta({ description: 'Packages whose entries follow the latest version but stay on an older one: the latest has a change that needs review' }),
});

export function toCollectionListItem(c: CollectionRow): z.infer<typeof collectionListItemSchema> {
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

function toCollectionTool(t: ToolRow, c: CollectionRow): z.infer<typeof collectionToolSchema> {
  const i = c.tool_ids.indexOf(t.id);
  const onVersion = i >= 0 && c.tool_versions?.[i] ? `@${t.package_version}` : '';
  return {
    id: t.id,
    name: t.name,
    description: t.description,
    toolId: `${t.package_name}${onVersion}::${t.name}`,
    slug: `${t.package_name}${onVersion}/${t.name}`,
    healthStatus: t.health_status,
    version: t.package_version,
    pinned: i >= 0 && c.tool_pinned?.[i] === true,
  };
}

export function toCollectionDetail(
  c: CollectionRow,
  tools: ToolRow[],
  likedByMe?: boolean,
  notices: CollectionNotice[] = [],
): z.infer<typeof collectionDetailSchema> {
  return {
    ...toCollectionListItem(c),
    createdAt: new Date(c.created_at).toISOString(),
    updatedAt: new Date(c.updated_at).toISOString(),
    tools: tools.map((t) => toCollectionTool(t, c)),
    notices,
    tokenCount: toolsListTokenCount(tools),
    mcpMode: c.mcp_mode,
    ...(likedByMe === undefined ? {} : { likedByMe }),
  };
}

/** The detail as the caller sees it (404 when the caller may not). */
async function detailFor(deps: AppDeps, ref: string, caller: Caller | undefined) {
  const c = await loadVisibleCollection(deps.db, ref, caller);
  const [tools, liked, notices] = await Promise.all([
    collectionTools(deps, c),
    caller ? isLikedBy(deps.db, c.id, caller.userId) : undefined,
    collectionNotices(deps.db, c),
  ]);
  return toCollectionDetail(c, tools, liked, notices);
}

/** The caller of a `key` operation: checked again here, where the privilege is used (401 without one). */
const caller = (ctx: Context): Caller => requireCaller(ctx);

// ---- input schemas ----

const listQuery = z.object({ ...paging(20, 50), q: z.string().trim().max(QUERY_TEXT_MAX).optional().meta({ description: 'Matches name or description' }) });
const uidParams = z.object({ uid: z.string().meta({ description: "The collection's uid or id" }) });
const name = singleLine(100);
const description = z.string().max(1000).nullable();
const uid = z
  .string()
  .min(UID_MIN)
  .max(UID_MAX)
  .regex(UID_PATTERN, 'must be lower-case letters and digits separated by single hyphens')
  .refine((v) => !isUuid(v), 'must not look like an id');
const createBody = z.object({ name, uid: uid.optional(), description: description.optional(), isPublic: z.boolean().optional() }).strict();
const patchBody = z
  .object({ name: name.optional(), description: description.optional(), isPublic: z.boolean().optional(), mcpMode: z.enum(MCP_MODES).optional() })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'give at least one of name, description, isPublic, mcpMode');
const addToolBody = z
  .object({ toolId: z.string().min(1).max(500).meta({ description: 'Tool id, `<package>::<tool>`, or slug; `<package>@<version>::<tool>` pins a version' }) })
  .strict();
const acceptBody = z
  .object({
    package: z.string().min(1).max(214).meta({ description: 'The package of the notice' }),
    to: z.string().min(1).max(256).meta({ description: "The notice's `to`: the version the owner reviewed and accepts" }),
  })
  .strict();
const toolParams = uidParams.extend({ toolId: z.string().meta({ description: 'Tool id, `<package>::<tool>`, or slug' }) });

const TAG = 'Collections';
const base = { tag: TAG, errorShape: 'A' } as const;
/** What the request middleware refuses before any handler: a malformed URL or body (400), and on methods that may carry a body, one over 1 MiB (413) or not JSON (415). */
const REQUEST = [400];
const BODY = [400, 413, 415];

export const collectionOperations: Operation[] = [
  defineOperation({
    ...base,
    id: 'collections.list',
    method: 'get',
    path: '/api/collections',
    summary: 'Public collections, newest first',
    auth: 'public',
    query: listQuery,
    responses: { 200: okPage(collectionListItemSchema) },
    errors: REQUEST,
    handler: async (_ctx, deps, { query }) => {
      const page = pageOf(await listPublicCollections(deps.db, query), query.limit, query.offset);
      return { success: true, data: page.items.map(toCollectionListItem), pagination: page.pagination };
    },
  }),
  defineOperation({
    ...base,
    id: 'collections.get',
    method: 'get',
    path: '/api/collections/:uid',
    summary: 'A collection with its tools, by uid or id (a private one: its owner only)',
    auth: 'public',
    params: uidParams,
    responses: { 200: ok(collectionDetailSchema) },
    errors: [...REQUEST, 404],
    handler: async (ctx, deps, { params }) => ({ success: true, data: await detailFor(deps, params.uid, callerOf(ctx)) }),
  }),
  defineOperation({
    ...base,
    id: 'collections.create',
    method: 'post',
    path: '/api/collections',
    summary: 'Creates a collection (uid: given, or made from the name)',
    auth: 'key',
    body: createBody,
    responses: { 201: ok(collectionDetailSchema) },
    errors: [...BODY, 409],
    handler: async (ctx, deps, { body }) => {
      const id = await createCollection(deps.db, caller(ctx).userId, body, deps.config.MAX_COLLECTIONS_PER_USER);
      return { success: true, data: await detailFor(deps, id, caller(ctx)) };
    },
  }),
  defineOperation({
    ...base,
    id: 'collections.patch',
    method: 'patch',
    path: '/api/collections/:uid',
    summary: "Changes a collection's name, description or visibility (owner only)",
    auth: 'key',
    params: uidParams,
    body: patchBody,
    responses: { 200: ok(collectionDetailSchema) },
    errors: [...BODY, 403, 404],
    handler: async (ctx, deps, { params, body }) => {
      const c = await loadOwnedCollection(deps.db, params.uid, caller(ctx));
      await updateCollection(deps.db, c.id, body);
      return { success: true, data: await detailFor(deps, c.id, caller(ctx)) };
    },
  }),
  defineOperation({
    ...base,
    id: 'collections.delete',
    method: 'delete',
    path: '/api/collections/:uid',
    summary: 'Deletes a collection with its tools list, likes and scenarios (owner only)',
    auth: 'key',
    params: uidParams,
    responses: { 200: okMessage },
    errors: [...BODY, 403, 404],
    handler: async (ctx, deps, { params }) => {
      const c = await loadOwnedCollection(deps.db, params.uid, caller(ctx));
      if (!(await deleteCollection(deps.db, c.id))) throw errors.notFound('Collection', params.uid);
      return { success: true, message: `Collection '${c.uid}' deleted with its tools list, likes and scenarios` };
    },
  }),
  defineOperation({
    ...base,
    id: 'collections.addTool',
    method: 'post',
    path: '/api/collections/:uid/tools',
    summary: 'Adds a tool to a collection (owner only)',
    auth: 'key',
    params: uidParams,
    body: addToolBody,
    responses: { 201: ok(z.object({ collectionId: uuid, toolId: uuid, toolCount: z.number().int() })) },
    errors: [...BODY, 403, 404, 409],
    handler: async (ctx, deps, { params, body }) => {
      const c = await loadOwnedCollection(deps.db, params.uid, caller(ctx));
      const tool = await loadTool(deps, body.toolId);
      // `<package>@<version>/<tool>` pins the entry to that version; any other reference follows the latest.
      const toolCount = await addToolToCollection(deps.db, c.id, tool.id, deps.config.MAX_TOOLS_PER_COLLECTION, pinnedVersionOf(body.toolId));
      await deps.learning.use(callerOf(ctx)?.userId, tool.id);
      return { success: true, data: { collectionId: c.id, toolId: tool.id, toolCount } };
    },
  }),
  defineOperation({
    ...base,
    id: 'collections.removeTool',
    method: 'delete',
    path: '/api/collections/:uid/tools/*toolId',
    summary: 'Removes a tool from a collection (owner only)',
    auth: 'key',
    params: toolParams,
    responses: { 200: okMessage },
    errors: [...BODY, 403, 404],
    handler: async (ctx, deps, { params }) => {
      const c = await loadOwnedCollection(deps.db, params.uid, caller(ctx));
      const tool = await loadTool(deps, params.toolId);
      if (!(await deleteCollectionTool(deps.db, c.id, tool.id))) throw errors.notFound(`Tool '${params.toolId}' in collection '${c.uid}'`);
      return { success: true, message: `Tool '${tool.package_name}/${tool.name}' removed from collection '${c.uid}'` };
    },
  }),
  defineOperation({
    ...base,
    id: 'collections.acceptNotice',
    method: 'post',
    path: '/api/collections/:uid/notices/accept',
    summary: "Accepts a package's notice (owner only): its held entries move to the latest version, `to`",
    auth: 'key',
    params: uidParams,
    body: acceptBody,
    responses: { 200: ok(collectionDetailSchema) },
    errors: [...BODY, 403, 404, 409],
    handler: async (ctx, deps, { params, body }) => {
      const c = await loadOwnedCollection(deps.db, params.uid, caller(ctx));
      await acceptNotice(deps.db, c, body.package, body.to);
      return { success: true, data: await detailFor(deps, c.id, caller(ctx)) };
    },
  }),
  defineOperation({
    ...base,
    id: 'collections.like',
    method: 'post',
    path: '/api/collections/:uid/like',
    summary: "Toggles the caller's like of a collection",
    auth: 'key',
    params: uidParams,
    responses: { 200: ok(z.object({ liked: z.boolean(), likeCount: z.number().int() })) },
    errors: [...BODY, 404],
    handler: async (ctx, deps, { params }) => {
      const c = await loadVisibleCollection(deps.db, params.uid, caller(ctx));
      return { success: true, data: await likeCollection(deps.db, c, caller(ctx).userId) };
    },
  }),
];

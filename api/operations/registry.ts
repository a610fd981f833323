/**
 * The MCP Registry's read API, v0.1 (api/registry/routes.ts does the work): every public collection — and a caller's own
 * private ones — as one server, and every imported MCP server as one. Errors are the registry's `{ error }` body, as its clients expect.
 */
import { z } from 'zod';
import { defineOperation, type Operation } from './define.js';
import { getVersion, listServers, listVersions, registryReply } from '../registry/routes.js';

/** A registry `ServerResponse`: the official document's fields (validated against it in tests), open to extension. */
const serverResponse = z
  .object({
    server: z
      .object({
        name: z.string().meta({
          description: '`<reversed REGISTRY_NAMESPACE>/<username>.<collection uid>`, or `<rdns>.npm[.<scope>]/<name>` for an imported MCP server',
        }),
        description: z.string().max(100),
        version: z.string().meta({ description: '`1.0.<revision>` of the collection, or the MCP server package version' }),
        remotes: z.array(z.object({ type: z.literal('streamable-http'), url: z.string() }).loose()).optional(),
      })
      .loose(),
    _meta: z.record(z.string(), z.unknown()).optional().meta({
      description:
        "The registry's lifecycle facts and Toolshed's own (tools, schemas, annotations, token counts, health, rating, scenario pass rate) under `<rdns>/toolshed`",
    }),
  })
  .loose();
const serverList = z.object({
  servers: z.array(serverResponse),
  metadata: z.object({ count: z.number().int(), nextCursor: z.string().optional() }),
});
const listQuery = z.object({
  cursor: z.string().optional().meta({ description: 'nextCursor of the previous page' }),
  limit: z.string().optional().meta({ description: 'servers per page, 1–100 (default 30)' }),
  search: z.string().optional().meta({ description: 'substring of the server name or description' }),
  updated_since: z.string().optional().meta({ description: 'RFC 3339 date-time: servers changed since' }),
  version: z.string().optional().meta({ description: '`latest` or an exact version' }),
});
const nameParams = z.object({ name: z.string().meta({ description: 'the server name, URL-encoded (its slash as %2F)' }) });
const splitNameParams = z.object({ ns: z.string(), server: z.string() });
const common = { tag: 'MCP Registry', auth: 'public', errorShape: 'registry' } as const;

export const registryOperations: Operation[] = [
  defineOperation({
    ...common,
    id: 'registry.listServers',
    method: 'get',
    path: '/v0.1/servers',
    summary: 'Servers (collections and imported MCP servers), paged by cursor, filtered by search, updated_since and version',
    documentedQuery: listQuery,
    responses: { 200: serverList },
    errors: [400],
    handler: (ctx, deps) => registryReply(() => listServers(ctx, deps)),
  }),
  defineOperation({
    ...common,
    id: 'registry.listVersions',
    method: 'get',
    path: '/v0.1/servers/:name/versions',
    summary: "A server's versions (only the latest is kept)",
    params: nameParams,
    responses: { 200: serverList },
    errors: [404],
    handler: (ctx, deps) => registryReply(() => listVersions(ctx, deps)),
  }),
  defineOperation({
    ...common,
    id: 'registry.getVersion',
    method: 'get',
    path: '/v0.1/servers/:name/versions/:version',
    summary: 'One version of a server (`latest` or exact)',
    params: nameParams.extend({ version: z.string() }),
    responses: { 200: serverResponse },
    errors: [404],
    handler: (ctx, deps) => registryReply(() => getVersion(ctx, deps)),
  }),
  defineOperation({
    ...common,
    id: 'registry.listVersionsSplitName',
    method: 'get',
    path: '/v0.1/servers/:ns/:server/versions',
    summary: "A server's versions, its name's slash left unencoded",
    params: splitNameParams,
    responses: { 200: serverList },
    errors: [404],
    handler: (ctx, deps) => registryReply(() => listVersions(ctx, deps)),
  }),
  defineOperation({
    ...common,
    id: 'registry.getVersionSplitName',
    method: 'get',
    path: '/v0.1/servers/:ns/:server/versions/:version',
    summary: "One version of a server, its name's slash left unencoded",
    params: splitNameParams.extend({ version: z.string() }),
    responses: { 200: serverResponse },
    errors: [404],
    handler: (ctx, deps) => registryReply(() => getVersion(ctx, deps)),
  }),
];

/**
 * The MCP Registry's read API, v0.1 (the official registry's OpenAPI document; a copy is in
 * tests/fixtures/mcp-registry/): every public collection — and, for a caller with a key, their own private ones — is
 * one server, and so is every imported MCP server (a package with `manifest.mcp`, not hidden). `GET /v0.1/servers`
 * pages by an opaque cursor (the last server name; names are the sort order: the MCP servers' `<rdns>.npm…` names
 * come before the collections' `<rdns>/…`), `/v0.1/servers/{name}/versions` and
 * `/v0.1/servers/{name}/versions/{version|latest}` read one. Only the latest version of a collection or a package
 * exists. Errors are the registry's `{ error }` shape, not ours.
 */
import type { Context } from 'koa';
import type { AppDeps } from '../deps.js';
import { reply } from '../operations/define.js';
import { callerOf } from '../middleware/auth.js';
import { collectionsTools } from '../../core/collections/collections.js';
import type { CollectionRow } from '../../core/repos/collections.js';
import type { PackageRow } from '../../core/repos/packages.js';
import { findRegistryCollection, findRegistryPackage, listRegistryCollections, listRegistryPackages, scenarioFigures } from '../../core/repos/registry.js';
import { listPackagesTools } from '../../core/repos/tools.js';
import {
  packageServerName,
  packageServerResponse,
  parsePackageServerName,
  parseServerName,
  serverName,
  serverResponse,
  versionOf,
  type ServerContext,
} from './server-document.js';

const DEFAULT_LIMIT = 30;
const MAX_LIMIT = 100;
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/i;
/** `1.0.<revision>` exactly as the registry writes it (no leading zeros: `1.0.01` names no version). */
const VERSION = /^1\.0\.(0|[1-9]\d{0,8})$/;

/**
 * An RFC 3339 date-time that names a real instant: Date.parse rolls `02-31` over to March and takes `24:00`, so the
 * written date and time must survive the round trip (compared in UTC after applying the offset).
 */
function isRealDateTime(text: string): boolean {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})/.exec(text);
  if (!m || !RFC3339.test(text)) return false;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const probe = new Date(Date.UTC(year, month - 1, day, hour, minute, second));
  return (
    probe.getUTCFullYear() === year &&
    probe.getUTCMonth() === month - 1 &&
    probe.getUTCDate() === day &&
    probe.getUTCHours() === hour &&
    probe.getUTCMinutes() === minute &&
    probe.getUTCSeconds() === second
  );
}

class RegistryError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

function one(ctx: Context, name: string): string | undefined {
  const v = ctx.query[name];
  if (Array.isArray(v)) throw new RegistryError(400, `Query parameter '${name}' is given more than once`);
  return v === undefined || v === '' ? undefined : v;
}

function serverContext(ctx: Context, deps: AppDeps): ServerContext {
  return { namespace: deps.config.REGISTRY_NAMESPACE, baseUrl: deps.config.PUBLIC_URL ?? `${ctx.protocol}://${ctx.host}` };
}

/** A server of the registry: a collection, or an imported MCP server. */
type Entry = { collection: CollectionRow } | { pkg: PackageRow };

/** A page's servers in a bounded number of reads, whatever its size: not one per collection or package. */
async function responses(ctx: Context, deps: AppDeps, rows: Entry[]) {
  const collections = rows.flatMap((e) => ('collection' in e ? [e.collection] : []));
  const [figures, toolLists, packageTools] = await Promise.all([
    scenarioFigures(
      deps.db,
      collections.map((c) => c.id),
    ),
    collectionsTools(deps, collections),
    listPackagesTools(
      deps.db,
      rows.flatMap((e) => ('pkg' in e ? [e.pkg.id] : [])),
    ),
  ]);
  const tools = new Map(collections.map((c, i) => [c, toolLists[i]!]));
  const sc = serverContext(ctx, deps);
  return rows.map((e) =>
    'collection' in e
      ? serverResponse(sc, e.collection, tools.get(e.collection)!, figures.get(e.collection.id))
      : packageServerResponse(sc, e.pkg, packageTools.get(e.pkg.id) ?? []),
  );
}

const entryName = (namespace: string, e: Entry) => ('collection' in e ? serverName(namespace, e.collection) : packageServerName(namespace, e.pkg.name));

export async function listServers(ctx: Context, deps: AppDeps): Promise<unknown> {
  const limitText = one(ctx, 'limit');
  const limit = limitText === undefined ? DEFAULT_LIMIT : Number(limitText);
  if (!/^\d+$/.test(limitText ?? '0') || !Number.isInteger(limit) || limit < 1) throw new RegistryError(400, "'limit' must be a positive integer");
  const ns = deps.config.REGISTRY_NAMESPACE;
  const cursor = one(ctx, 'cursor');
  const afterPackage = cursor === undefined ? undefined : parsePackageServerName(ns, cursor);
  const after = cursor === undefined || afterPackage ? undefined : parseServerName(ns, cursor);
  if (cursor !== undefined && !after && !afterPackage) throw new RegistryError(400, "'cursor' is not a cursor of this registry");
  const since = one(ctx, 'updated_since');
  if (since !== undefined && (!isRealDateTime(since) || Number.isNaN(Date.parse(since)))) {
    throw new RegistryError(400, "'updated_since' must be an RFC 3339 date-time, like 2025-08-07T13:15:04.280Z");
  }
  const version = one(ctx, 'version');
  const revision = version === undefined || version === 'latest' ? undefined : Number(VERSION.exec(version)?.[1] ?? -1);
  const max = Math.min(limit, MAX_LIMIT);
  const search = one(ctx, 'search');
  const updatedSince = since === undefined ? undefined : new Date(since);
  // MCP servers' names sort before collections': their page comes first, collections fill what is left of it.
  const rows: Entry[] = after
    ? []
    : (
        await listRegistryPackages(deps.db, {
          afterKey: afterPackage?.key,
          search,
          updatedSince,
          version: version === 'latest' ? undefined : version,
          limit: max,
        })
      ).map((pkg) => ({ pkg }));
  if (rows.length <= max) {
    const collections = await listRegistryCollections(deps.db, {
      after,
      search,
      updatedSince,
      revision,
      viewerId: callerOf(ctx)?.userId,
      limit: max - rows.length,
    });
    rows.push(...collections.map((collection) => ({ collection })));
  }
  const page = rows.slice(0, max);
  const servers = await responses(ctx, deps, page);
  const more = rows.length > page.length;
  return {
    servers,
    metadata: { count: servers.length, ...(more ? { nextCursor: entryName(ns, page[page.length - 1]) } : {}) },
  };
}

async function loadServer(ctx: Context, deps: AppDeps): Promise<Entry> {
  const p = ctx.params as { name?: string; ns?: string; server?: string };
  const name = p.name ?? `${p.ns}/${p.server}`;
  const pkgName = parsePackageServerName(deps.config.REGISTRY_NAMESPACE, name)?.packageName;
  const pkg = pkgName === undefined ? undefined : await findRegistryPackage(deps.db, pkgName);
  if (pkg) return { pkg };
  const parts = parseServerName(deps.config.REGISTRY_NAMESPACE, name);
  const c = parts && (await findRegistryCollection(deps.db, parts.username, parts.uid, callerOf(ctx)?.userId));
  if (!c) throw new RegistryError(404, 'Server not found');
  return { collection: c };
}

export async function listVersions(ctx: Context, deps: AppDeps): Promise<unknown> {
  const servers = await responses(ctx, deps, [await loadServer(ctx, deps)]);
  return { servers, metadata: { count: servers.length } };
}

export async function getVersion(ctx: Context, deps: AppDeps): Promise<unknown> {
  const e = await loadServer(ctx, deps);
  const { version } = ctx.params as { version: string };
  const current = 'collection' in e ? versionOf(e.collection.revision) : e.pkg.version;
  if (version !== 'latest' && version !== current) throw new RegistryError(404, 'Server version not found');
  return (await responses(ctx, deps, [e]))[0];
}

/** Runs a registry read; the registry's own errors become its `{ error }` body with their status. */
export async function registryReply(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof RegistryError)) throw err;
    return reply(err.status, { error: err.message });
  }
}

/**
 * Publishing (issue 24): any user imports an npm package with their own key, as a job whose progress they can read;
 * the package records its publisher, who may hide it or deprecate its version. Lists and details are public; hidden
 * packages leave the list (their tools stay runnable by reference). `path:` sources stay admin-only
 * (POST /api/admin/packages).
 */
import { z } from 'zod';
import { errors } from '../../core/infra/errors.js';
import { scrubHostPaths } from '../../core/text/host-paths.js';
import { requestImport } from '../../core/packages/request-import.js';
import { parseSource, sourceSchema } from '../../core/packages/source.js';
import { findImport, latestImportStartup, type ImportStartup, type PackageImportRow } from '../../core/repos/package-imports.js';
import type { Knex } from 'knex';
import { findPackage, type PackageRow } from '../../core/repos/packages.js';
import {
  findPackageByName,
  listPackagesPublishedBy,
  listPublishedPackages,
  updatePackageFlags,
  type PublishedPackageRow,
} from '../../core/repos/published-packages.js';
import { listPackageTools, type ToolRow } from '../../core/repos/tools.js';
import { findPackageVersion, listPackageVersions, setVersionDeprecated, type PackageVersionRow } from '../../core/repos/package-versions.js';
import { toolAtVersion } from '../../core/packages/versions.js';
import { withReview, type Compatibility } from '../../core/packages/compatibility.js';
import type { Context } from 'koa';
import { CATEGORIES } from '../../core/types.js';
import { requireCaller } from '../middleware/auth.js';
import { pageOf, paging } from '../validate.js';
import { defineOperation, reply, type Operation } from './define.js';
import { nullableTimestamp, ok, okPage, timestamp, uuid } from './envelope.js';
import { discoveryOf, discoverySchema, importedPackageSchema, importFailure, importOptionsShape, kindOf } from './package-schemas.js';
import { toolListItemSchema, toToolListItem } from './tool-schemas.js';

/** How long a publish request waits for its import before answering 202 with the import to follow. */
const PUBLISH_WAIT_MS = 120_000;
const DAY_MS = 24 * 60 * 60 * 1000;

const publishBody = z
  .object({
    source: sourceSchema
      .refine((s) => !s.startsWith('path:'), 'path: sources are imported by the admin only; publish an npm package (npm:<name>[@range])')
      .meta({
        description: 'npm:<name>[@range]',
        example: 'npm:@agentic/calculator@7.6.9',
      }),
    ...importOptionsShape,
  })
  .strict();

const publishQuery = z.object({
  wait: z.enum(['true', 'false']).optional().meta({ description: '`false`: answer 202 at once with the import to follow (the web app shows its progress)' }),
});

const packageSummary = z.object({
  name: z.string(),
  version: z.string(),
  category: z.enum(CATEGORIES),
  description: z.string().nullable(),
  official: z.boolean(),
  publisher: z.string().nullable().meta({ description: 'Username of the publisher; null for packages the admin imported' }),
  hidden: z.boolean(),
  importedAt: timestamp,
});
const compatibilitySchema = z
  .object({
    from: z.string(),
    to: z.string(),
    compatible: z.boolean().meta({ description: 'No change breaks callers (schemas, tools removed, network gained)' }),
    needsReview: z.boolean().meta({ description: 'Some change is not a compatible schema change: followers stay on their version until accepted' }),
    changes: z.array(z.object({ tool: z.string(), path: z.string(), change: z.string(), breaking: z.boolean(), needsReview: z.boolean() })),
  })
  .nullable()
  .meta({ description: 'This version compared with the one it replaced (null for the first version imported)' });
const versionSchema = z.object({
  version: z.string(),
  latest: z.boolean().meta({ description: 'The latest version: the highest (semver) imported' }),
  importedAt: timestamp,
  publisher: z.string().nullable().meta({ description: 'Username of whoever imported this version; null for the admin' }),
  deprecated: z.string().nullable().meta({ description: "The publisher's deprecation message, if any" }),
  compatibility: compatibilitySchema,
  tools: z.array(toolListItemSchema).meta({ description: 'The tools as this version declares them (run them with `<package>@<version>/<tool>`)' }),
  discovery: discoverySchema,
  about: z
    .object({
      readme: z.string().nullable().meta({ description: 'Its README as Markdown, from the installed package (first 64 KiB), or null when it has none' }),
      readmeTruncated: z.boolean().meta({ description: 'The README was longer and is cut' }),
      license: z.string().nullable().meta({ description: "package.json's license (an SPDX expression), or null when it declares none" }),
      repository: z.string().nullable().meta({ description: "package.json's repository as a browsable https URL, or null" }),
      homepage: z.string().nullable().meta({ description: "package.json's homepage (http or https only), or null" }),
    })
    .nullable()
    .meta({ description: 'What the package says about itself, read at import (null: recorded before this was kept)' }),
  provenance: z
    .object({
      from: z
        .enum(['npm', 'folder', 'other'])
        .meta({ description: "Where the bytes came from: npm's registry, a folder on the operator's host, or elsewhere" }),
      integrity: z.string().nullable().meta({
        description: "The recorded digest of those bytes: an npm tarball's sha512 (checked against the registry's dist.integrity), a folder's tree hash",
      }),
    })
    .meta({ description: 'What the version was installed from (npm provenance attestations are not recorded)' }),
});
const startupSchema = z
  .object({
    starts: z.number().int(),
    rules: z.array(z.object({ rule: z.string(), why: z.string() })),
    refusal: z.string().nullable(),
  })
  .nullable();
const downloadsSchema = z
  .object({
    weekly: z.number().int().nullable().meta({ description: "npm's count for the week, or null when npm had no figure for the package" }),
    start: z.string().nullable().meta({ description: 'First day of that week (YYYY-MM-DD, as npm states it)' }),
    end: z.string().nullable().meta({ description: 'Last day of that week' }),
    checkedAt: timestamp.meta({ description: "When npm's downloads API was last asked (daily, and after each import)" }),
  })
  .nullable()
  .meta({
    description:
      "npm's weekly download count of an `npm:` package, from npm's downloads API (NPM_DOWNLOADS_URL); null when it was never asked: not from npm, the API is off, or it could not be reached",
  });
const packageDetail = packageSummary.extend({
  downloads: downloadsSchema,
  versions: z.array(versionSchema).meta({ description: 'Every imported version, highest first' }),
  startup: startupSchema.meta({
    description:
      "How the current version's MCP server was started by its latest import: starts, the start-up rules that fired and why (null: not an MCP server, or imported before this was kept)",
  }),
});
const versionPatchBody = z
  .object({
    deprecated: z.string().trim().min(1).max(500).nullable().meta({ description: 'Deprecates the version with this message (null: undeprecates)' }),
  })
  .strict();
const importStatus = z.object({
  importId: uuid,
  source: z.string(),
  status: z.enum(['queued', 'running', 'succeeded', 'failed']),
  package: z.object({ name: z.string(), version: z.string() }).nullable(),
  error: z.object({ code: z.string(), message: z.string() }).nullable(),
  startup: startupSchema.meta({
    description: "An MCP server's start-up: how many times it was started, which start-up rules fired and why, the refusal's code",
  }),
  createdAt: timestamp,
  completedAt: nullableTimestamp,
});
const publishedSchema = z.object({
  importId: uuid.nullable().meta({ description: 'null when this exact version was imported already: nothing was done' }),
  package: importedPackageSchema,
  tools: z.array(toolListItemSchema),
  discovery: discoverySchema,
});
const pendingSchema = z.object({ importId: uuid, status: z.enum(['queued', 'running']) });
const nameParams = z.object({ name: z.string().min(1).max(214).meta({ description: 'npm package name (`@scope/name` or `name`)' }) });
const versionParams = nameParams.extend({ version: z.string().min(1).max(256) });
const importParams = z.object({ id: z.uuid({ message: 'must be a UUID' }) });
const patchBody = z
  .object({
    hidden: z.boolean().optional().meta({ description: 'Hidden packages leave lists and search; their tools stay runnable by reference' }),
    deprecated: z
      .string()
      .trim()
      .min(1)
      .max(500)
      .nullable()
      .optional()
      .meta({ description: 'Deprecates the current version with this message (null: undeprecates)' }),
  })
  .strict()
  .refine((b) => b.hidden !== undefined || b.deprecated !== undefined, 'give hidden or deprecated');

function summary(p: PublishedPackageRow): z.infer<typeof packageSummary> {
  return {
    name: p.name,
    version: p.version,
    category: p.category as z.infer<typeof packageSummary>['category'],
    description: p.description,
    official: p.official,
    publisher: p.publisher_username,
    hidden: p.hidden,
    importedAt: new Date(p.updated_at).toISOString(),
  };
}

/** One version as published: its tools as it declares them (tool rows seen at that version). */
function versionOf(p: PackageRow, v: PackageVersionRow, tools: ToolRow[]): z.infer<typeof versionSchema> {
  const byName = new Map(tools.map((t) => [t.name, t]));
  return {
    version: v.version,
    latest: v.version === p.version,
    importedAt: new Date(v.imported_at).toISOString(),
    publisher: v.publisher_username ?? null,
    deprecated: v.deprecated,
    compatibility: withReview((v.compatibility ?? null) as Compatibility | null),
    tools: v.tools.flatMap((vt) => {
      const row = byName.get(vt.name);
      const at = row && toolAtVersion(row, v);
      return at ? [toToolListItem(at)] : [];
    }),
    discovery: discoveryOf(v),
    about: v.about ?? null,
    provenance: { from: v.source.startsWith('npm:') ? 'npm' : v.source.startsWith('path:') ? 'folder' : 'other', integrity: v.integrity },
  };
}

/** The package's versions, highest first (404 for an unknown package). */
async function loadVersions(deps: { db: Knex }, name: string): Promise<{ p: PublishedPackageRow; versions: z.infer<typeof versionSchema>[] }> {
  const p = await findPackageByName(deps.db, name);
  if (!p) throw errors.notFound('Package', name);
  const [rows, tools] = await Promise.all([listPackageVersions(deps.db, p.id), listPackageTools(deps.db, p.id)]);
  return { p, versions: rows.map((v) => versionOf(p, v, tools)) };
}

/** The publisher of the package (or of the version), or the admin, may change a version; others get a 403. */
function assertMayChange(ctx: Context, p: PublishedPackageRow, v?: PackageVersionRow): void {
  if (ctx.state.admin === true) return;
  const caller = requireCaller(ctx);
  if (p.published_by !== caller.userId && v?.published_by !== caller.userId)
    throw errors.forbidden("Only the package's publisher (or the admin) may change it");
}

/** A start-up record as the API shows it (host paths scrubbed; `declared` and the budget flag are the worker's). */
function startupOf(s: ImportStartup | null): z.infer<typeof startupSchema> {
  return s ? { starts: s.starts, rules: s.rules.map((r) => ({ rule: r.rule, why: scrubHostPaths(r.why) })), refusal: s.refusal ?? null } : null;
}

async function importStatusOf(deps: { db: Knex }, imp: PackageImportRow): Promise<z.infer<typeof importStatus>> {
  const pkg = imp.package_id ? await findPackage(deps.db, imp.package_id) : undefined;
  // An import of an exact version names that version (an older one does not become the latest).
  const source = parseSource(imp.source);
  const exact = pkg && 'kind' in source && source.kind === 'npm' ? await findPackageVersion(deps.db, pkg.id, source.range) : undefined;
  return {
    importId: imp.id,
    source: imp.source,
    status: imp.status,
    package: pkg ? { name: pkg.name, version: exact?.version ?? pkg.version } : null,
    error: imp.error ? { code: imp.error.code, message: scrubHostPaths(imp.error.message) } : null,
    startup: startupOf(imp.startup),
    createdAt: new Date(imp.created_at).toISOString(),
    completedAt: imp.completed_at ? new Date(imp.completed_at).toISOString() : null,
  };
}

/** The published package: at `version` when it names a recorded version other than the latest, else the latest. */
async function publishedData(deps: { db: Knex }, pkg: PackageRow, importId: string | null, version?: string): Promise<z.infer<typeof publishedSchema>> {
  const tools = await listPackageTools(deps.db, pkg.id);
  const publisher = (await findPackageByName(deps.db, pkg.name))?.publisher_username ?? null;
  const v = version && version !== pkg.version ? await findPackageVersion(deps.db, pkg.id, version) : undefined;
  if (v) {
    const category = pkg.category as z.infer<typeof packageSummary>['category'];
    return {
      importId,
      package: { name: pkg.name, version: v.version, category, kind: kindOf(v), publisher },
      tools: versionOf(pkg, v, tools).tools,
      discovery: discoveryOf(v),
    };
  }
  return {
    importId,
    package: { name: pkg.name, version: pkg.version, category: pkg.category as z.infer<typeof packageSummary>['category'], kind: kindOf(pkg), publisher },
    tools: tools.map(toToolListItem),
    discovery: discoveryOf(pkg),
  };
}

const base = { tag: 'Packages', errorShape: 'A' } as const;
const REQUEST = [400];
const BODY = [400, 413, 415];

export const packageOperations: Operation[] = [
  defineOperation({
    ...base,
    id: 'packages.publish',
    method: 'post',
    path: '/api/packages',
    summary: 'Publishes an npm package: imports it as a job (201 with its tools, or 202 with the import to follow)',
    description:
      "Any key may publish. A package name belongs to whoever first published it (an official one to the admin): anyone else gets 403, checked by the name the tarball records. The tarball must be the requested package: its package.json name and version the requested ones, its bytes the registry's dist.integrity, else 400. Re-importing a version already recorded answers from the record and changes nothing; an import that fetches other bytes for a recorded version is 409. Counts toward PUBLISH_DAILY_QUOTA imports per user per 24 hours (429 QUOTA_EXCEEDED).",
    auth: 'key',
    query: publishQuery,
    body: publishBody,
    responses: { 201: ok(publishedSchema), 202: ok(pendingSchema) },
    errors: [...BODY, 403, 409, 429],
    handler: async (ctx, deps, { body, query }) => {
      const caller = requireCaller(ctx);
      const source = parseSource(body.source);
      if ('error' in source || source.kind !== 'npm') throw errors.validation('source must be npm:<name>[@range]');
      const existing = await findPackageByName(deps.db, source.name);
      if (existing && existing.published_by !== caller.userId) {
        throw errors.forbidden(`'${source.name}' was published by ${existing.publisher_username ?? 'the admin'}; only they import its versions`);
      }
      // Re-importing a version already imported (any of them) is idempotent: nothing runs, nothing changes, no quota is used.
      if (existing && (await findPackageVersion(deps.db, existing.id, source.range))) {
        return reply(201, { success: true, data: await publishedData(deps, existing, null, source.range) });
      }
      const { source: _source, ...options } = body;
      const waitMs = query.wait === 'false' ? 0 : PUBLISH_WAIT_MS;
      const quota = { limit: deps.config.PUBLISH_DAILY_QUOTA, since: new Date(Date.now() - DAY_MS) };
      const imp = await requestImport(deps, { source: body.source, official: false, options, requestedBy: caller.userId, quota }, waitMs);
      if (imp.status === 'failed') throw importFailure(imp.error!);
      if (imp.status !== 'succeeded') return reply(202, { success: true, data: { importId: imp.id, status: imp.status } });
      const pkg = (await findPackage(deps.db, imp.package_id!))!;
      return reply(201, { success: true, data: await publishedData(deps, pkg, imp.id, source.range) });
    },
  }),
  defineOperation({
    ...base,
    id: 'packages.importStatus',
    method: 'get',
    path: '/api/package-imports/:id',
    summary: "An import's progress and result (the requester's own imports only)",
    auth: 'key',
    params: importParams,
    responses: { 200: ok(importStatus) },
    errors: [...REQUEST, 404],
    handler: async (ctx, deps, { params }) => {
      const caller = requireCaller(ctx);
      const imp = await findImport(deps.db, params.id);
      if (!imp || imp.requested_by !== caller.userId) throw errors.notFound('Import', params.id);
      return { success: true, data: await importStatusOf(deps, imp) };
    },
  }),
  defineOperation({
    ...base,
    id: 'packages.list',
    method: 'get',
    path: '/api/packages',
    summary: 'Packages by name, paged (hidden ones left out)',
    auth: 'public',
    query: z.object(paging(20, 100)),
    responses: { 200: okPage(packageSummary) },
    errors: REQUEST,
    handler: async (_ctx, deps, { query }) => {
      const rows = await listPublishedPackages(deps.db, query);
      const page = pageOf(rows, query.limit, query.offset);
      return { success: true, data: page.items.map(summary), pagination: page.pagination };
    },
  }),
  defineOperation({
    ...base,
    id: 'packages.mine',
    method: 'get',
    path: '/api/auth/me/packages',
    summary: 'The packages the caller published, hidden ones included, by name',
    auth: 'key',
    query: z.object(paging(50, 100)),
    responses: { 200: okPage(packageSummary) },
    errors: REQUEST,
    handler: async (ctx, deps, { query }) => {
      const caller = requireCaller(ctx);
      const page = pageOf(await listPackagesPublishedBy(deps.db, caller.userId, query), query.limit, query.offset);
      ctx.set('Cache-Control', 'no-store');
      return { success: true, data: page.items.map(summary), pagination: page.pagination };
    },
  }),
  defineOperation({
    ...base,
    id: 'packages.getVersion',
    method: 'get',
    path: '/api/packages/*name/versions/:version',
    summary: 'One version of a package: its tools, publisher, deprecation and its comparison with the version before it',
    auth: 'public',
    params: versionParams,
    responses: { 200: ok(versionSchema.extend({ name: z.string() })) },
    errors: [...REQUEST, 404],
    handler: async (_ctx, deps, { params }) => {
      const { p, versions } = await loadVersions(deps, params.name);
      const v = versions.find((x) => x.version === params.version);
      if (!v) throw errors.notFound('Version', `${params.name}@${params.version}`);
      return { success: true, data: { name: p.name, ...v } };
    },
  }),
  defineOperation({
    ...base,
    id: 'packages.updateVersion',
    method: 'patch',
    path: '/api/packages/*name/versions/:version',
    summary: "Deprecates a version (or undeprecates it): the package's publisher or the admin",
    description: 'A key of the publisher, or the ADMIN_TOKEN; any other key gets a 403. A deprecated version stays runnable.',
    auth: 'public',
    params: versionParams,
    body: versionPatchBody,
    responses: { 200: ok(versionSchema.extend({ name: z.string() })) },
    errors: [...BODY, 401, 403, 404],
    handler: async (ctx, deps, { params, body }) => {
      if (ctx.state.admin !== true) requireCaller(ctx);
      const p = await findPackageByName(deps.db, params.name);
      if (!p) throw errors.notFound('Package', params.name);
      const v = await findPackageVersion(deps.db, p.id, params.version);
      if (!v) throw errors.notFound('Version', `${params.name}@${params.version}`);
      assertMayChange(ctx, p, v);
      await setVersionDeprecated(deps.db, v.id, body.deprecated);
      const after = (await loadVersions(deps, params.name)).versions.find((x) => x.version === params.version)!;
      return { success: true, data: { name: p.name, ...after } };
    },
  }),
  defineOperation({
    ...base,
    id: 'packages.get',
    method: 'get',
    path: '/api/packages/*name',
    summary: 'A package: publisher, and its versions, each with its tools and import time',
    auth: 'public',
    params: nameParams,
    responses: { 200: ok(packageDetail) },
    errors: [...REQUEST, 404],
    handler: async (_ctx, deps, { params }) => {
      const { p, versions } = await loadVersions(deps, params.name);
      const current = versions.find((v) => v.version === p.version);
      const startup = current ? await latestImportStartup(deps.db, p.id, new Date(current.importedAt), p.version) : null;
      const downloads = p.downloads_checked_at
        ? { weekly: p.weekly_downloads, start: p.downloads_start, end: p.downloads_end, checkedAt: new Date(p.downloads_checked_at).toISOString() }
        : null;
      return { success: true, data: { ...summary(p), downloads, versions, startup: startupOf(startup) } };
    },
  }),
  defineOperation({
    ...base,
    id: 'packages.update',
    method: 'patch',
    path: '/api/packages/*name',
    summary: 'Hides (or shows) a package, deprecates its version: its publisher only',
    auth: 'key',
    params: nameParams,
    body: patchBody,
    responses: { 200: ok(packageSummary.extend({ deprecated: z.string().nullable() })) },
    errors: [...BODY, 403, 404],
    handler: async (ctx, deps, { params, body }) => {
      const caller = requireCaller(ctx);
      const p = await findPackageByName(deps.db, params.name);
      if (!p) throw errors.notFound('Package', params.name);
      if (p.published_by !== caller.userId) throw errors.forbidden("Only the package's publisher may change it");
      await updatePackageFlags(deps.db, p.id, { hidden: body.hidden });
      // `deprecated` here is the latest version's (PATCH …/versions/:version deprecates any version).
      const latest = await findPackageVersion(deps.db, p.id, p.version);
      if (body.deprecated !== undefined && latest) await setVersionDeprecated(deps.db, latest.id, body.deprecated);
      const after = (await findPackageByName(deps.db, params.name))!;
      const deprecated = latest ? ((await findPackageVersion(deps.db, p.id, p.version))?.deprecated ?? null) : after.deprecated;
      return { success: true, data: { ...summary(after), deprecated } };
    },
  }),
];

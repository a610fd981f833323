/** Operator operations (ADMIN_TOKEN): create a user with their first key, import a tool package. */
import { z } from 'zod';
import { defineOperation, reply, type Operation } from './define.js';
import { ok, timestamp, uuid } from './envelope.js';
import { toolListItemSchema, toToolListItem } from './tool-schemas.js';
import { errors } from '../../core/infra/errors.js';
import { createUserWithKey, newUserSchema } from '../../core/auth/create-account.js';
import { TIERS } from '../../core/types.js';
import { findUserByUsername, type UserRow } from '../../core/repos/users.js';
import { findPackage, transferPackage } from '../../core/repos/packages.js';
import { listPackageTools } from '../../core/repos/tools.js';
import { findPackageByName } from '../../core/repos/published-packages.js';
import { requestImport } from '../../core/packages/request-import.js';
import { sourceSchema } from '../../core/packages/source.js';
import { importOptionsShape, serverJsonPackage } from '../../core/packages/mcp-server.js';
import { discoveryOf, discoverySchema, importedPackageSchema, importFailure, kindOf } from './package-schemas.js';

// ---- response schemas and mapper ----

const userSchema = z.object({ id: uuid, username: z.string(), name: z.string().nullable(), tier: z.enum(TIERS) });

export function toUser(u: UserRow): z.infer<typeof userSchema> {
  return { id: u.id, username: u.username, name: u.name, tier: u.tier };
}

const createdUserSchema = z.object({
  user: userSchema,
  apiKey: z.object({ id: uuid, key: z.string().meta({ description: 'Shown once' }), prefix: z.string(), createdAt: timestamp }),
});

const importedSchema = z.object({
  package: importedPackageSchema,
  tools: z.array(toolListItemSchema),
  discovery: discoverySchema,
});

const pendingImportSchema = z.object({ importId: uuid, status: z.enum(['queued', 'running']) });

// ---- input schemas ----

// `source` may be left out when `serverJson` names the npm package (and its version).
const importBody = z
  .object({ source: sourceSchema.optional(), official: z.boolean().optional(), ...importOptionsShape })
  .strict()
  .superRefine((b, ctx) => {
    if (b.source !== undefined) return;
    if (!b.serverJson) return ctx.addIssue({ code: 'custom', path: ['source'], message: 'is required (or give a serverJson)' });
    const named = serverJsonPackage(b.serverJson);
    if ('error' in named) ctx.addIssue({ code: 'custom', path: ['serverJson', 'packages'], message: named.error });
  });
/** How long an import is waited for before the answer is 202 with the import to look up. */
const IMPORT_WAIT_MS = 180_000;

/** Refused before any handler: a malformed URL or body (400); on methods that may carry a body, one over 1 MiB (413) or not JSON (415). */
const BODY = [400, 413, 415];
const base = { tag: 'Admin', errorShape: 'A', auth: 'admin' } as const;

export const adminOperations: Operation[] = [
  defineOperation({
    ...base,
    id: 'admin.createUser',
    method: 'post',
    path: '/api/admin/users',
    summary: 'Creates a user with their first API key',
    body: newUserSchema,
    responses: { 201: ok(createdUserSchema) },
    errors: [...BODY, 409],
    handler: async (_ctx, deps, { body }) => {
      if (await findUserByUsername(deps.db, body.username)) throw errors.conflict(`Username '${body.username}' is taken`);
      const { user, key, secret } = await createUserWithKey(deps.db, body);
      return {
        success: true,
        data: { user: toUser(user), apiKey: { id: key.id, key: secret, prefix: key.prefix, createdAt: new Date(key.created_at).toISOString() } },
      };
    },
  }),
  defineOperation({
    ...base,
    id: 'admin.importPackage',
    method: 'post',
    path: '/api/admin/packages',
    summary: 'Imports a tool package (npm or a local directory) and answers with its tools',
    body: importBody,
    responses: { 201: ok(importedSchema), 202: ok(pendingImportSchema) },
    errors: [...BODY, 409],
    handler: async (_ctx, deps, { body }) => {
      const { source, official, ...options } = body;
      const fromJson = body.serverJson ? serverJsonPackage(body.serverJson) : undefined;
      const named = fromJson && 'name' in fromJson ? `npm:${fromJson.name}@${fromJson.version ?? 'latest'}` : undefined;
      const imp = await requestImport(deps, { source: source ?? named!, official: official ?? false, options }, IMPORT_WAIT_MS);
      if (imp.status === 'failed') throw importFailure(imp.error!);
      if (imp.status !== 'succeeded') return reply(202, { success: true, data: { importId: imp.id, status: imp.status } });
      const pkg = (await findPackage(deps.db, imp.package_id!))!;
      const tools = await listPackageTools(deps.db, pkg.id);
      const publisher = (await findPackageByName(deps.db, pkg.name))?.publisher_username ?? null;
      return reply(201, {
        success: true,
        data: {
          package: { name: pkg.name, version: pkg.version, category: pkg.category, kind: kindOf(pkg), publisher },
          tools: tools.map(toToolListItem),
          discovery: discoveryOf(pkg),
        },
      });
    },
  }),
  defineOperation({
    ...base,
    id: 'admin.transferPackage',
    method: 'post',
    path: '/api/admin/packages/*name/transfer',
    summary: 'Gives a package name to another owner: only they (or the admin) record its versions from then on',
    description:
      "A package name belongs to whoever first published it (an official one to the admin). `to`: the new owner's username, or null for the admin. Its recorded versions keep who published each.",
    params: z.object({ name: z.string().min(1).max(214).meta({ description: 'npm package name (`@scope/name` or `name`)' }) }),
    body: z.object({ to: z.string().min(1).max(100).nullable().meta({ description: "The new owner's username; null: the admin" }) }).strict(),
    responses: { 200: ok(z.object({ name: z.string(), publisher: z.string().nullable() })) },
    errors: [...BODY, 404],
    handler: async (_ctx, deps, { params, body }) => {
      const user = body.to === null ? null : await findUserByUsername(deps.db, body.to);
      if (user === undefined) throw errors.notFound('User', body.to!);
      if (!(await transferPackage(deps.db, params.name, user?.id ?? null))) throw errors.notFound('Package', params.name);
      return { success: true, data: { name: params.name, publisher: user?.username ?? null } };
    },
  }),
];

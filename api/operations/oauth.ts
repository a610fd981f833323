/**
 * The signed-in side of MCP authorization (api/oauth/provider.ts): the consent step of an authorization request, and
 * the user's grants (listed and revoked in the account settings, beside API keys).
 * The authorization server sends the browser to `/api/auth/oauth/interactions/<uid>`, which forwards it to the web
 * app's consent page; the page reads the request and answers it through the two routes below that URL — under it, so
 * that the provider's interaction cookie (bound to the browser that started the request) comes along and a consent link
 * sent to someone else is worthless.
 */
import { z } from 'zod';
import { defineOperation, HANDLED, type Operation } from './define.js';
import { ok, okMessage, nullableTimestamp, timestamp } from './envelope.js';
import { requireCaller } from '../middleware/auth.js';
import { errors } from '../../core/infra/errors.js';
import { isOwner } from '../../core/collections/collections.js';
import { findCollectionOfUser } from '../../core/repos/collections.js';
import { findOAuthGrantOwner, listOAuthGrants, revokeOAuthGrant } from '../../core/repos/oauth.js';
import { collectionOfResource, MCP_SCOPE, oauthServer, originOf } from '../oauth/provider.js';
import type { Context } from 'koa';
import type { AppDeps } from '../deps.js';
import type { InteractionDetails } from 'oidc-provider';

const uidParams = z.object({ uid: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be an interaction id') });
const grantParams = z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be a grant id') });

const resourceSchema = z.object({
  url: z.string().meta({ description: 'The MCP URL the access token will be valid on' }),
  collection: z.object({ owner: z.string(), slug: z.string(), name: z.string(), isPublic: z.boolean() }).nullable().meta({
    description: 'The collection it serves; null when it does not exist or the signed-in user may not use it (approval is then refused)',
  }),
});
const interactionSchema = z.object({
  uid: z.string(),
  client: z.object({ id: z.string(), name: z.string().nullable(), uri: z.string().nullable(), redirectUri: z.string().nullable() }),
  resources: z.array(resourceSchema),
  scopes: z.array(z.string()),
});
const grantSchema = z.object({
  id: z.string(),
  client: z.object({ id: z.string(), name: z.string().nullable() }),
  resources: z.array(z.string()),
  createdAt: timestamp,
  expiresAt: nullableTimestamp,
});

const REQUEST = [400];
const BODY = [400, 413, 415];
const base = { tag: 'Accounts', errorShape: 'A' } as const;

/** The pending authorization request of this browser, or 404 (unknown, expired, or started in another browser). */
async function interactionOf(ctx: Context, deps: AppDeps, uid: string): Promise<InteractionDetails> {
  const provider = await oauthServer(deps).providerFor(ctx);
  const details = await provider.interactionDetails(ctx.req, ctx.res).catch(() => undefined);
  if (!details || details.uid !== uid) throw errors.notFound('Authorization request', uid);
  return details;
}

const resourcesOf = (d: InteractionDetails) => (d.params.resource === undefined ? [] : [d.params.resource].flat());

async function describe(ctx: Context, deps: AppDeps, d: InteractionDetails) {
  const caller = requireCaller(ctx);
  const provider = await oauthServer(deps).providerFor(ctx);
  const client = await provider.Client.find(d.params.client_id);
  if (!client) throw errors.notFound('Authorization request', d.uid);
  const origin = originOf(ctx, deps);
  const resources = await Promise.all(
    resourcesOf(d).map(async (url) => {
      const target = collectionOfResource(origin, url);
      const c = target ? await findCollectionOfUser(deps.db, target.username, target.slug) : undefined;
      const visible = c && (c.is_public || isOwner(c, caller));
      return { url, collection: visible ? { owner: c.owner_username, slug: c.uid, name: c.name, isPublic: c.is_public } : null };
    }),
  );
  return {
    uid: d.uid,
    client: { id: client.clientId, name: client.clientName ?? null, uri: client.clientUri ?? null, redirectUri: (d.params.redirect_uri as string) ?? null },
    resources,
    scopes: (d.params.scope ?? '').split(' ').filter(Boolean),
  };
}

export const oauthOperations: Operation[] = [
  defineOperation({
    ...base,
    id: 'oauth.interaction',
    method: 'get',
    path: '/api/auth/oauth/interactions/:uid',
    summary: "MCP sign-in: where the authorization server sends the browser; forwards it to the web app's consent page",
    auth: 'public',
    params: uidParams,
    responses: { 303: { raw: { contentType: 'text/html', description: 'To `/consent/<uid>`' } } },
    errors: [...REQUEST, 404],
    handler: async (ctx, deps, { params }) => {
      // Only the browser that started the request is forwarded; anyone else (an unknown, expired or forwarded link) is 404.
      await interactionOf(ctx, deps, params.uid);
      ctx.set('Cache-Control', 'no-store');
      ctx.status = 303;
      ctx.redirect(`/consent/${params.uid}`);
      return HANDLED;
    },
  }),
  defineOperation({
    ...base,
    id: 'oauth.interactionDetails',
    method: 'get',
    path: '/api/auth/oauth/interactions/:uid/details',
    summary: 'MCP sign-in: which client asks, for which collections (the consent page shows it)',
    description: 'Only in the browser that started the request (its interaction cookie), and only signed in.',
    auth: 'key',
    params: uidParams,
    responses: { 200: ok(interactionSchema) },
    errors: [...REQUEST, 404],
    handler: async (ctx, deps, { params }) => ({ success: true, data: await describe(ctx, deps, await interactionOf(ctx, deps, params.uid)) }),
  }),
  defineOperation({
    ...base,
    id: 'oauth.consent',
    method: 'post',
    path: '/api/auth/oauth/interactions/:uid/consent',
    summary: 'MCP sign-in: the signed-in user approves or denies the request; answers where the browser goes next',
    description:
      "Approving makes a grant for the caller: the client's access tokens act as the caller on the requested collection MCP URLs only. Refused (404) when a requested collection does not exist or the caller may not use it.",
    auth: 'key',
    params: uidParams,
    body: z.object({ approve: z.boolean() }).strict(),
    responses: { 200: ok(z.object({ redirectTo: z.string().meta({ description: 'Back to the authorization server, which redirects to the client' }) })) },
    errors: [...BODY, 403, 404],
    handler: async (ctx, deps, { params, body }) => {
      const caller = requireCaller(ctx);
      const d = await interactionOf(ctx, deps, params.uid);
      const provider = await oauthServer(deps).providerFor(ctx);
      let result: Record<string, unknown>;
      if (!body.approve) {
        result = { error: 'access_denied', error_description: 'The user denied the request' };
      } else {
        const described = await describe(ctx, deps, d);
        const missing = described.resources.find((r) => !r.collection);
        if (missing) throw errors.notFound('Collection', missing.url);
        if (described.resources.length === 0) throw errors.validation('The request names no resource: an MCP client must ask for a collection MCP URL');
        const grant = new provider.Grant({ accountId: caller.userId, clientId: d.params.client_id });
        const oidcScopes = described.scopes.filter((s) => s === 'openid' || s === 'offline_access' || s === MCP_SCOPE);
        if (oidcScopes.length) grant.addOIDCScope(oidcScopes.join(' '));
        for (const r of described.resources) grant.addResourceScope(r.url, MCP_SCOPE);
        result = { login: { accountId: caller.userId }, consent: { grantId: await grant.save() } };
      }
      const redirectTo = await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false });
      return { success: true, data: { redirectTo } };
    },
  }),
  defineOperation({
    ...base,
    id: 'oauth.grants',
    method: 'get',
    path: '/api/auth/me/oauth-grants',
    summary: "The MCP clients the caller signed in with OAuth: each grant's client and collection MCP URLs",
    auth: 'key',
    responses: { 200: ok(z.array(grantSchema)) },
    errors: REQUEST,
    handler: async (ctx, deps) => {
      const rows = await listOAuthGrants(deps.db, requireCaller(ctx).userId);
      return {
        success: true,
        data: rows.map((g) => ({
          id: g.id,
          client: { id: g.clientId, name: g.clientName },
          resources: g.resources,
          createdAt: new Date(g.createdAt).toISOString(),
          expiresAt: g.expiresAt ? new Date(g.expiresAt).toISOString() : null,
        })),
      };
    },
  }),
  defineOperation({
    ...base,
    id: 'oauth.revokeGrant',
    method: 'delete',
    path: '/api/auth/me/oauth-grants/:id',
    summary: "Revokes one of the caller's grants: its access and refresh tokens stop working at once",
    auth: 'key',
    params: grantParams,
    responses: { 200: okMessage },
    errors: [...BODY, 404],
    handler: async (ctx, deps, { params }) => {
      const caller = requireCaller(ctx);
      if ((await findOAuthGrantOwner(deps.db, params.id)) !== caller.userId) throw errors.notFound('Grant', params.id);
      await revokeOAuthGrant(deps.db, params.id);
      return { success: true, message: 'Grant revoked' };
    },
  }),
];

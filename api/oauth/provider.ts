/**
 * The OAuth 2.1 authorization server of the MCP endpoints (the MCP authorization spec; issue 44 item 1), built on
 * `oidc-provider` (panva's certified OpenID/OAuth server, a Koa app itself): authorization code with PKCE S256 only,
 * dynamic client registration (RFC 7591), client ID metadata documents (a client_id that is an https URL of its JSON
 * document), resource indicators (RFC 8707: each access token is bound to one collection's MCP URL), refresh tokens
 * rotated on use, `iss` in the authorization response (RFC 9207). Its endpoints live under /oauth/; its issuer is the
 * service's origin, so that its metadata is `/.well-known/oauth-authorization-server` (RFC 8414).
 *
 * The issuer is PUBLIC_URL, else the request's origin: one provider per origin seen (a few at most; the canonical
 * middleware has already refused a malformed Host). Storage is Postgres (core/repos/oauth.ts), shared by every API
 * process, as are the signing and cookie keys (made once, kept in the same table).
 * The user signs in with their ordinary session and consents on the web app's page (`/consent/<uid>`, through
 * api/operations/oauth.ts); tokens are opaque, looked up locally (verifyAccessToken).
 */
import crypto from 'node:crypto';
import type { Context, Next } from 'koa';
import type Provider from 'oidc-provider';
import type { Adapter, ClientLike, AdapterPayload, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import type { AppDeps } from '../deps.js';
import {
  consumeOAuthModel,
  deleteExpiredOAuthModels,
  destroyOAuthModel,
  findOAuthCaller,
  findOAuthModel,
  findOAuthModelByUid,
  findOAuthModelByUserCode,
  loadOrCreateOAuthSecrets,
  revokeOAuthGrant,
  upsertOAuthModel,
  type OAuthPayload,
} from '../../core/repos/oauth.js';
import { guardedFetch } from './fetch.js';
import { AppError } from '../../core/infra/errors.js';
import type { Caller } from '../../core/types.js';
import { charge } from '../middleware/rate-limit.js';
import { callerIdentity } from '../middleware/identity.js';

/** The one scope a resource (a collection's MCP URL) has: using the collection's tools as the user. */
export const MCP_SCOPE = 'mcp';
/** A collection's MCP URL path, with the collection as groups; `/http` and `/mcp` are the same resource. */
export const MCP_PATH = /^\/api\/mcp\/([^/]+)\/([^/]+)\/(?:mcp|http)$/;
const OAUTH_PREFIX = '/oauth/';
const ACCESS_TOKEN_TTL = 3600;
const REFRESH_TOKEN_TTL = 30 * 86_400;

export const originOf = (ctx: Context, deps: AppDeps) => deps.config.PUBLIC_URL ?? `${ctx.protocol}://${ctx.host}`;
export const protectedResourceMetadataUrl = (origin: string, path: string) => `${origin}/.well-known/oauth-protected-resource${path}`;

/** The collection a resource indicator names (lower-cased owner), or undefined when it is not one of our MCP URLs. */
export function collectionOfResource(origin: string, resource: string): { username: string; slug: string } | undefined {
  const url = URL.parse(resource);
  if (!url || url.origin !== origin || url.search || url.hash) return undefined;
  const m = MCP_PATH.exec(url.pathname);
  return m ? { username: decodeURIComponent(m[1]).toLowerCase(), slug: decodeURIComponent(m[2]) } : undefined;
}

interface Secrets {
  cookieKeys: string[];
  jwks: { keys: object[] };
}

function makeSecrets(): Secrets {
  const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    cookieKeys: [crypto.randomBytes(32).toString('base64url')],
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: crypto.randomUUID(), use: 'sig', alg: 'RS256' }] },
  };
}

function adapterClass(deps: AppDeps) {
  return class PgAdapter implements Adapter {
    constructor(private readonly name: string) {}
    async upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void> {
      await upsertOAuthModel(deps.db, this.name, id, payload as OAuthPayload, expiresIn);
      // Expired artifacts go now and then, as new ones come.
      if (Math.random() < 0.02) void deleteExpiredOAuthModels(deps.db).catch(() => undefined);
    }
    async find(id: string) {
      return (await findOAuthModel(deps.db, this.name, id)) as AdapterPayload | undefined;
    }
    async findByUid(uid: string) {
      return (await findOAuthModelByUid(deps.db, this.name, uid)) as AdapterPayload | undefined;
    }
    async findByUserCode(userCode: string) {
      return (await findOAuthModelByUserCode(deps.db, this.name, userCode)) as AdapterPayload | undefined;
    }
    async consume(id: string): Promise<void> {
      await consumeOAuthModel(deps.db, this.name, id);
    }
    async destroy(id: string): Promise<void> {
      await destroyOAuthModel(deps.db, this.name, id);
    }
    async revokeByGrantId(grantId: string): Promise<void> {
      await revokeOAuthGrant(deps.db, grantId);
    }
  };
}

/**
 * oidc-provider, loaded at the first OAuth request: importing it is ~0.4 s of CPU (measured alone, 2026-12-03), which
 * an API process that never serves OAuth (most, and every test file but the OAuth ones) need not pay at its start.
 */
let oidcProvider: Promise<typeof Provider> | undefined;
const loadOidcProvider = () => (oidcProvider ??= import('oidc-provider').then((m) => m.default));

function configuration(deps: AppDeps, origin: string, secrets: Secrets, errors: (typeof Provider)['errors']): Configuration {
  return {
    adapter: adapterClass(deps),
    jwks: secrets.jwks as Configuration['jwks'],
    cookies: { keys: secrets.cookieKeys, long: { signed: true }, short: { signed: true } },
    findAccount: async (_ctx: unknown, id: string) => {
      const caller = await findOAuthCaller(deps.db, id);
      return caller ? { accountId: id, claims: async () => ({ sub: id, preferred_username: caller.username }) } : undefined;
    },
    claims: { openid: ['sub'], profile: ['preferred_username'] },
    // `mcp` is also the resource server's scope (getResourceServerInfo); listed here, clients may register with it.
    scopes: ['openid', 'offline_access', MCP_SCOPE],
    responseTypes: ['code'],
    pkce: { required: () => true },
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' },
    // Every authorization asks the signed-in user (a grant is never reused silently); the grant our consent made is loaded.
    loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
      const grantId = (ctx.oidc.result as { consent?: { grantId?: string } } | undefined)?.consent?.grantId;
      return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
    },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/api/auth/oauth/interactions/${interaction.uid}` },
    issueRefreshToken: async (_ctx: unknown, client: ClientLike) => client.grantTypeAllowed('refresh_token'),
    rotateRefreshToken: true,
    ttl: {
      AccessToken: ACCESS_TOKEN_TTL,
      AuthorizationCode: 60,
      Grant: REFRESH_TOKEN_TTL,
      Interaction: 3600,
      Session: 14 * 86_400,
      RefreshToken: REFRESH_TOKEN_TTL,
    },
    routes: {
      authorization: '/oauth/authorize',
      token: '/oauth/token',
      registration: '/oauth/register',
      jwks: '/oauth/jwks',
      revocation: '/oauth/revoke',
      end_session: '/oauth/session/end',
      userinfo: '/oauth/userinfo',
      introspection: '/oauth/introspect',
      pushed_authorization_request: '/oauth/par',
      code_verification: '/oauth/device',
      device_authorization: '/oauth/device/auth',
      backchannel_authentication: '/oauth/backchannel',
      challenge: '/oauth/challenge',
    },
    features: {
      devInteractions: { enabled: false },
      registration: { enabled: true },
      revocation: { enabled: true },
      clientIdMetadataDocument: { enabled: true, ack: 'draft-02' } as never,
      resourceIndicators: {
        enabled: true,
        // The resource is the collection's MCP URL; whether the user may use that collection is the consent's check.
        defaultResource: async (_ctx: unknown, _client: unknown, oneOf?: string | string[]) => oneOf,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx: unknown, resource: string) => {
          if (!collectionOfResource(origin, resource)) throw new errors.InvalidTarget('resource must be the MCP URL of a collection on this server');
          return { scope: MCP_SCOPE, audience: resource, accessTokenTTL: ACCESS_TOKEN_TTL, accessTokenFormat: 'opaque' };
        },
      },
    },
    fetch: (url: string | URL, options: RequestInit) => guardedFetch(url, options, deps.config.OAUTH_CLIENT_METADATA_HOSTS),
    renderError: async (ctx: KoaContextWithOIDC, out: unknown) => {
      ctx.type = 'json';
      ctx.body = out;
    },
  };
}

export interface OAuthServer {
  providerFor(ctx: Context): Promise<Provider>;
}

const servers = new WeakMap<AppDeps, OAuthServer>();
const MAX_ORIGINS = 16;

export function oauthServer(deps: AppDeps): OAuthServer {
  let server = servers.get(deps);
  if (server) return server;
  let secrets: Promise<Secrets> | undefined;
  const providers = new Map<string, Promise<Provider>>();
  server = {
    providerFor(ctx) {
      const origin = originOf(ctx, deps);
      let p = providers.get(origin);
      if (!p) {
        if (providers.size >= MAX_ORIGINS) providers.delete(providers.keys().next().value!);
        secrets ??= loadOrCreateOAuthSecrets(deps.db, makeSecrets);
        p = Promise.all([secrets, loadOidcProvider()]).then(([s, OidcProvider]) => {
          const provider = new OidcProvider(origin, configuration(deps, origin, s, OidcProvider.errors));
          provider.proxy = deps.config.TRUST_PROXY > 0;
          return provider;
        });
        p.catch(() => providers.delete(origin));
        providers.set(origin, p);
      }
      return p;
    },
  };
  servers.set(deps, server);
  return server;
}

/** Hands /oauth/* (and the server's metadata documents) to the provider, which writes the response itself. */
export function oauthRoutes(deps: AppDeps) {
  const server = oauthServer(deps);
  return async (ctx: Context, next: Next) => {
    const asMetadata = ctx.path === '/.well-known/oauth-authorization-server' || ctx.path === '/.well-known/openid-configuration';
    if (!asMetadata && !ctx.path.startsWith(OAUTH_PREFIX)) return next();
    // Before authentication (its Bearer tokens are the provider's own), so the anonymous budget is charged here.
    await charge(ctx, deps.rateLimiter, callerIdentity(ctx), 'free');
    const provider = await server.providerFor(ctx);
    if (asMetadata) ctx.req.url = '/.well-known/openid-configuration';
    ctx.respond = false;
    await provider.callback()(ctx.req, ctx.res);
  };
}

/** The protected resource metadata (RFC 9728): the root form, and the path form of each MCP URL. */
export function protectedResourceRoutes(deps: AppDeps) {
  const PREFIX = '/.well-known/oauth-protected-resource';
  return async (ctx: Context, next: Next) => {
    if (ctx.path !== PREFIX && !ctx.path.startsWith(`${PREFIX}/`)) return next();
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return next();
    const origin = originOf(ctx, deps);
    const path = ctx.path.slice(PREFIX.length);
    if (path && !MCP_PATH.test(path)) return next();
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = {
      resource: path ? `${origin}${path}` : origin,
      authorization_servers: [origin],
      scopes_supported: [MCP_SCOPE],
      bearer_methods_supported: ['header'],
      resource_name: path ? `Toolshed collection ${decodeURIComponent(MCP_PATH.exec(path)![1])}/${decodeURIComponent(MCP_PATH.exec(path)![2])}` : 'Toolshed',
      resource_documentation: `${origin}/docs`,
    };
  };
}

/**
 * An OAuth access token of ours, if live: the user it acts as and the resource (MCP URL) it was issued for. Undefined
 * for anything else (unknown, expired, revoked).
 */
export async function verifyAccessToken(deps: AppDeps, ctx: Context, token: string): Promise<{ userId: string; resource: string } | undefined> {
  if (!/^[A-Za-z0-9_-]{20,200}$/.test(token)) return undefined;
  const provider = await oauthServer(deps).providerFor(ctx);
  const at = await provider.AccessToken.find(token);
  if (!at?.accountId || typeof at.aud !== 'string') return undefined;
  if (at.grantId && !(await provider.Grant.find(at.grantId))) return undefined;
  return { userId: at.accountId, resource: at.aud };
}

/**
 * On a collection's MCP URL, every 401 (no credentials for a private or unknown collection, an unknown key, a token
 * for another resource) carries the challenge that starts an MCP client's OAuth sign-in (RFC 9728 §5.1).
 */
export function mcpChallenge(deps: AppDeps) {
  return async (ctx: Context, next: Next) => {
    if (!MCP_PATH.test(ctx.path)) return next();
    try {
      await next();
    } catch (err) {
      if (err instanceof AppError && err.status === 401) {
        const url = protectedResourceMetadataUrl(originOf(ctx, deps), ctx.path);
        const invalid = ctx.get('authorization') ? ', error="invalid_token"' : '';
        const challenge = `Bearer resource_metadata="${url}", scope="${MCP_SCOPE}"${invalid}`;
        throw new AppError(err.code, err.status, err.message, err.details, err.extra, { ...err.headers, 'WWW-Authenticate': challenge });
      }
      throw err;
    }
  };
}

/**
 * Accepts an access token on the one resource it was issued for: the request must be for that collection's MCP URL
 * (either form); undefined when the token is not ours, a message when it is for something else.
 */
export async function oauthCaller(deps: AppDeps, ctx: Context, token: string): Promise<{ caller?: Caller; refused?: string } | undefined> {
  const at = await verifyAccessToken(deps, ctx, token);
  if (!at) return undefined;
  const target = collectionOfResource(originOf(ctx, deps), at.resource);
  const m = MCP_PATH.exec(ctx.path);
  let here: { username: string; slug: string } | undefined;
  try {
    here = m ? { username: decodeURIComponent(m[1]).toLowerCase(), slug: decodeURIComponent(m[2]) } : undefined;
  } catch {
    here = undefined;
  }
  if (!target || !here || target.username !== here.username || target.slug !== here.slug) {
    return { refused: 'This OAuth access token was issued for another resource; it is valid only on the MCP URL it was issued for' };
  }
  const caller = await findOAuthCaller(deps.db, at.userId);
  return caller ? { caller } : { refused: 'Unknown or revoked access token' };
}

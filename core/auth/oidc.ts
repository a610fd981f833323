/**
 * Single sign-on through the operator's OpenID Connect provider (OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET):
 * the authorization code flow with PKCE, state and nonce. The browser holds only a random handle to the attempt (a
 * short-lived cookie); state, nonce and verifier stay in Postgres and are consumed by the first callback. A user is
 * found by the provider's `sub` (with its issuer); an unknown one is made only when SIGNUP is open, or linked to the
 * account already signed in in that browser. The only file that imports openid-client.
 */
import crypto from 'node:crypto';
import * as client from 'openid-client';
import type { Config } from '../infra/config.js';
import type { Db } from '../infra/db.js';
import { AppError } from '../infra/errors.js';
import { randomBase62 } from '../infra/crypto.js';
import { deleteExpiredOidcLogins, insertOidcLogin, takeOidcLogin } from '../repos/oidc-logins.js';
import { findUserByOidc, insertOidcUser, linkUserOidc, takenUsernames, type UserRow } from '../repos/users.js';
import { sliceWhole } from '../text/text-cut.js';

export const OIDC_COOKIE = 'toolshed_oidc';
/** How long a sign-in at the provider may take. */
export const OIDC_LOGIN_MS = 10 * 60_000;

export type OidcConfig = Pick<Config, 'OIDC_ISSUER' | 'OIDC_CLIENT_ID' | 'OIDC_CLIENT_SECRET' | 'SIGNUP'>;

/** Why a sign-in ended without a session; the login page says it in words. */
export type OidcRefusal = 'expired' | 'provider' | 'closed' | 'invite' | 'linked';

export class OidcRefused extends Error {
  constructor(
    readonly reason: OidcRefusal,
    message: string,
  ) {
    super(message);
  }
}

export interface OidcClient {
  /** Where to send the browser, and the handle to keep in its cookie. */
  start(redirectUri: string): Promise<{ url: string; handle: string }>;
  /** The provider's identity behind a callback URL, checked against the attempt the handle names. */
  finish(handle: string | undefined, callbackUrl: URL): Promise<{ issuer: string; subject: string; username?: string; name?: string }>;
}

export const oidcEnabled = (config: OidcConfig): boolean => Boolean(config.OIDC_ISSUER && config.OIDC_CLIENT_ID);

const hashOf = (handle: string) => crypto.createHash('sha256').update(`oidc:${handle}`).digest('hex');

export function createOidcClient(db: Db, config: OidcConfig): OidcClient {
  let discovered: Promise<client.Configuration> | undefined;
  const configuration = () => {
    discovered ??= discover(config).catch((err) => {
      discovered = undefined; // the provider may be back on the next attempt
      throw err;
    });
    return discovered;
  };
  return {
    async start(redirectUri) {
      const c = await configuration().catch(providerDown);
      const attempt = { state: client.randomState(), nonce: client.randomNonce(), code_verifier: client.randomPKCECodeVerifier() };
      const handle = randomBase62(32);
      await deleteExpiredOidcLogins(db);
      await insertOidcLogin(db, hashOf(handle), attempt, new Date(Date.now() + OIDC_LOGIN_MS));
      const url = client.buildAuthorizationUrl(c, {
        redirect_uri: redirectUri,
        scope: 'openid profile email',
        state: attempt.state,
        nonce: attempt.nonce,
        code_challenge: await client.calculatePKCECodeChallenge(attempt.code_verifier),
        code_challenge_method: 'S256',
      });
      return { url: url.href, handle };
    },
    async finish(handle, callbackUrl) {
      const attempt = handle && /^[0-9A-Za-z]{32}$/.test(handle) ? await takeOidcLogin(db, hashOf(handle)) : undefined;
      if (!attempt) throw new OidcRefused('expired', 'This sign-in was not started here, or took too long; start again');
      const c = await configuration().catch(providerDown);
      let claims: client.IDToken | undefined;
      let profile: Record<string, unknown> = {};
      try {
        const tokens = await client.authorizationCodeGrant(c, callbackUrl, {
          pkceCodeVerifier: attempt.code_verifier,
          expectedState: attempt.state,
          expectedNonce: attempt.nonce,
          idTokenExpected: true,
        });
        claims = tokens.claims();
        if (!claims?.sub) throw new Error('no subject in the ID token');
        profile = claims;
        // Many providers put profile claims only in the userinfo response.
        if (!claims.preferred_username && !claims.email && c.serverMetadata().userinfo_endpoint) {
          profile = { ...(await client.fetchUserInfo(c, tokens.access_token, claims.sub)), ...claims };
        }
      } catch (err) {
        throw new OidcRefused('provider', `The provider did not complete the sign-in: ${(err as Error).message}`);
      }
      const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
      const email = str(profile.email);
      return { issuer: claims.iss, subject: claims.sub, username: str(profile.preferred_username) ?? email?.split('@')[0], name: str(profile.name) };
    },
  };
}

async function discover(config: OidcConfig): Promise<client.Configuration> {
  const issuer = new URL(config.OIDC_ISSUER!);
  // Plain HTTP only for a provider on this machine (development, tests); anything else must be HTTPS.
  const loopback = issuer.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(issuer.hostname);
  return client.discovery(
    issuer,
    config.OIDC_CLIENT_ID!,
    config.OIDC_CLIENT_SECRET,
    undefined,
    loopback ? { execute: [client.allowInsecureRequests] } : undefined,
  );
}

function providerDown(err: unknown): never {
  throw new AppError('SERVICE_UNAVAILABLE', 503, `The single sign-on provider cannot be reached: ${(err as Error).message}`);
}

/**
 * The user for an identity at the provider: the one linked to it; else the signed-in user (`current`), now linked;
 * else a new user when sign-up is open. Sign-up rules hold: closed and invite-only services make no one here.
 */
export async function userForIdentity(
  db: Db,
  config: OidcConfig,
  identity: { issuer: string; subject: string; username?: string; name?: string },
  current?: string,
): Promise<UserRow> {
  const linked = await findUserByOidc(db, identity.issuer, identity.subject);
  if (linked) return linked;
  if (current) {
    if (!(await linkUserOidc(db, current, identity.issuer, identity.subject)))
      throw new OidcRefused('linked', 'This account is already linked to another identity');
    return (await findUserByOidc(db, identity.issuer, identity.subject))!;
  }
  if (config.SIGNUP === 'closed') throw new OidcRefused('closed', 'No account here is linked to this identity, and sign-up is closed');
  if (config.SIGNUP === 'invite') throw new OidcRefused('invite', 'No account here is linked to this identity; sign up with an invitation first');
  const username = await freeUsername(db, identity.username ?? identity.name ?? 'user');
  return insertOidcUser(db, {
    username,
    name: identity.name === undefined ? null : sliceWhole(identity.name, 100),
    issuer: identity.issuer,
    subject: identity.subject,
  });
}

/** A username like the provider's (letters, digits, - and _), with a suffix if it is taken. */
async function freeUsername(db: Db, wanted: string): Promise<string> {
  let base = wanted
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9_-]+/g, '-')
    .replace(/^[-_]+|[-_]+$/g, '')
    .slice(0, 30);
  if (base.length < 2) base = `user-${base}`.replace(/-$/, '') || 'user';
  const candidates = [base, ...Array.from({ length: 8 }, (_, i) => `${base}-${i + 2}`), `${base}-${randomBase62(6)}`];
  const taken = await takenUsernames(db, candidates);
  return candidates.find((c) => !taken.has(c.toLowerCase()))!;
}

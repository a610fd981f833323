/**
 * The little of oidc-provider (v9, untyped) that the authorization server (api/oauth/provider.ts) and
 * tests/auth-oidc.test.ts (a stand-in identity provider) use.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export type AdapterPayload = Record<string, unknown>;
  export interface Adapter {
    upsert(id: string, payload: AdapterPayload, expiresIn: number): Promise<void>;
    find(id: string): Promise<AdapterPayload | undefined>;
    findByUid(uid: string): Promise<AdapterPayload | undefined>;
    findByUserCode(userCode: string): Promise<AdapterPayload | undefined>;
    consume(id: string): Promise<void>;
    destroy(id: string): Promise<void>;
    revokeByGrantId(grantId: string): Promise<void>;
  }
  export interface Account {
    accountId: string;
    claims: () => Promise<Record<string, unknown>>;
  }
  export interface ClientLike {
    clientId: string;
    clientName?: string;
    clientUri?: string;
    logoUri?: string;
    redirectUris?: string[];
    grantTypeAllowed(type: string): boolean;
    metadata(): Record<string, unknown>;
  }
  export interface KoaContextWithOIDC {
    oidc: { provider: Provider; result?: unknown; client?: ClientLike; params?: Record<string, unknown> };
    type?: string;
    body?: unknown;
  }
  export type Configuration = Record<string, any>;
  export interface GrantInstance {
    jti: string;
    accountId: string;
    clientId: string;
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
    destroy(): Promise<void>;
  }
  export interface InteractionDetails {
    uid: string;
    params: Record<string, unknown> & { client_id: string; scope?: string; resource?: string | string[]; redirect_uri?: string };
    prompt: { name: string; reasons: string[]; details: Record<string, unknown> };
    session?: { accountId?: string };
    grantId?: string;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    static errors: Record<string, new (description?: string) => Error>;
    proxy: boolean;
    callback(): (req: IncomingMessage, res: ServerResponse) => Promise<void>;
    interactionDetails(req: IncomingMessage, res: ServerResponse): Promise<InteractionDetails>;
    interactionResult(
      req: IncomingMessage,
      res: ServerResponse,
      result: Record<string, unknown>,
      opts?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>;
    Grant: { new (init: { accountId: string; clientId: string }): GrantInstance; find(id: string): Promise<GrantInstance | undefined> };
    Client: { find(id: string): Promise<ClientLike | undefined> };
    AccessToken: { find(token: string): Promise<{ accountId?: string; aud?: unknown; grantId?: string; clientId?: string } | undefined> };
  }
}

/** The little of oidc-provider (v9, untyped) that tests/auth-oidc.test.ts uses: a provider for a test, on a loopback port. */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  interface Account {
    accountId: string;
    claims: () => Promise<Record<string, unknown>>;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Record<string, unknown> & { findAccount?: (ctx: unknown, sub: string) => Promise<Account> });
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}

/**
 * The fetch the authorization server uses for client ID metadata documents (a client_id that is an https URL): only to
 * public unicast addresses (a client cannot make the server read its own network), no redirects, 5 s at most.
 * The name is resolved and checked before the request; a name that resolves differently a moment later (DNS
 * rebinding) is not caught. The hosts the operator names in OAUTH_CLIENT_METADATA_HOSTS (an intranet client's) may
 * be private: for them oidc-provider's own special-use-address dispatcher is left out too, and the default one used.
 */
import dns from 'node:dns/promises';
import ipaddr from 'ipaddr.js';

export async function guardedFetch(url: string | URL, options: RequestInit = {}, privateHosts: readonly string[] = []): Promise<Response> {
  const u = new URL(url);
  if (u.protocol !== 'https:') throw new TypeError('client metadata documents are fetched over https only');
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (privateHosts.includes(host.toLowerCase())) {
    const { dispatcher: _special, ...rest } = options as RequestInit & { dispatcher?: unknown };
    return fetch(u, { ...rest, redirect: 'error', signal: AbortSignal.timeout(5000) });
  }
  const addresses = ipaddr.isValid(host) ? [host] : (await dns.lookup(host, { all: true })).map((a) => a.address);
  for (const a of addresses) {
    const parsed = ipaddr.process(a);
    if (parsed.range() !== 'unicast') throw new TypeError(`client metadata document host ${u.hostname} is not a public address`);
  }
  return fetch(u, { ...options, redirect: 'error', signal: AbortSignal.timeout(5000) });
}

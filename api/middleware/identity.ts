/**
 * Who a request counts against: a signed-in user (whatever key it uses), or an anonymous client address. IPv6
 * addresses are bucketed by their /64, since one subscriber is routinely handed a whole /64 and could otherwise
 * rotate through it to get a fresh budget per request. The address itself is Koa's `ctx.ip`, which trusts only
 * TRUST_PROXY hops of X-Forwarded-For (app.ts).
 */
import type { Context } from 'koa';
import ipaddr from 'ipaddr.js';
import { userCaller, type Caller } from '../../core/types.js';

/** The address bucket of a client: IPv4 as is, IPv6 by its /64 (IPv4-mapped IPv6 as the IPv4 address). */
export function addressBucket(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const parsed = ipaddr.process(ip);
  if (parsed.kind() === 'ipv4') return parsed.toString();
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((p) => p.toString(16));
  return `${parts.join(':')}::/64`;
}

/** `user:<id>` for a caller with a key, else `ip:<bucket>`. */
export function callerIdentity(ctx: Context): string {
  const caller = ctx.state.caller as Caller | undefined;
  return caller ? userCaller(caller.userId) : `ip:${addressBucket(ctx.ip)}`;
}

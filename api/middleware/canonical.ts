/**
 * Runs before any decision is taken on a request: a path or query that cannot be read one way only is refused here,
 * once. A NUL byte (raw or %00) or a malformed escape is a 400, and so is a Host (or trusted X-Forwarded-Host) that is
 * not a host name or address with an optional port: the service builds its public URLs from it when PUBLIC_URL is
 * unset (RFC 9112 §3.2: an invalid Host is a 400). JSON bodies are checked by jsonBody (body.ts).
 * Routing is case-sensitive (app.ts) and authorization is decided by the handlers, never by a path prefix, so other
 * spellings (`/API/...`, `//`, dot segments, encoded slashes) simply match no route.
 */
import type { Context, Next } from 'koa';
import { errors } from '../../core/infra/errors.js';

const NUL = /%00|\u0000/i;

function readable(text: string): boolean {
  try {
    decodeURIComponent(text);
    return true;
  } catch {
    return false;
  }
}

/** A DNS name (underscores allowed, as container names have them), IPv4 address or bracketed IPv6 literal, and a port. */
const HOST = /^(?:[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?(?:\.[A-Za-z0-9_](?:[A-Za-z0-9_-]*[A-Za-z0-9_])?)*\.?|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/;

export function canonicalRequest() {
  return async (ctx: Context, next: Next) => {
    const { path, querystring } = ctx;
    // One Authorization and one Host: Node keeps the first of repeated ones and drops the rest silently, so a request
    // carrying two keys would be read as the first one's owner (RFC 9110 §5.3: neither may repeat).
    const raw = ctx.req.rawHeaders;
    for (const name of ['authorization', 'host']) {
      let seen = 0;
      for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name) seen++;
      if (seen > 1) throw errors.validation(`The ${name} header may be sent once`, [{ path: `headers.${name}`, message: 'is repeated' }]);
    }
    // The values Koa's ctx.host reads, as sent (ctx.host itself drops a `user@` part and keeps the rest).
    for (const value of [ctx.get('host'), ctx.app.proxy ? ctx.get('x-forwarded-host') : '']) {
      const host = value.split(',', 1)[0]!.trim();
      const port = /:(\d+)$/.exec(host)?.[1];
      if (value !== '' && (host.length > 255 || !HOST.test(host) || (port !== undefined && Number(port) > 65535))) {
        throw errors.validation('The Host header is not a host name or address', [{ path: 'headers.host', message: 'is not a valid host' }]);
      }
    }
    if (NUL.test(path) || NUL.test(querystring)) {
      throw errors.validation('NUL bytes are not allowed in a request', [{ path: NUL.test(path) ? 'path' : 'query', message: 'contains a NUL byte' }]);
    }
    if (!readable(path) || !readable(querystring.replace(/\+/g, ' '))) {
      throw errors.validation('Malformed percent-encoding in the request', [
        { path: readable(path) ? 'query' : 'path', message: 'is not valid percent-encoding' },
      ]);
    }
    return next();
  };
}

/**
 * A lone UTF-16 surrogate (JSON's `"\ud800"`): UTF-8 cannot encode it, so Postgres would store text as U+FFFD (a silent
 * change) and refuse it in jsonb.
 */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function stringProblem(s: string): string | undefined {
  if (s.includes('\u0000')) return 'a NUL character';
  if (LONE_SURROGATE.test(s)) return 'a lone surrogate (not valid Unicode)';
  return undefined;
}

/**
 * The first place in a parsed JSON value that holds a NUL character or a lone surrogate, or nests deeper than
 * maxDepth, if any.
 */
export function findUnsafeJson(value: unknown, maxDepth: number, at = 'body', depth = 0): { path: string; message: string } | undefined {
  if (depth > maxDepth) return { path: at, message: `nests deeper than ${maxDepth} levels` };
  if (typeof value === 'string') {
    const problem = stringProblem(value);
    return problem ? { path: at, message: `contains ${problem}` } : undefined;
  }
  if (value === null || typeof value !== 'object') return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnsafeJson(value[i], maxDepth, `${at}.${i}`, depth + 1);
      if (found) return found;
    }
    return undefined;
  }
  for (const [k, v] of Object.entries(value)) {
    const keyProblem = stringProblem(k);
    if (keyProblem) return { path: at, message: `has a key with ${keyProblem}` };
    const found = findUnsafeJson(v, maxDepth, `${at}.${k}`, depth + 1);
    if (found) return found;
  }
  return undefined;
}

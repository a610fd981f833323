/**
 * Requests sent byte for byte: `fetch` normalises paths (dot segments, some escapes), which would hide exactly the
 * tricks the adversarial suite tries. Also sends a client address through X-Forwarded-For when asked.
 */
import http from 'node:http';

export interface RawResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  body: any;
}

export function rawRequest(
  baseUrl: string,
  method: string,
  rawPath: string,
  opts: { headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<RawResponse> {
  const u = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        method,
        path: rawPath,
        headers: { ...(opts.body !== undefined ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
      },
    );
    req.on('error', reject);
    if (opts.body !== undefined) req.write(opts.body);
    req.end();
  });
}

/** The spellings of one path that a router, a proxy or a middleware might read differently. */
export function pathTricks(p: string): string[] {
  const segs = p.split('/').filter(Boolean); // e.g. ['api', 'admin', 'users']
  const last = segs.length - 1;
  const enc = (s: string) => [...s].map((c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`).join('');
  const join = (parts: string[]) => `/${parts.join('/')}`;
  return [
    p.toUpperCase(),
    join(segs.map((s) => s[0].toUpperCase() + s.slice(1))),
    join([segs[0].toUpperCase(), ...segs.slice(1)]),
    `${p}/`,
    `/${p}`,
    join(segs).replace(`/${segs[1]}/`, `/${segs[1]}//`),
    join([segs[0], `%${segs[1].charCodeAt(0).toString(16)}${segs[1].slice(1)}`, ...segs.slice(2)]),
    join([...segs.slice(0, last), enc(segs[last])]),
    join([segs[0], '.', ...segs.slice(1)]),
    join([segs[0], 'x', '..', ...segs.slice(1)]),
    join([segs[0], '%2e', ...segs.slice(1)]),
    join([segs[0], 'x', '%2e%2e', ...segs.slice(1)]),
    `/${segs[0]}%2f${segs.slice(1).join('%2f')}`,
    `/${segs[0]}%2F${segs.slice(1).join('/')}`,
    `${p}%00`,
    `${p};x=1`,
    `${p}%20`,
    `${p}\\`,
    `/${segs.join('\\')}`,
  ];
}

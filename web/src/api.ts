/**
 * The web app's only way to the service: the public JSON API, same origin, with the session cookie. Writes carry the
 * session's CSRF token (X-CSRF-Token). Errors of either contract shape become ApiError.
 *
 * Every API call spends the caller's per-minute budget (60 for a free user), so GETs are shared: a GET already in
 * flight is joined, and an answer is reused for GET_TTL_MS. Any write empties the cache (what it changed is read
 * again), and so does `forget()` (a page's explicit reload).
 */
let csrfToken: string | undefined;

export function setCsrfToken(token: string | undefined): void {
  csrfToken = token;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: { path: string; message: string }[] = [],
    /** Seconds to wait before asking again (429: from Retry-After). */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** How long a GET's answer is reused: long enough for a person clicking back and forth, short enough to stay fresh. */
export const GET_TTL_MS = 30_000;
const cache = new Map<string, { at: number; value: Promise<unknown>; settled?: boolean }>();

/** Forgets every cached answer. */
export function forget(): void {
  cache.clear();
}

type LimitListener = (until: number) => void;
const limitListeners = new Set<LimitListener>();

/** Called with the time (ms epoch) until which the service refuses this caller (a 429 with Retry-After). */
export function onRateLimited(fn: LimitListener): () => void {
  limitListeners.add(fn);
  return () => limitListeners.delete(fn);
}

/** What a refused call (429) means for a person: what happened and when to try again. */
export function rateLimitMessage(retryAfter: number | undefined): string {
  const seconds = Math.max(1, retryAfter ?? 60);
  const at = new Date(Date.now() + seconds * 1000).toLocaleTimeString();
  return `Too many requests: your account's limit of API calls per minute is used up, so the service is refusing new ones for now. Nothing was lost and you are still signed in. Try again in ${seconds} seconds (at ${at}).`;
}

function refusal(res: Response, code: string, message: string, details?: { path: string; message: string }[]): ApiError {
  if (res.status !== 429 || code !== 'RATE_LIMITED' || !res.headers.has('retry-after')) return new ApiError(res.status, code, message, details);
  const retryAfter = Number(res.headers.get('retry-after')) || 60;
  for (const fn of limitListeners) fn(Date.now() + retryAfter * 1000);
  return new ApiError(429, code, rateLimitMessage(retryAfter), details, retryAfter);
}

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  if (method !== 'GET') {
    forget();
    return request<T>(method, path, body);
  }
  const hit = cache.get(path);
  if (hit && Date.now() - hit.at < GET_TTL_MS) return hit.value as Promise<T>;
  const value = request<T>(method, path);
  const entry: { at: number; value: Promise<unknown>; settled?: boolean } = { at: Date.now(), value };
  cache.set(path, entry);
  // A failure is not kept: the next visit asks again.
  value.then(
    () => {
      entry.settled = true;
    },
    () => {
      if (cache.get(path) === entry) cache.delete(path);
    },
  );
  return value;
}

/** A poll: asks the service again rather than reuse a kept answer, but joins the same GET when it is in flight. */
export function getFresh<T = any>(path: string): Promise<T> {
  if (cache.get(path)?.settled) cache.delete(path);
  return api<T>('GET', path);
}

/**
 * A GET with the operator's admin token instead of the session (the operator's page): never cached, never counted
 * against a user's budget (the admin token is not rate limited).
 */
export function getAsAdmin<T = any>(path: string, token: string): Promise<T> {
  return request<T>('GET', path, undefined, { authorization: `Bearer ${token}` });
}

async function request<T>(method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...extra };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  // With a token of its own, the request does not also carry the session cookie.
  const credentials = extra.authorization ? 'omit' : 'same-origin';
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    throw new ApiError(res.status, 'INTERNAL', `Unexpected response (${res.status})`);
  }
  if (!res.ok || json.success === false) {
    const e = json.error;
    if (e && typeof e === 'object') throw refusal(res, e.code, e.message, e.details);
    throw refusal(res, String(e ?? res.status), json.message ?? `Request failed (${res.status})`);
  }
  return json as T;
}

export const get = <T = any>(path: string) => api<T>('GET', path);
export const post = <T = any>(path: string, body: unknown = {}) => api<T>('POST', path, body);
export const patch = <T = any>(path: string, body: unknown) => api<T>('PATCH', path, body);
export const del = <T = any>(path: string) => api<T>('DELETE', path);

/** `?a=1&b=2` from the defined entries. */
export function qs(params: Record<string, string | number | boolean | undefined | null>): string {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') p.set(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** A tool slug (`pkg/tool`, `@scope/pkg/tool`) as a path, each segment escaped. */
export const slugPath = (slug: string) => slug.split('/').map(encodeURIComponent).join('/');

export interface StreamHandlers {
  [event: string]: (data: any) => void;
}

/** Follows a server-sent event stream until `done` (or an error); returns a function that closes it. */
export function stream(path: string, handlers: StreamHandlers): () => void {
  const source = new EventSource(path);
  for (const [event, fn] of Object.entries(handlers)) {
    source.addEventListener(event, (e) => {
      const data = JSON.parse((e as MessageEvent).data);
      fn(data);
      if (event === 'done') source.close();
    });
  }
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) handlers.failed?.({ message: 'The event stream closed' });
  };
  return () => source.close();
}

/**
 * POSTs JSON and follows the server-sent events of the response as they arrive (EventSource cannot POST): each
 * event's JSON goes to its handler; a refusal before the stream (4xx JSON) throws ApiError. Resolves at the end.
 */
export async function postStream(path: string, body: unknown, handlers: StreamHandlers, signal?: AbortSignal): Promise<void> {
  const headers: Record<string, string> = { accept: 'text/event-stream', 'content-type': 'application/json' };
  if (csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, { method: 'POST', headers, body: JSON.stringify(body), credentials: 'same-origin', signal });
  forget();
  if (!res.headers.get('content-type')?.startsWith('text/event-stream') || !res.body) {
    const json = await res.json().catch(() => ({}));
    const e = json.error;
    throw refusal(res, e?.code ?? String(res.status), e?.message ?? json.message ?? `Request failed (${res.status})`, e?.details);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value.replace(/\r\n/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length) handlers[event]?.(JSON.parse(data.join('\n')));
    }
  }
}

/**
 * The web app's only way to the service: the public JSON API, same origin, with the session cookie. Writes carry the
 * session's CSRF token (X-CSRF-Token). Errors of either contract shape become ApiError.
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
  ) {
    super(message);
  }
}

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken) headers['x-csrf-token'] = csrfToken;
  const res = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : {};
  } catch {
    throw new ApiError(res.status, 'INTERNAL', `Unexpected response (${res.status})`);
  }
  if (!res.ok || json.success === false) {
    const e = json.error;
    if (e && typeof e === 'object') throw new ApiError(res.status, e.code, e.message, e.details);
    throw new ApiError(res.status, String(e ?? res.status), json.message ?? `Request failed (${res.status})`);
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
  if (!res.headers.get('content-type')?.startsWith('text/event-stream') || !res.body) {
    const json = await res.json().catch(() => ({}));
    const e = json.error;
    throw new ApiError(res.status, e?.code ?? String(res.status), e?.message ?? json.message ?? `Request failed (${res.status})`, e?.details);
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

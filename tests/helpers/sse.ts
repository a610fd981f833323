/**
 * Reads a server-sent-events response to its end (the server closes streams after `done`), with a time limit, and
 * parses it into events. For the scenario-run, batch and agent streams.
 */
export interface SseEvent {
  id?: number;
  event: string;
  data: any;
}

export interface SseResult {
  status: number;
  contentType: string | null;
  events: SseEvent[];
  /** The raw text, to check that nothing (an env value, say) appears anywhere in it. */
  text: string;
  json?: any;
}

export function parseSse(text: string): SseEvent[] {
  const events: SseEvent[] = [];
  for (const block of text.split('\n\n')) {
    let id: number | undefined;
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('id: ')) id = Number(line.slice(4));
      else if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    if (data.length) events.push({ id, event, data: JSON.parse(data.join('\n')) });
  }
  return events;
}

export async function readSse(url: string, init: RequestInit & { timeoutMs?: number } = {}): Promise<SseResult> {
  const res = await fetch(url, { ...init, signal: AbortSignal.timeout(init.timeoutMs ?? 60_000) });
  const text = await res.text();
  const contentType = res.headers.get('content-type');
  if (!contentType?.startsWith('text/event-stream')) return { status: res.status, contentType, events: [], text, json: JSON.parse(text) };
  return { status: res.status, contentType, events: parseSse(text), text };
}

export function postJson(key: string | undefined, body: unknown, headers: Record<string, string> = {}): RequestInit {
  return {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(key ? { authorization: `Bearer ${key}` } : {}), ...headers },
    body: JSON.stringify(body),
  };
}

export interface LiveSse {
  status: number;
  headers: Headers;
  /** The events read so far. */
  events: SseEvent[];
  /** Reads until at least `count` events have arrived or the stream has ended; returns the events so far. */
  read(count: number): Promise<SseEvent[]>;
  /** The client goes away (mid-stream). */
  abort(): void;
}

/** Opens a stream and reads it as it comes, so that a test can leave (or reconnect) mid-stream. */
export async function openLiveSse(url: string, init: RequestInit & { timeoutMs?: number } = {}): Promise<LiveSse> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), init.timeoutMs ?? 60_000);
  const res = await fetch(url, { ...init, signal: controller.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  const events: SseEvent[] = [];
  let buffer = '';
  let ended = false;
  return {
    status: res.status,
    headers: res.headers,
    events,
    async read(count) {
      while (events.length < count && !ended) {
        const { value, done } = await reader.read();
        if (done) ended = true;
        else buffer += decoder.decode(value, { stream: true });
        const cut = buffer.lastIndexOf('\n\n');
        if (cut >= 0) {
          events.push(...parseSse(buffer.slice(0, cut)));
          buffer = buffer.slice(cut + 2);
        }
      }
      return events;
    },
    abort() {
      clearTimeout(timer);
      controller.abort();
    },
  };
}

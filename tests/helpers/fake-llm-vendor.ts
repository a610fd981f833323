/**
 * A stand-in for an OpenAI-compatible vendor: a local HTTP server that speaks the real wire protocol of
 * `POST /v1/chat/completions` (JSON, or SSE chunks when `stream: true`, tool-call argument deltas included) and
 * `POST /v1/embeddings`, answering from queues of scripted replies and recording every request it receives. It stands
 * in for the vendor and nothing else: the provider under test runs unmodified on the real AI SDK.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

export interface ScriptedToolCall {
  id?: string;
  name: string;
  /** The arguments as the model writes them: a JSON string, or a value to stringify. */
  arguments: string | Record<string, unknown>;
  /** When streaming, send the arguments in this many pieces (default 3). */
  pieces?: number;
}

export interface ScriptedError {
  status: number;
  message: string;
  /**
   * Sent as `retry-after-ms` (as OpenAI-compatible vendors do when they are overloaded): the AI SDK then retries after
   * that long instead of its own backoff (2 s, then 4 s). For a test of what a failure shows, not of the backoff.
   */
  retryAfterMs?: number;
}

/** `delayMs`: answer only after this long, like a slow model (the request is recorded when it arrives). */
export type ChatReply = (
  | { text: string; chunks?: string[]; usage?: ScriptedUsage }
  | { toolCalls: ScriptedToolCall[]; text?: string; usage?: ScriptedUsage }
  | { error: ScriptedError }
) & { delayMs?: number };

export type EmbeddingsReply = { vectors: number[][]; usage?: { prompt_tokens: number } } | { error: ScriptedError };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: any;
}

export interface FakeLlmVendor {
  /** e.g. http://127.0.0.1:40123/v1, to use as LLM_BASE_URL. */
  baseUrl: string;
  chat: ChatReply[];
  /** Answers a chat request when `chat` is empty (a reply that depends on the request, for runs in parallel). */
  respond?: (body: any) => ChatReply | undefined;
  embeddings: EmbeddingsReply[];
  requests: RecordedRequest[];
  chatRequests(): RecordedRequest[];
  close(): Promise<void>;
}

const DEFAULT_USAGE: ScriptedUsage = { prompt_tokens: 10, completion_tokens: 5 };

function usageJson(u: ScriptedUsage = DEFAULT_USAGE) {
  return { ...u, total_tokens: u.prompt_tokens + u.completion_tokens };
}

function splitPieces(s: string, n: number): string[] {
  const size = Math.max(1, Math.ceil(s.length / n));
  const out: string[] = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out.length ? out : [''];
}

function sendError(res: http.ServerResponse, e: ScriptedError): void {
  res.writeHead(e.status, { 'content-type': 'application/json', ...(e.retryAfterMs !== undefined ? { 'retry-after-ms': String(e.retryAfterMs) } : {}) });
  res.end(JSON.stringify({ error: { message: e.message, type: 'invalid_request_error', param: null, code: null } }));
}

function argsOf(call: ScriptedToolCall): string {
  return typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
}

function chatJson(reply: Exclude<ChatReply, { error: ScriptedError }>, model: string) {
  const calls = 'toolCalls' in reply ? reply.toolCalls : [];
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text ?? null,
          ...(calls.length
            ? {
                tool_calls: calls.map((c, i) => ({
                  id: c.id ?? `call_${i}`,
                  type: 'function',
                  function: { name: c.name, arguments: argsOf(c) },
                })),
              }
            : {}),
        },
        finish_reason: calls.length ? 'tool_calls' : 'stop',
      },
    ],
    usage: usageJson(reply.usage),
  };
}

function streamChat(res: http.ServerResponse, reply: Exclude<ChatReply, { error: ScriptedError }>, body: any): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const base = { id: 'chatcmpl-fake', object: 'chat.completion.chunk', created: Math.floor(Date.now() / 1000), model: body.model };
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) => res.write(`data: ${JSON.stringify({ ...base, choices, ...extra })}\n\n`);
  send([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
  if (reply.text) {
    const chunks = 'chunks' in reply && reply.chunks ? reply.chunks : (reply.text.match(/\S+\s*/g) ?? [reply.text]);
    for (const c of chunks) send([{ index: 0, delta: { content: c }, finish_reason: null }]);
  }
  const calls = 'toolCalls' in reply ? reply.toolCalls : [];
  calls.forEach((call, index) => {
    const pieces = splitPieces(argsOf(call), call.pieces ?? 3);
    const id = call.id ?? `call_${index}`;
    send([{ index: 0, delta: { tool_calls: [{ index, id, type: 'function', function: { name: call.name, arguments: '' } }] }, finish_reason: null }]);
    for (const p of pieces) send([{ index: 0, delta: { tool_calls: [{ index, function: { arguments: p } }] }, finish_reason: null }]);
  });
  send([{ index: 0, delta: {}, finish_reason: calls.length ? 'tool_calls' : 'stop' }]);
  if (body.stream_options?.include_usage) send([], { usage: usageJson(reply.usage) });
  res.end('data: [DONE]\n\n');
}

export async function startFakeLlmVendor(): Promise<FakeLlmVendor> {
  const vendor = {
    chat: [] as ChatReply[],
    embeddings: [] as EmbeddingsReply[],
    requests: [] as RecordedRequest[],
  };
  const server = http.createServer((req, res) => {
    let raw = '';
    req.on('data', (d) => (raw += d));
    req.on('end', () => {
      let body: any = null;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        return sendError(res, { status: 400, message: 'body is not JSON' });
      }
      vendor.requests.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      if (req.method === 'POST' && req.url === '/v1/chat/completions') {
        const reply = vendor.chat.shift() ?? result.respond?.(body);
        if (!reply) return sendError(res, { status: 500, message: 'fake vendor: no scripted chat reply left' });
        const answer = () => {
          if (res.destroyed) return;
          if ('error' in reply) return sendError(res, reply.error);
          if (body?.stream) return streamChat(res, reply, body);
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(chatJson(reply, body?.model)));
        };
        if (reply.delayMs) return void setTimeout(answer, reply.delayMs).unref();
        return answer();
      }
      if (req.method === 'POST' && req.url === '/v1/embeddings') {
        const reply = vendor.embeddings.shift();
        if (!reply) return sendError(res, { status: 500, message: 'fake vendor: no scripted embeddings left' });
        if ('error' in reply) return sendError(res, reply.error);
        res.writeHead(200, { 'content-type': 'application/json' });
        return res.end(
          JSON.stringify({
            object: 'list',
            data: reply.vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
            model: body?.model,
            usage: { prompt_tokens: reply.usage?.prompt_tokens ?? 4, total_tokens: reply.usage?.prompt_tokens ?? 4 },
          }),
        );
      }
      sendError(res, { status: 404, message: `fake vendor: no route ${req.method} ${req.url}` });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const result: FakeLlmVendor = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    chat: vendor.chat,
    embeddings: vendor.embeddings,
    requests: vendor.requests,
    chatRequests: () => vendor.requests.filter((r) => r.path === '/v1/chat/completions'),
    // Idempotent: a test may close the vendor early to make its port a closed one.
    close: () =>
      new Promise<void>((resolve, reject) => {
        if (!server.listening) return resolve();
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
  return result;
}

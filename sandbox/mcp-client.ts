/**
 * The host side of an MCP server running in a sandbox: the official MCP client (@modelcontextprotocol/sdk `Client`)
 * over the sandbox's stdio (a GuestPipe, see guest/mcp-pipe.cjs). `listServerTools` runs `initialize` and `tools/list`
 * (following `nextCursor`); `callServerTool` runs `initialize` and one `tools/call`. Both hold the server to the
 * limits below and end with a closed outcome (types.ts), never an exception: a server that never answers, floods its
 * stdout, lists too much, sends requests of its own, or exits is a clear error.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { stripVTControlCharacters } from 'node:util';
import { z } from 'zod';
import { ReadBuffer, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { lastLines, redact, type ExitEnd, type GuestPipe } from './guest-channel.js';
import type { DescribedTool, DescribeOutcome, ExecuteOutcome } from './types.js';
import { isPlainObject } from '../core/text/plain-object.js';
import {
  cleanIcons,
  cleanPrompts,
  cleanResources,
  cleanResourceTemplates,
  MCP_OFFER_LIMITS,
  type McpOffer,
  type McpServerOp,
} from '../core/packages/mcp-offer.js';
import { progressOf, type Progress } from '../core/executions/progress.js';
import { lazySchemaValidator } from '../core/infra/mcp-schema-validator.js';

/** What an MCP server may send and list. A real server lists 118 tools with ~300 KB of schemas: these fit it. */
export const MCP_LIMITS = {
  /** Tools one server may list (over all pages). */
  maxTools: 1000,
  /** Pages of tools/list followed. */
  maxPages: 100,
  /** One JSON-RPC message (one line of stdout). */
  maxMessageBytes: 4 * 1024 * 1024,
  /** Everything the server writes to stdout in one session. */
  maxStdoutBytes: 16 * 1024 * 1024,
  /** Messages (responses, notifications, requests) the server may send in one session. */
  maxMessages: 5000,
  /** Lines of stdout that are not JSON-RPC (log lines printed to stdout by mistake). */
  maxGarbageLines: 200,
  /** A tool's input or output schema, as JSON. */
  maxSchemaBytes: 256 * 1024,
  /** A tool's description (longer ones are cut). */
  maxDescriptionChars: 10_000,
  /** A tool's name (MCP allows 1–128 characters). */
  maxNameChars: 128,
  /** A tool's result (as JSON), as for every tool. */
  maxOutputBytes: 1024 * 1024,
};

const CLIENT_INFO = { name: 'toolshed', version: '0.1.0' };
/** How much of what a server printed instead of MCP is kept for its error. */
const HEAD_CHARS = 2048;

/** A tool as an MCP server lists it, with what the registry keeps of it. */
export interface McpTool extends DescribedTool {
  title?: string;
  annotations?: Record<string, unknown>;
  /** Its icons as we serve them (core/packages/mcp-offer.ts cleanIcons). */
  icons?: McpOffer['icons'];
}

/** Why the session was cut short by us (a limit), if it was. */
class PipeTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  violation: string | undefined;
  private readonly buffer = new ReadBuffer({ maxBufferSize: MCP_LIMITS.maxMessageBytes });
  private bytes = 0;
  private messages = 0;
  private garbage = 0;
  private closed = false;
  /** The start of stdout until the first MCP message (a usage text printed instead of serving). */
  private head = '';
  /** Whether the server ever sent an MCP message (unlike `messages`, a budget, never reset). */
  private spoken = false;

  /** The pipe ended or we closed the transport. */
  get closedByPeer(): boolean {
    return this.closed;
  }

  /** What the server printed before any MCP message, when it sent none (a usage text, a banner). */
  get printedInstead(): string {
    return this.spoken ? '' : this.head;
  }

  /** Whether the server ever sent an MCP message. */
  get hasSpoken(): boolean {
    return this.spoken;
  }

  resetBudgets(): void {
    this.bytes = 0;
    this.messages = 0;
    this.garbage = 0;
  }

  constructor(
    private readonly pipe: GuestPipe,
    private readonly onViolation: (why: string) => void,
    /**
     * Each `notifications/progress`, as it arrives: the SDK's client runs notification handlers a microtask later but
     * handles a response at once, so a server's last progress, read in the same chunk as the result, would reach its
     * `onprogress` after the request is gone (and be dropped); it is taken here, in order, instead.
     */
    private readonly onProgress: (params: Record<string, unknown>) => void = () => undefined,
  ) {}

  async start(): Promise<void> {
    this.pipe.onData((chunk) => this.receive(chunk));
    void this.pipe.exited.then(() => this.close());
  }

  private stop(why: string): void {
    if (this.violation) return;
    this.violation = why;
    this.onViolation(why);
    void this.close();
  }

  private receive(chunk: string): void {
    if (this.violation || this.closed) return;
    const buf = Buffer.from(chunk, 'utf8');
    if (!this.spoken && this.head.length < HEAD_CHARS) this.head = (this.head + chunk).slice(0, HEAD_CHARS);
    this.bytes += buf.length;
    if (this.bytes > MCP_LIMITS.maxStdoutBytes) return this.stop(`the server wrote more than ${MCP_LIMITS.maxStdoutBytes / 1024 / 1024} MiB to stdout`);
    try {
      this.buffer.append(buf);
    } catch {
      return this.stop(`the server sent a message over ${MCP_LIMITS.maxMessageBytes / 1024 / 1024} MiB`);
    }
    for (;;) {
      let message: JSONRPCMessage | null;
      try {
        message = this.buffer.readMessage();
      } catch {
        if (++this.garbage > MCP_LIMITS.maxGarbageLines)
          return this.stop(`the server wrote more than ${MCP_LIMITS.maxGarbageLines} lines of stdout that are not MCP messages`);
        continue;
      }
      if (message === null) break;
      this.spoken = true;
      if (++this.messages > MCP_LIMITS.maxMessages) return this.stop(`the server sent more than ${MCP_LIMITS.maxMessages} messages`);
      if ('method' in message && message.method === 'notifications/progress' && isPlainObject(message.params)) this.onProgress(message.params);
      this.onmessage?.(message);
      if (this.violation || this.closed) return;
    }
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (!this.closed) this.pipe.write(serializeMessage(message));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.buffer.clear();
    this.onclose?.();
  }
}

type Session<T> = { kind: 'ok'; value: T } | { kind: 'failed'; message: string; printed?: string; durationMs?: number };

/** The official client connected to a server (initialize done), for one or more requests (see mcp-warm.ts). */
export interface McpSession {
  readonly client: Client;
  /** What the server printed before any MCP message, when it sent none (see PipeTransport.printedInstead). */
  readonly printed: string;
  readonly pipe: GuestPipe;
  /** The call in progress's sink for the server's progress notifications (one call at a time on a session). */
  progress?: (params: { progress?: unknown; total?: unknown; message?: unknown }) => void;
  /** False once the server exited, broke a limit, or the session was closed: it serves nothing more. */
  readonly open: boolean;
  /** Why a request failed: a limit we enforced, the server's exit (with its last stderr lines), or the client's error. */
  explain(err: unknown): Promise<string>;
  /** Starts the per-request budgets (messages, stdout bytes, garbage lines) anew: a reused session's next call. */
  resetBudgets(): void;
  close(): Promise<void>;
}

/** Connects the official client to the pipe (`initialize`); fails with the reason. */
export async function openSession(pipe: GuestPipe, timeoutMs: number): Promise<McpSession | { failed: string; printed: string }> {
  let violation: string | undefined;
  let exited: ExitEnd | undefined;
  void pipe.exited.then((e) => (exited = e));
  const transport = new PipeTransport(
    pipe,
    (why) => (violation = why),
    (params) => s.progress?.(params),
  );
  // No capabilities: a server's sampling, elicitation or roots request is answered "method not found" by the client.
  const client = new Client(CLIENT_INFO, { capabilities: {}, jsonSchemaValidator: lazySchemaValidator });
  let closed = false;
  const s: McpSession = {
    client,
    pipe,
    get printed() {
      return transport.printedInstead;
    },
    get open() {
      return !closed && !violation && !exited && !transport.closedByPeer;
    },
    async explain(err) {
      // Let an exit that caused the error be seen (its close event comes with the pipe's end).
      await Promise.race([pipe.exited, new Promise((r) => setTimeout(r, 200).unref())]);
      if (violation) return violation;
      const stderr = lastLines(pipe.stderrTail());
      if (exited) {
        // 137 is 128 + SIGKILL, as a wrapper reports its child killed for the sandbox's memory.
        const how = exited.signal ? `signal ${exited.signal}` : exited.code === 137 ? 'code 137: killed, most likely out of memory' : `code ${exited.code}`;
        if (stderr) return `the MCP server exited (${how}): ${stderr}`;
        const printed = firstLines(transport.printedInstead);
        return `the MCP server exited (${how}) without writing anything to stderr${printed ? `; instead of MCP it printed: ${printed}` : ''}`;
      }
      const msg = (err as Error)?.message || String(err);
      return /timed out|RequestTimeout/i.test(msg) ? `the MCP server did not answer in time (${msg})` : msg;
    },
    resetBudgets: () => transport.resetBudgets(),
    async close() {
      closed = true;
      await client.close().catch(() => {});
    },
  };
  try {
    await client.connect(transport, { timeout: timeoutMs, maxTotalTimeout: timeoutMs });
    return s;
  } catch (err) {
    const failed = await s.explain(err);
    await s.close();
    // A usage text may go to stderr (commander's `mcp [command]` with no command: @pipedream/mcp): when stdout held
    // nothing, what a server that exited without speaking MCP wrote there is what it printed instead.
    return { failed, printed: s.printed || (exited && !transport.hasSpoken ? pipe.stderrTail() : '') };
  }
}

/** Connects the official client to the pipe and runs `work`, then closes; fails with the reason. */
async function session<T>(pipe: GuestPipe, timeoutMs: number, work: (client: Client) => Promise<T>): Promise<Session<T>> {
  const s = await openSession(pipe, timeoutMs);
  if ('failed' in s) return { kind: 'failed', message: s.failed, printed: s.printed };
  try {
    return { kind: 'ok', value: await work(s.client) };
  } catch (err) {
    return { kind: 'failed', message: await s.explain(err) };
  } finally {
    await s.close();
  }
}

/** The first lines of a text with words in it, joined with ` | ` (a usage text's head: its synopsis and commands). */
function firstLines(text: string, n = 6): string {
  const said = stripVTControlCharacters(text)
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /\w/.test(l));
  return said.slice(0, n).join(' | ').slice(0, 500);
}

const schemaSize = (s: unknown) => (s === undefined ? 0 : Buffer.byteLength(JSON.stringify(s)));

/** `initialize`, then `tools/list` page by page. */
export async function listServerTools(pipe: GuestPipe, timeoutMs: number): Promise<DescribeOutcome & { tools?: McpTool[] }> {
  const started = performance.now();
  const durationMs = () => Math.round(performance.now() - started);
  let offer: McpOffer | undefined;
  const r = await session(pipe, timeoutMs, async (client) => {
    if (!client.getServerCapabilities()?.tools) throw new ServerProblem('the MCP server offers no tools (no `tools` capability)');
    const tools: McpTool[] = [];
    let cursor: string | undefined;
    for (let page = 0; ; page++) {
      if (page >= MCP_LIMITS.maxPages) throw new ServerProblem(`tools/list has more than ${MCP_LIMITS.maxPages} pages`);
      const res = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, LENIENT_TOOLS_LIST, { timeout: timeoutMs });
      for (const t of res.tools) {
        if (tools.length >= MCP_LIMITS.maxTools) throw new ServerProblem(`the MCP server lists more than ${MCP_LIMITS.maxTools} tools`);
        tools.push(toMcpTool(t));
      }
      if (!res.nextCursor) break;
      cursor = res.nextCursor;
    }
    const names = new Set<string>();
    for (const t of tools) {
      if (names.has(t.exportName)) throw new ServerProblem(`the MCP server lists the tool '${t.exportName}' twice`);
      names.add(t.exportName);
    }
    offer = await listServerOffer(client, tools, Math.max(1, timeoutMs - (performance.now() - started)));
    return tools;
  });
  if (r.kind === 'failed') return { kind: 'load_error', message: r.message, ...(r.printed ? { printed: r.printed } : {}), durationMs: durationMs() };
  return { kind: 'ok', tools: r.value, missing: [], durationMs: durationMs(), ...(offer ? { mcpOffer: offer } : {}) };
}

const LENIENT_PAGE = (key: string) => z.looseObject({ [key]: z.array(z.unknown()), nextCursor: z.string().optional() });

/** Every page of one list (resources/list, resources/templates/list, prompts/list), bounded; what failed is empty. */
async function listAll(client: Client, method: string, key: string, timeoutMs: number): Promise<unknown[]> {
  const items: unknown[] = [];
  let cursor: string | undefined;
  try {
    for (let page = 0; page < MCP_LIMITS.maxPages && items.length < MCP_OFFER_LIMITS.maxItems; page++) {
      const res = (await client.request({ method, params: cursor === undefined ? {} : { cursor } } as never, LENIENT_PAGE(key), {
        timeout: timeoutMs,
      })) as Record<string, unknown> & { nextCursor?: string };
      items.push(...(res[key] as unknown[]));
      if (!res.nextCursor) break;
      cursor = res.nextCursor;
    }
  } catch {
    // A server that lists its tools but fails a list it advertises still has its tools: this list is left out.
  }
  return items.slice(0, MCP_OFFER_LIMITS.maxItems);
}

/**
 * What the server offers besides tools (core/packages/mcp-offer.ts), on the session that listed them: its icons and
 * its tools' (as `serverInfo.icons` and each tool's `icons`), and, where it advertises them, its resources, resource
 * templates and prompts. Each list is optional: one that fails or holds nothing usable is left out.
 */
export async function listServerOffer(client: Client, tools: McpTool[], timeoutMs: number): Promise<McpOffer | undefined> {
  const caps = client.getServerCapabilities() ?? {};
  const offer: McpOffer = {};
  const icons = cleanIcons((client.getServerVersion() as { icons?: unknown } | undefined)?.icons);
  if (icons) offer.icons = icons;
  const toolIcons = Object.fromEntries(tools.flatMap((t) => (t.icons ? [[t.exportName, t.icons]] : [])));
  if (Object.keys(toolIcons).length > 0) offer.toolIcons = toolIcons;
  if (caps.resources) {
    const resources = cleanResources(await listAll(client, 'resources/list', 'resources', timeoutMs));
    if (resources.length > 0) offer.resources = resources;
    const templates = cleanResourceTemplates(await listAll(client, 'resources/templates/list', 'resourceTemplates', timeoutMs));
    if (templates.length > 0) offer.resourceTemplates = templates;
  }
  if (caps.prompts) {
    const prompts = cleanPrompts(await listAll(client, 'prompts/list', 'prompts', timeoutMs));
    if (prompts.length > 0) offer.prompts = prompts;
  }
  return Object.keys(offer).length > 0 ? offer : undefined;
}

class ServerProblem extends Error {}

/**
 * tools/list as servers send it. The SDK's own schema (`client.listTools`) refuses the whole list for one input schema
 * without `type: "object"` with a dump of zod issues; here each tool's schemas are checked by toMcpTool, which names
 * the tool, and a schema that only lacks `type` is taken as the object schema MCP says it is.
 */
const LENIENT_TOOLS_LIST = z.looseObject({
  tools: z.array(
    z.looseObject({
      name: z.string(),
      title: z.string().optional(),
      description: z.string().optional(),
      inputSchema: z.unknown(),
      outputSchema: z.unknown().optional(),
      annotations: z.unknown().optional(),
      icons: z.unknown().optional(),
    }),
  ),
  nextCursor: z.string().optional(),
});

/**
 * A tool's input (or output) schema as recorded: an object schema. One without `type` gets `type: "object"` (what MCP
 * requires it to be; servers built with zod-to-json-schema over a zod it cannot read send only `$schema`); one of
 * another type, or not a JSON object at all, is refused naming the tool.
 */
function objectSchema(tool: string, what: 'input' | 'output', schema: unknown): Record<string, unknown> {
  if (!isPlainObject(schema)) throw new ServerProblem(`the ${what} schema of tool '${tool}' is not a JSON Schema object`);
  if (schema.type === undefined) return { type: 'object', ...schema };
  if (schema.type !== 'object') {
    throw new ServerProblem(`the ${what} schema of tool '${tool}' is of type ${JSON.stringify(schema.type).slice(0, 60)}: MCP tools take and give objects`);
  }
  return schema;
}

function toMcpTool(t: {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  outputSchema?: unknown;
  annotations?: unknown;
  icons?: unknown;
}): McpTool {
  if (t.name.length === 0 || t.name.length > MCP_LIMITS.maxNameChars || !/^[\w.-]+$/.test(t.name)) {
    throw new ServerProblem(`the MCP server lists a tool named '${t.name.slice(0, 140)}': names are 1–128 of A–Z a–z 0–9 _ - .`);
  }
  for (const [what, schema] of [
    ['input', t.inputSchema],
    ['output', t.outputSchema],
  ] as const) {
    if (schemaSize(schema) > MCP_LIMITS.maxSchemaBytes) {
      throw new ServerProblem(`the ${what} schema of tool '${t.name}' is over ${MCP_LIMITS.maxSchemaBytes / 1024} KiB`);
    }
  }
  const description = (t.description ?? t.title ?? '').slice(0, MCP_LIMITS.maxDescriptionChars);
  return {
    exportName: t.name,
    description,
    inputSchema: t.inputSchema === undefined ? { type: 'object' } : objectSchema(t.name, 'input', t.inputSchema),
    ...(t.outputSchema !== undefined && t.outputSchema !== null ? { outputSchema: objectSchema(t.name, 'output', t.outputSchema) } : {}),
    ...(t.title ? { title: t.title } : {}),
    ...(t.annotations && typeof t.annotations === 'object' ? { annotations: t.annotations as Record<string, unknown> } : {}),
    ...(cleanIcons(t.icons) ? { icons: cleanIcons(t.icons) } : {}),
  };
}

/** `initialize`, then one `tools/call`; the outcome as for every tool. */
export async function callServerTool(
  pipe: GuestPipe,
  name: string,
  params: unknown,
  env: Record<string, string>,
  timeoutMs: number,
  o: CallOptions = {},
): Promise<ExecuteOutcome> {
  const started = performance.now();
  const s = await openSession(pipe, timeoutMs);
  if ('failed' in s) return failedCall(s.failed, env, Math.round(performance.now() - started));
  try {
    const remaining = Math.max(1, timeoutMs - (performance.now() - started));
    const r = await callOnSession(s, name, params, env, remaining, o);
    return { ...r, durationMs: Math.round(performance.now() - started) };
  } finally {
    await s.close();
  }
}

/** How one call is made: another request than tools/call, and where its progress goes (types.ts ExecuteRequest). */
export interface CallOptions {
  op?: McpServerOp;
  onProgress?: (p: Progress) => void;
}

/**
 * `resources/read` or `prompts/get` on a connected session: the server's result as it is (its `_meta` left out), as
 * the execution's output; a refusal (an unknown URI or prompt, bad arguments) is the tool's error, with its message.
 */
async function serverRequest(s: McpSession, op: McpServerOp, params: unknown, env: Record<string, string>, timeoutMs: number): Promise<ExecuteOutcome> {
  const started = performance.now();
  const durationMs = () => Math.round(performance.now() - started);
  const p = isPlainObject(params) ? params : {};
  let res: Record<string, unknown>;
  try {
    const options = { timeout: timeoutMs, maxTotalTimeout: timeoutMs };
    res =
      op === 'resources/read'
        ? await s.client.readResource({ uri: String(p.uri ?? '') }, options)
        : await s.client.getPrompt(
            { name: String(p.name ?? ''), ...(isPlainObject(p.arguments) ? { arguments: p.arguments as Record<string, string> } : {}) },
            options,
          );
  } catch (err) {
    return failedCall(await s.explain(err), env, durationMs());
  }
  const { _meta: _, ...output } = res;
  if (schemaSize(output) > MCP_LIMITS.maxOutputBytes) return { kind: 'output_too_large', durationMs: durationMs() };
  return { kind: 'ok', output, durationMs: durationMs() };
}

/** One `tools/call` on a connected session (a warm server's, or one just started); the outcome as for every tool. */
export async function callOnSession(
  s: McpSession,
  name: string,
  params: unknown,
  env: Record<string, string>,
  timeoutMs: number,
  o: CallOptions = {},
): Promise<ExecuteOutcome> {
  s.resetBudgets();
  if (o.op) return serverRequest(s, o.op, params, env, timeoutMs);
  const started = performance.now();
  const durationMs = () => Math.round(performance.now() - started);
  const args = params && typeof params === 'object' && !Array.isArray(params) ? (params as Record<string, unknown>) : {};
  let res: { content?: unknown[]; structuredContent?: unknown; isError?: boolean };
  // Progress is asked of the server (a progressToken) only when the caller asked for it.
  // The client's onprogress only makes it send a progressToken: the notifications are read off the transport, in order
  // with the result (PipeTransport's onProgress).
  const onProgress = o.onProgress;
  const onprogress = onProgress ? () => undefined : undefined;
  s.progress = onProgress
    ? (n) => {
        const p = progressOf(n);
        if (p) onProgress(p);
      }
    : undefined;
  try {
    res = (await s.client.callTool({ name, arguments: args }, undefined, {
      timeout: timeoutMs,
      maxTotalTimeout: timeoutMs,
      ...(onprogress ? { onprogress } : {}),
    })) as typeof res;
  } catch (err) {
    return failedCall(await s.explain(err), env, durationMs());
  } finally {
    s.progress = undefined;
  }
  if (res.isError) return { kind: 'tool_error', message: redact(contentText(res.content) || 'the tool reported an error', env), durationMs: durationMs() };
  const output = res.structuredContent !== undefined ? res.structuredContent : { content: res.content ?? [] };
  if (schemaSize(output) > MCP_LIMITS.maxOutputBytes) return { kind: 'output_too_large', durationMs: durationMs() };
  return { kind: 'ok', output, durationMs: durationMs() };
}

export function failedCall(message: string, env: Record<string, string>, durationMs: number): ExecuteOutcome {
  if (/did not answer in time/.test(message)) return { kind: 'timeout', durationMs };
  // The server's own failure (it exited, broke a limit, answered an error): the tool's, not retried as ours.
  return { kind: 'tool_error', message: redact(message, env), durationMs };
}

/** The text of MCP content blocks (what an error says). */
export function contentText(content: unknown[] | undefined): string {
  return (content ?? [])
    .map((c) => (c && typeof c === 'object' && (c as { type?: unknown }).type === 'text' ? String((c as { text?: unknown }).text ?? '') : ''))
    .filter(Boolean)
    .join('\n')
    .slice(0, 4000);
}

/**
 * Operations as data. Each operation of the HTTP API is declared once — method, path, who may call it, its input
 * schemas, its responses and its error shape — and that one declaration is what the router mounts (input parsed,
 * handler called, output serialised through its schema so that a field not in the schema cannot leak, errors in the
 * declared shape) and what `GET /api/openapi.json` describes. Handlers receive typed input and return a body.
 */
import type Router from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../deps.js';
import { validate } from '../validate.js';
import { requireAdmin, requireCaller } from '../middleware/auth.js';
import { errors } from '../../core/infra/errors.js';

/**
 * Who may call: `public` (no key needed; a key, when given, identifies the caller), `key` (an API key, else 401),
 * `admin` (the operator's ADMIN_TOKEN, else 401). Owner checks beyond that are the handler's own.
 */
export type Auth = 'public' | 'key' | 'admin';

/** A server-sent-events response: its event names and the JSON each event's `data:` carries. */
export interface StreamResponse {
  stream: Record<string, z.ZodType>;
  description: string;
}

/** A response that is not JSON the builder serialises: the handler writes it (the MCP transport, a web page). */
export interface RawResponse {
  raw: { contentType: string; schema?: z.ZodType; description: string };
}

/**
 * One status answered either as JSON or as a stream, as the request asks (execute: a `params` body gets JSON, a
 * `prompt` body gets events). A returned body is serialised through `json`; a stream is written by the handler.
 */
export interface JsonOrStreamResponse {
  json: z.ZodType;
  stream: Record<string, z.ZodType>;
  description: string;
}

export type ResponseSpec = z.ZodType | StreamResponse | RawResponse | JsonOrStreamResponse;

export interface Input<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

/** What a handler returns: the body of its first declared status, or an explicit status and body. */
export type Reply = unknown;
export interface WithStatus {
  readonly [STATUS]: number;
  readonly body: unknown;
}
const STATUS: unique symbol = Symbol('status');

/** Answers with another declared status than the first (`reply(202, body)`). */
export function reply(status: number, body: unknown): WithStatus {
  return { [STATUS]: status, body };
}

/** The handler wrote the response itself (a stream, the MCP transport): nothing is serialised. */
export const HANDLED: unique symbol = Symbol('handled');

type Infer<S> = S extends z.ZodType ? z.output<S> : undefined;

export interface Operation<
  P extends z.ZodType | undefined = z.ZodType | undefined,
  Q extends z.ZodType | undefined = z.ZodType | undefined,
  B extends z.ZodType | undefined = z.ZodType | undefined,
> {
  /** Stable id: `<resource>.<verb>` (the OpenAPI operationId). */
  id: string;
  method: 'get' | 'post' | 'patch' | 'delete';
  /** The router's path (`:id`, `*ref` for a rest that may hold slashes). */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  auth: Auth;
  /**
   * Shape of error bodies: A `{ success, error: { code, message, details? } }`, B `{ success, error, message }`, or
   * `registry`: the MCP Registry's own `{ error }`, which the operation's handler answers itself (authentication and
   * rate limits stay A), or `jsonrpc`: the MCP endpoint, where what is refused before the transport runs because of
   * the request's body or form (400, 413, 415) is a JSON-RPC error with `id: null` (-32700 when the body is not JSON,
   * else -32600), so that an MCP client can read it; authentication, rate limits and an unknown collection stay A.
   */
  errorShape: 'A' | 'B' | 'registry' | 'jsonrpc';
  params?: P;
  query?: Q;
  body?: B;
  /**
   * The body as documented, when the handler validates it itself (a body whose form decides which checks come first):
   * shown in the OpenAPI document, not parsed by the builder. Give `body` or this, not both.
   */
  documentedBody?: z.ZodType;
  /** The handler reads the raw body itself (the MCP transport): no body schema, and no refusal of a body. */
  readsBody?: true;
  /** The query as documented, when the handler reads it itself (answering errors in its own shape). */
  documentedQuery?: z.ZodType;
  /**
   * Whether this operation answers a request its path matched. One that does not passes the request on to the next
   * matching operation (`/api/tools/pkg/reviews` is the tool `reviews` of `pkg`, not the reviews of a tool `pkg`).
   */
  claims?: (ctx: Context) => boolean;
  /** Success responses by status; the lowest status is what a handler's plain return answers (others: `reply(status, body)`). */
  responses: Record<number, ResponseSpec>;
  /** Error statuses this operation can answer (401/429/500 are added for every operation). */
  errors: number[];
  handler: (ctx: Context, deps: AppDeps, input: Input<Infer<P>, Infer<Q>, Infer<B>>) => Promise<Reply | WithStatus | typeof HANDLED>;
}

/** Declares an operation (the generic parameters are inferred from the schemas). */
export function defineOperation<
  P extends z.ZodType | undefined = undefined,
  Q extends z.ZodType | undefined = undefined,
  B extends z.ZodType | undefined = undefined,
>(op: Operation<P, Q, B>): Operation {
  return op as unknown as Operation;
}

export function isStream(r: ResponseSpec): r is StreamResponse {
  return typeof r === 'object' && r !== null && 'stream' in r && !('json' in r) && !(r instanceof z.ZodType);
}
export function isJsonOrStream(r: ResponseSpec): r is JsonOrStreamResponse {
  return typeof r === 'object' && r !== null && 'json' in r && 'stream' in r && !(r instanceof z.ZodType);
}
export function isRaw(r: ResponseSpec): r is RawResponse {
  return typeof r === 'object' && r !== null && 'raw' in r && !(r instanceof z.ZodType);
}

/**
 * Bodies a handler returns again unchanged (`reused()`), with what their schema check gave for each response schema:
 * the same object passes the same check the same way, so a body served again skips the check (search answers).
 */
const checked = new WeakMap<object, Map<z.ZodType, unknown>>();

/**
 * Marks a body that its handler may return again, as the same object, for a later request: the handler promises that
 * neither it nor anything it holds is changed once returned. Its checked output is then kept with it and served again
 * as it is (the response's bytes are those of the first check).
 */
export function reused<T extends object>(body: T): T {
  if (!checked.has(body)) checked.set(body, new Map());
  return body;
}

function serialise(op: Operation, status: number, body: unknown, ctx: Context, deps: AppDeps): unknown {
  const spec = op.responses[status];
  // An operation that answers its own errors (the registry's `{ error }`) replies with a declared error status.
  if (!spec && op.errorShape === 'registry' && op.errors.includes(status)) return body;
  if (!spec || isStream(spec) || isRaw(spec)) throw new Error(`${op.id}: status ${status} is not a declared JSON response`);
  const schema = isJsonOrStream(spec) ? spec.json : spec;
  const kept = typeof body === 'object' && body !== null ? checked.get(body) : undefined;
  if (kept?.has(schema)) return kept.get(schema);
  const parsed = schema.safeParse(body);
  if (parsed.success) {
    kept?.set(schema, parsed.data);
    return parsed.data;
  }
  // Our own output does not match our own contract: a bug. Nothing half-checked goes out.
  deps.logger.error({ reqId: ctx.state.requestId, operation: op.id, issues: parsed.error.issues.slice(0, 5) }, 'response does not match its schema');
  throw errors.internal();
}

/**
 * An operation without a body takes none: a body that is not empty (`null`, an array, `{"x":1}`) is a 400, like an
 * unknown field anywhere else, rather than ignored (a client that thinks it sent options should learn it did not).
 */
function noBody(body: unknown): undefined {
  const empty = body === undefined || (typeof body === 'object' && body !== null && !Array.isArray(body) && Object.keys(body).length === 0);
  if (!empty) throw errors.validation('This operation takes no body', [{ path: 'body', message: 'must be empty: this operation takes no body' }]);
  return undefined;
}

/** Mounts one operation on the router. */
export function mountOperation(router: Router, deps: AppDeps, op: Operation): void {
  const statuses = Object.keys(op.responses).map(Number);
  const first = statuses[0]!;
  router[op.method](op.path, async (ctx: Context, next: () => Promise<unknown>) => {
    if (op.claims && !op.claims(ctx)) return next();
    if (op.auth === 'admin') requireAdmin(ctx);
    else if (op.auth === 'key') requireCaller(ctx);
    const input = {
      params: op.params ? validate(op.params, ctx.params, 'params') : undefined,
      query: op.query ? validate(op.query, ctx.query, 'query') : undefined,
      body: op.body ? validate(op.body, ctx.request.body, 'body') : op.documentedBody || op.readsBody ? undefined : noBody(ctx.request.body),
    } as Input<never, never, never>;
    const out = await op.handler(ctx, deps, input);
    if (out === HANDLED) return;
    const [status, body] = typeof out === 'object' && out !== null && STATUS in out ? [(out as WithStatus)[STATUS], (out as WithStatus).body] : [first, out];
    ctx.status = status;
    ctx.body = serialise(op, status, body, ctx, deps);
  });
}

export function mountOperations(router: Router, deps: AppDeps, ops: readonly Operation[]): void {
  for (const op of ops) mountOperation(router, deps, op);
}

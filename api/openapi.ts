/**
 * `GET /api/openapi.json`: the OpenAPI 3.1 document of the service, generated from the operation declarations
 * (api/operations/) with zod's JSON Schema output — no hand-written document, so it cannot drift from what the
 * routes parse and serialise. Streams are `text/event-stream` responses whose event names and payloads are listed
 * under `x-events`.
 */
import { z } from 'zod';
import { isJsonOrStream, isRaw, isStream, type Operation, type ResponseSpec } from './operations/define.js';

type Json = Record<string, unknown>;

const ERROR_A = z.object({
  success: z.literal(false),
  error: z.object({
    code: z.string().meta({
      description:
        'VALIDATION_ERROR, UNAUTHORIZED, FORBIDDEN, NOT_FOUND, CONFLICT, PAYLOAD_TOO_LARGE, UNSUPPORTED_MEDIA_TYPE, TOOL_UNAVAILABLE, RATE_LIMITED, INTERNAL, SERVICE_UNAVAILABLE, EXECUTION_TIMEOUT, GONE, …',
    }),
    message: z.string(),
    details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  }),
  executionId: z
    .string()
    .optional()
    .meta({ description: 'On a 504 EXECUTION_TIMEOUT (and an execution that failed inside the service): the execution to poll' }),
});
const ERROR_B = z.object({
  success: z.literal(false),
  error: z.string().meta({ description: '`Bad Request`, `Unauthorized`, `Forbidden`, `Not Found`, `Rate Limit Exceeded`, …' }),
  message: z.string(),
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  quotaRemaining: z.number().int().optional().meta({ description: 'On the daily run quota 429: 0' }),
  resetAt: z.string().optional().meta({ description: 'On the daily run quota 429: the next midnight UTC' }),
});

/** The MCP Registry API's own error body. */
const ERROR_REGISTRY = z.object({ error: z.string() });

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid input (`details` names each field)',
  401: 'A valid API key (or admin token) is required',
  403: 'Only the owner may do this; or a write made with the session cookie came without its `X-CSRF-Token`',
  404: 'No such resource (or a private one of someone else)',
  405: 'Method not allowed on this path',
  409: 'Conflict with an existing resource',
  410: 'Past its retention: its params and result (or transcript) were deleted (`GONE`, shape A)',
  413: 'Body, params or result over 1 MiB',
  415: 'Body is not JSON',
  422: 'The tool cannot run (BROKEN, or required env missing)',
  429: 'Rate limited (`Retry-After`); on scenario runs, the daily quota (shape B with `quotaRemaining` and `resetAt`)',
  500: 'Unexpected error (no detail)',
  503: 'The database is briefly unreachable (`Retry-After`); nothing was done',
  504: 'A synchronous execution outlived its wait; poll `executionId`',
};

/**
 * Errors every operation can answer, because the middleware before it can: a path or query that cannot be read one
 * way only (400), a bad or revoked key, a rate limit, the unexpected, a database outage.
 */
const ALWAYS = [400, 401, 429, 500, 503];
/**
 * On methods that may carry a body, the body parser's refusals (over 1 MiB, not JSON), and a write signed in with the
 * session cookie but without its CSRF token (403), all before any handler runs.
 */
const ALWAYS_ON_WRITES = [403, 413, 415];

function schemaOf(s: z.ZodType, io: 'input' | 'output'): Json {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(s, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as Json;
  return rest;
}

/** `/api/tools/:id` → `/api/tools/{id}`; `*ref` (a rest that may hold slashes) → `{ref}`. */
export function openApiPath(koaPath: string): string {
  return koaPath.replace(/[:*]([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function parameters(op: Operation): Json[] {
  const out: Json[] = [];
  const add = (where: 'path' | 'query', s: z.ZodType | undefined) => {
    if (!s) return;
    const json = schemaOf(s, 'input');
    const props = (json.properties ?? {}) as Record<string, Json>;
    const required = new Set((json.required ?? []) as string[]);
    for (const [name, schema] of Object.entries(props)) {
      const { description, ...rest } = schema;
      out.push({
        name,
        in: where,
        required: where === 'path' || required.has(name),
        ...(description ? { description } : {}),
        schema: rest,
        ...(where === 'path' && op.path.includes(`*${name}`) ? { 'x-allow-slashes': true } : {}),
      });
    }
  };
  add('path', op.params);
  add('query', op.query ?? op.documentedQuery);
  return out;
}

function eventStream(stream: Record<string, z.ZodType>): Json {
  const events = Object.fromEntries(Object.entries(stream).map(([name, s]) => [name, schemaOf(s, 'output')]));
  return {
    schema: {
      type: 'string',
      description: `Server-sent events, each with an \`id:\`; resume with \`Last-Event-ID\`. Events: ${Object.keys(events).join(', ')}`,
    },
    'x-events': events,
  };
}

function responseObject(status: number, spec: ResponseSpec): Json {
  if (isJsonOrStream(spec)) {
    return {
      description: spec.description,
      content: { 'application/json': { schema: schemaOf(spec.json, 'output') }, 'text/event-stream': eventStream(spec.stream) },
    };
  }
  if (isStream(spec)) return { description: spec.description, content: { 'text/event-stream': eventStream(spec.stream) } };
  if (isRaw(spec)) {
    return {
      description: spec.raw.description,
      content: { [spec.raw.contentType]: { schema: spec.raw.schema ? schemaOf(spec.raw.schema, 'output') : {} } },
    };
  }
  return {
    description: status === 201 ? 'Created' : status === 202 ? 'Accepted' : 'OK',
    content: { 'application/json': { schema: schemaOf(spec, 'output') } },
  };
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** Shape A everywhere; shape B on scenario operations, except authentication and rate limits (always A). */
function errorSchema(op: Operation, status: number): Json {
  // jsonrpc (MCP): its JSON-RPC refusals are declared as the operation's own responses; the rest are A.
  if (op.errorShape === 'A' || op.errorShape === 'jsonrpc') return ref('ErrorA');
  if (op.errorShape === 'registry') return op.errors.includes(status) ? ref('ErrorRegistry') : ref('ErrorA');
  const either = { oneOf: [ref('ErrorA'), ref('ErrorB')] };
  // A missing key is the operation's own 401 (B); an unknown or revoked key is authentication's (A).
  if (status === 401) return either;
  // The per-key rate limit (A) or, where declared, the daily run quota (B).
  if (status === 429) return op.errors.includes(429) ? either : ref('ErrorA');
  // Past its retention: GONE is shape A everywhere (the contract's Retention).
  if (status === 410) return ref('ErrorA');
  // On a write: the owner check (B), or a cookie session's write without its CSRF token (authentication's, A).
  if (status === 403 && op.method !== 'get') return either;
  return ref('ErrorB');
}

function security(op: Operation): Json[] | undefined {
  if (op.auth === 'admin') return [{ adminToken: [] }];
  if (op.auth === 'key') return [{ apiKey: [] }];
  return [{}, { apiKey: [] }];
}

export interface OpenApiInfo {
  version: string;
  serverUrl?: string;
}

/** The whole document for the given operations. */
export function buildOpenApi(ops: readonly Operation[], info: OpenApiInfo): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const op of ops) {
    const path = openApiPath(op.path);
    const errorStatuses = [...new Set([...op.errors, ...ALWAYS, ...(op.method === 'get' ? [] : ALWAYS_ON_WRITES)])].sort((a, b) => a - b);
    const responses: Record<string, Json> = {};
    for (const [status, spec] of Object.entries(op.responses)) responses[status] = responseObject(Number(status), spec);
    for (const status of errorStatuses) {
      const declared = responses[String(status)] as { content: Record<string, { schema: Json }> } | undefined;
      if (declared) {
        // A status that is also an answer of its own (health's 503): either body, told apart by `error`.
        const json = declared.content['application/json'];
        if (json) json.schema = { anyOf: [json.schema, errorSchema(op, status)] };
        continue;
      }
      responses[String(status)] = {
        description: STATUS_TEXT[status] ?? 'Error',
        content: { 'application/json': { schema: errorSchema(op, status) } },
      };
    }
    const bodySchema = op.body ?? op.documentedBody;
    const body = bodySchema
      ? { requestBody: { required: op.method !== 'delete', content: { 'application/json': { schema: schemaOf(bodySchema, 'input') } } } }
      : {};
    (paths[path] ??= {})[op.method] = {
      operationId: op.id,
      summary: op.summary,
      ...(op.description ? { description: op.description } : {}),
      tags: [op.tag],
      security: security(op),
      parameters: parameters(op),
      ...body,
      responses,
      'x-error-shape': op.errorShape,
    };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Toolshed',
      version: info.version,
      description:
        'A self-hostable registry of executable tools for AI agents: search, ratings, health, sandboxed execution, collections served as MCP endpoints, and scenarios judged by an evaluator. Every response carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset, always as integers (an unlimited caller: 2147483647 as limit and remaining).',
    },
    ...(info.serverUrl ? { servers: [{ url: info.serverUrl }] } : {}),
    tags: [...new Set(ops.map((o) => o.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: 'An API key: `tsk_` followed by 40 base62 characters' },
        adminToken: { type: 'http', scheme: 'bearer', description: "The operator's ADMIN_TOKEN" },
      },
      schemas: { ErrorA: schemaOf(ERROR_A, 'output'), ErrorB: schemaOf(ERROR_B, 'output'), ErrorRegistry: schemaOf(ERROR_REGISTRY, 'output') },
    },
  };
}
